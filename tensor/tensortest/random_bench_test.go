package tensortest

import (
	"testing"

	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
)

// The generator's cost a value: the AVX-512 and AVX2 fills (where the
// machine has them), the scalar fill, and the scalar uniform one counter at
// a time. "block" fills are a 1000 x 1000 block row by row, as a matmul
// draws one (8 MB, past L2); the others one expr block (32 KiB) again and
// again.
func BenchmarkUniformFill(b *testing.B) {
	s := elem.NewRandStream(1, 0)
	for _, c := range []struct {
		name         string
		avx2, avx512 bool
	}{{"avx512", true, true}, {"avx2", true, false}, {"scalar", false, false}} {
		for _, size := range []struct {
			name       string
			rows, cols int
		}{{"", 1, chunk.ExprBlock}, {"/block", 1000, 1000}} {
			b.Run(c.name+size.name, func(b *testing.B) {
				if c.avx512 && !expr.UseAVX512 || c.avx2 && !expr.UseAVX2 {
					b.Skip("not on this CPU")
				}
				avx2, avx512 := expr.UseAVX2, expr.UseAVX512
				expr.UseAVX2, expr.UseAVX512 = c.avx2, c.avx512
				defer func() { expr.UseAVX2, expr.UseAVX512 = avx2, avx512 }()
				n := size.rows * size.cols
				d := make([]float64, n)
				b.SetBytes(int64(8 * n))
				cpu0 := cpuTime()
				for i := 0; b.Loop(); i++ {
					for r := range size.rows {
						expr.UniformFill(d[r*size.cols:][:size.cols], s, uint64(i*n+r*size.cols))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/value")
				// CPU time is steadier than wall time on a shared machine.
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*n), "cpu-ns/value")
			})
		}
	}
	b.Run("uniform", func(b *testing.B) {
		d := make([]float64, chunk.ExprBlock)
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
