package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkMatmulKernel times one block product of two n x n float64
// chunks, the work of one "matmul" op.
func BenchmarkMatmulKernel(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			op := &ChunkOp{Kind: "matmul", Inputs: []int{0, 1}, Shape: []int{n, n}, DType: Float64}
			in := []*Array{randomArray(Float64, []int{n, n}, 1), randomArray(Float64, []int{n, n}, 2)}
			for b.Loop() {
				if _, err := Run(b.Context(), op, in); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(2*float64(n)*float64(n)*float64(n)/sec/1e9, "GFLOP/s")
		})
	}
}
