package tensortest

import (
	"testing"

	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
)

// The generator's cost a value: the AVX2 fill (where the machine has it),
// the scalar fill, and the scalar uniform one counter at a time.
func BenchmarkUniformFill(b *testing.B) {
	s := elem.NewRandStream(1, 0)
	d := make([]float64, chunk.ExprBlock)
	for _, c := range []struct {
		name string
		wide bool
	}{{"wide", true}, {"scalar", false}} {
		b.Run(c.name, func(b *testing.B) {
			if c.wide && !expr.UseAVX2 {
				b.Skip("no AVX2")
			}
			saved := expr.UseAVX2
			expr.UseAVX2 = c.wide
			defer func() { expr.UseAVX2 = saved }()
			b.SetBytes(int64(8 * len(d)))
			cpu0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				expr.UniformFill(d, s, uint64(i*len(d)))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(d)), "ns/value")
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*len(d)), "cpu-ns/value")
		})
	}
	b.Run("uniform", func(b *testing.B) {
		var sum float64
		for i := 0; b.Loop(); i++ {
			for j := range d {
				sum += s.Uniform(uint64(i*len(d) + j))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(d)), "ns/value")
		_ = sum
	})
}
