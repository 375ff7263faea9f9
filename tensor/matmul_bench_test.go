package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkMatmulKernel times one "matmul" op on n x n float64 blocks: one
// block product, and the four W3's ops accumulate (chunks of 1000 of a
// 4000 x 4000 product). GFLOP/s is that of one core: a kernel runs on one.
func BenchmarkMatmulKernel(b *testing.B) {
	for _, tc := range []struct{ n, pairs int }{{100, 1}, {1000, 1}, {1000, 4}} {
		b.Run(fmt.Sprintf("%dx%d", tc.n, tc.pairs), func(b *testing.B) {
			shape := []int{tc.n, tc.n}
			op := &ChunkOp{Kind: "matmul", Inputs: make([]int, 2*tc.pairs), Shape: shape, DType: Float64}
			var in []*Array
			for p := range 2 * tc.pairs {
				in = append(in, randomArray(Float64, shape, uint64(p)))
			}
			for b.Loop() {
				if _, err := Run(b.Context(), op, in); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(2*float64(tc.n*tc.n)*float64(tc.n*tc.pairs)/sec/1e9, "GFLOP/s")
		})
	}
}
