package plan

import (
	"runtime"
	"testing"

	"marsfs/tensor/fuse"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// BenchmarkPrepareMillion prepares a graph of about a million chunk
// operands from its spec: parse, tile, fuse (both fusions), order and assign
// on two workers. It reports the operands prepared and the bytes allocated an
// operand (the graph's own memory included).
func BenchmarkPrepareMillion(b *testing.B) {
	const text = "x = rand(1000000, chunks=1, seed=1)\ny = (exp(x) + 1).sum()\n"
	ws := []Worker{{"w1", 2}, {"w2", 2}}
	var ops int
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	for i := 0; i < b.N; i++ {
		g, err := lang.Parse(text, nil)
		if err != nil {
			b.Fatal(err)
		}
		cg, err := tile.Graph(g, nil)
		if err != nil {
			b.Fatal(err)
		}
		cg = fuse.Optimize(cg, fuse.Options{Fuse: true, FuseExpr: true})
		Prepare(cg, ws, nil)
		ops = len(cg.Ops)
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ops), "operands")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/float64(ops), "B/operand")
}
