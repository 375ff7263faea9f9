package tensortest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// BenchmarkLabelSums times one label.sums op, k-means' iteration over a
// band of 2^20 points of 8 float32 (32 MiB), as fuse.Labels makes it
// from the user's spec: ns a point.
func BenchmarkLabelSums(b *testing.B) {
	for _, k := range []int{5, 64} {
		b.Run(fmt.Sprintf("k%d", k), func(b *testing.B) {
			const n, d = 1 << 20, 8
			r := rand.New(rand.NewPCG(1, 2))
			x := tensor.NewArray(tensor.Float32, []int{n, d})
			for i, v := range x.Float32s() {
				x.Float32s()[i] = float32(r.NormFloat64()) + float32(v)
			}
			c := tensor.NewArray(tensor.Float32, []int{k, d})
			for i := range c.Float32s() {
				c.Float32s()[i] = float32(r.NormFloat64())
			}
			op, in := labelSumsOp(b, x, c, k)
			ctx := context.Background()
			b.SetBytes(int64(len(x.Data)))
			b.ResetTimer()
			for range b.N {
				if _, err := kernel.Run(ctx, op, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/point")
		})
	}
}

// labelSumsOp tiles and fuses the k-means iteration over x (one band) and
// c, and returns its label.sums op and the inputs it reads.
func labelSumsOp(b *testing.B, x, c *tensor.Array, k int) (*chunk.Op, []*tensor.Array) {
	b.Helper()
	t := &testing.T{}
	env := newCatEnv()
	env.store(t, "X", x, [][]int{{x.Shape[0]}, {x.Shape[1]}})
	env.store(t, "C", c, [][]int{{k}, {c.Shape[1]}})
	text := fmt.Sprintf("d = (C*C).sum(axis=1) - 2*(X @ C.T)\noh = (d.argmin(axis=1)[:, None] == arange(%d)).astype(float32)\nC = (oh.T @ X) / oh.sum(axis=0)[:, None]\n", k)
	g, err := lang.Parse(text, env.tensors)
	if err != nil {
		b.Fatal(err)
	}
	st, err := tile.StagesWith(g, env.tensors, tile.Options{Fused: true})
	if err != nil {
		b.Fatal(err)
	}
	cg := fuse.Optimize(st.Graph, fuse.Options{Fuse: true, FuseExpr: true})
	chunks := make([]*tensor.Array, len(cg.Ops))
	for _, op := range cg.Ops {
		in := make([]*tensor.Array, len(op.Inputs))
		for i, k := range op.Inputs {
			in[i] = chunks[k]
		}
		if op.Kind == chunk.KindLabelSums {
			return op, in
		}
		if op.Stored != 0 {
			chunks[op.Key], err = env.stored(op.Stored)
		} else {
			chunks[op.Key], err = kernel.Run(context.Background(), op, in)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Fatal("no label.sums op")
	return nil, nil
}
