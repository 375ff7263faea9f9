package tensortest

import (
	"context"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

const benchN = 8 << 20 // elements a chunk

func kernBenchArray(n int) *tensor.Array {
	a := tensor.NewArray(tensor.Float64, []int{n})
	for i, v := range a.Float64s() {
		a.Float64s()[i] = v + float64(i%1000)*0.5
	}
	return a
}

// BenchmarkAddKernel measures float64 addition of two 8 Mi-element chunks;
// bytes count the two inputs read and the output written.
func BenchmarkAddKernel(b *testing.B) {
	x, y := kernBenchArray(benchN), kernBenchArray(benchN)
	b.Run("loop", func(b *testing.B) {
		// The typed loop into a reused output buffer.
		d := make([]float64, benchN)
		b.SetBytes(3 * 8 * benchN)
		for b.Loop() {
			elem.AddLoop(d, x.Float64s(), y.Float64s())
		}
	})
	b.Run("kernel", func(b *testing.B) {
		// The whole kernel, allocating its output chunk.
		op := &chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0, 1}, Shape: []int{benchN}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}}
		b.SetBytes(3 * 8 * benchN)
		for b.Loop() {
			if _, err := kernel.Run(context.Background(), op, []*tensor.Array{x, y}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSumKernel measures the float64 sum map of one 8 Mi-element chunk.
func BenchmarkSumKernel(b *testing.B) {
	x := kernBenchArray(benchN)
	op := &chunk.Op{Kind: "sum.map", Inputs: []int{0}, Shape: []int{1}, DType: tensor.Float64,
		Args: chunk.ReduceArgs{Op: tensor.OpSum, In: tensor.Float64, Axes: []int{0}}}
	b.SetBytes(8 * benchN)
	for b.Loop() {
		if _, err := kernel.Run(context.Background(), op, []*tensor.Array{x}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRandKernel measures rand and randn over one 8 Mi-element chunk;
// bytes count the output written.
func BenchmarkRandKernel(b *testing.B) {
	for _, kind := range []string{tensor.OpRand, tensor.OpRandn} {
		b.Run(kind, func(b *testing.B) {
			op := &chunk.Op{Kind: chunk.Kind(kind), Shape: []int{benchN}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0}, Global: []int{benchN}, Seed: 1}}
			b.SetBytes(8 * benchN)
			for b.Loop() {
				if _, err := kernel.Run(context.Background(), op, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTileElementwiseReduce measures tiling (x + y*2).sum(axis=0) of two
// 100x100-chunk tensors with different chunkings: 10^4 generator ops each, a
// rechunk, 10^4 elementwise ops and a reduction tree.
func BenchmarkTileElementwiseReduce(b *testing.B) {
	text := "x = rand(1000, 1000, chunks=10, seed=1)\ny = rand(1000, 1000, chunks=(20, 5), seed=2)\nz = (x + y * 2).sum(axis=0)"
	g, err := lang.ParseText(text, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cg, err := tile.Graph(g, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(cg.Ops)), "ops")
	}
}
