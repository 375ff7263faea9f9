package tensortest

import (
	"fmt"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
)

// BenchmarkMatmulKernel times one "matmul" op on n x n float64 blocks: one
// block product, and the four W3's ops accumulate (chunks of 1000 of a
// 4000 x 4000 product). GFLOP/s is that of one core: a kernel runs on one.
func BenchmarkMatmulKernel(b *testing.B) {
	for _, tc := range []struct{ n, pairs int }{{100, 1}, {1000, 1}, {1000, 4}} {
		b.Run(fmt.Sprintf("%dx%d", tc.n, tc.pairs), func(b *testing.B) {
			shape := []int{tc.n, tc.n}
			op := &chunk.Op{Kind: chunk.KindMatmul, Inputs: make([]int, 2*tc.pairs), Shape: shape, DType: tensor.Float64}
			var in []*tensor.Array
			for p := range 2 * tc.pairs {
				in = append(in, randomArray(tensor.Float64, shape, uint64(p)))
			}
			for b.Loop() {
				if _, err := kernel.Run(b.Context(), op, in); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(2*float64(tc.n*tc.n)*float64(tc.n*tc.pairs)/sec/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkMatmulDrawn times W3's op (four products of 1000 x 1000 blocks)
// reading its eight blocks, and drawing them: what drawing costs a product
// against reading a stored block. The time to store a block is not in it:
// in fresh shared memory, 15 to 25 ms a block on this machine.
func BenchmarkMatmulDrawn(b *testing.B) {
	const n = 1000
	shape := []int{n, n}
	var blocks []chunk.Op
	var in []*tensor.Array
	for p := range 8 {
		g := chunk.Op{Kind: chunk.KindRand, Shape: shape, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0, 0}, Global: shape, Seed: uint64(p)}}
		blocks = append(blocks, g)
		a, err := kernel.Run(b.Context(), &g, nil)
		if err != nil {
			b.Fatal(err)
		}
		in = append(in, a)
	}
	for _, tc := range []struct {
		name string
		op   *chunk.Op
		in   []*tensor.Array
	}{
		{"read", &chunk.Op{Kind: chunk.KindMatmul, Inputs: make([]int, 8), Shape: shape, DType: tensor.Float64}, in},
		{"drawn", &chunk.Op{Kind: chunk.KindMatmul, Shape: shape, DType: tensor.Float64, Args: chunk.MatmulArgs{Blocks: blocks}}, nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			out := tensor.NewArray(tensor.Float64, shape)
			ctx := tensor.WithAlloc(b.Context(), func(tensor.DType, []int, bool) *tensor.Array { return out })
			cpu0 := cpuSeconds()
			for b.Loop() {
				if _, err := kernel.Run(ctx, tc.op, tc.in); err != nil {
					b.Fatal(err)
				}
			}
			flops := 2 * float64(n*n) * float64(4*n) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			// On a machine shared with other work, the CPU time varies
			// less than the elapsed time.
			b.ReportMetric(flops/(cpuSeconds()-cpu0)/1e9, "GFLOP/cpu-s")
		})
	}
}
