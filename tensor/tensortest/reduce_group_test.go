package tensortest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec/lang"
)

// A float mean whose blocks along the reduced axes are one value deep
// (the seasonal cycle x.reshape(3, T/3, lat, lon).mean(axis=0) over
// chunks of one year each) has map ops that read up to tile.MeanMapGroup
// blocks each and make one partial of them all. Its results are the mean
// of the values in float64, rounded once to the result's dtype, with and
// without fusion, for float32 and float64, ragged grids and more blocks
// than one map takes.
func TestMeanMapGroup(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	cases := []struct {
		dt      tensor.DType
		shape   []int
		chunks  [][]int
		expr    string
		axes    []int // of the reshaped or plain x, as the mean's
		rshape  []int // the shape x is reshaped to, if any
		grouped bool
		gather  bool // the blocks read where they lie, no reshape op left
	}{
		// Three years of 8 steps in chunks of 3 steps: the reshape's
		// blocks straddle the chunks, and the mean reads 3 blocks of
		// one year each.
		{tensor.Float32, []int{24, 5, 7}, [][]int{{3, 3, 3, 3, 3, 3, 3, 3}, {5}, {7}}, "c = x.reshape(3, 8, 5, 7).mean(axis=0)", []int{0}, []int{3, 8, 5, 7}, true, true},
		{tensor.Float64, []int{24, 5, 7}, [][]int{{5, 5, 5, 5, 4}, {2, 3}, {7}}, "c = x.reshape(3, 8, 5, 7).mean(axis=0)", []int{0}, []int{3, 8, 5, 7}, true, true},
		// 19 blocks of one row: three maps of up to 8, then a combine.
		{tensor.Float32, []int{38, 3}, [][]int{repeat(19, 2), {3}}, "c = x.reshape(19, 2, 3).mean(axis=0)", []int{0}, []int{19, 2, 3}, true, true},
		// Blocks not made by a reshape: a map each (expression fusion
		// and shared maps take those).
		{tensor.Float32, []int{10, 6}, [][]int{repeat(10, 1), {6}}, "c = x.mean(axis=0)", []int{0}, nil, false, false},
		// Two rows deep: a map each.
		{tensor.Float32, []int{8, 4}, [][]int{{4, 4}, {4}}, "c = x.reshape(4, 8).mean(axis=0)", []int{0}, []int{4, 8}, false, false},
		// The reshape read by another reduction too: its blocks are made,
		// and the mean reads them, several a map.
		{tensor.Float32, []int{24, 5, 7}, [][]int{{3, 3, 3, 3, 3, 3, 3, 3}, {5}, {7}}, "r = x.reshape(3, 8, 5, 7)\nc = r.mean(axis=0)\nd = r.max()\nfetch c, d", []int{0}, []int{3, 8, 5, 7}, true, false},
	}
	for i, c := range cases {
		a := tensor.NewArray(c.dt, c.shape)
		for j := range a.Len() {
			v := 280 + 30*r.NormFloat64()
			if c.dt == tensor.Float32 {
				a.Float32s()[j] = float32(v)
			} else {
				a.Float64s()[j] = v
			}
		}
		env := newCatEnv()
		env.store(t, "x", a, c.chunks)
		src := a
		if c.rshape != nil {
			src = &tensor.Array{DType: a.DType, Shape: c.rshape, Data: a.Data}
		}
		want := refReduce(tensor.OpMean, src, c.axes, 0, tensor.Float64)
		for _, opt := range []fuse.Options{{}, {Fuse: true, FuseExpr: true}} {
			name := fmt.Sprintf("case %d %v fused %v", i, c.dt, opt.Fuse)
			grouped, gathered, reshapes := false, false, 0
			g, err := lang.Parse(c.expr, env.tensors)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ComputeGraph(context.Background(), g, env.tensors, env.stored, opt, func(cg *chunk.Graph) {
				for _, op := range cg.Ops {
					ops := []chunk.Op{*op}
					if fa, ok := op.Args.(chunk.FuseArgs); ok {
						ops = fa.Members
					}
					for i, m := range ops {
						a, ok := m.Args.(chunk.ReduceArgs)
						if m.Kind == chunk.StepKind(tensor.OpMean, chunk.StepMap) && ok && (i == 0 && len(op.Inputs) > 1 || a.Gather != nil) {
							grouped = true
							gathered = gathered || a.Gather != nil
						}
						if m.Kind == chunk.KindReshape {
							reshapes++
						}
					}
				}
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if grouped != c.grouped || gathered != c.gather || gathered && reshapes > 0 {
				t.Errorf("%s: a mean map reads several blocks: %v, in place %v (%d reshape ops); want %v, %v", name, grouped, gathered, reshapes, c.grouped, c.gather)
			}
			m := got["c"]
			if m == nil {
				t.Fatalf("%s: no c among %v", name, got)
			}
			if m.DType != c.dt || m.Len() != len(want) {
				t.Fatalf("%s: %v%v, want %v of %d", name, m.DType, m.Shape, c.dt, len(want))
			}
			for j, w := range want {
				g := m.Float64At(j)
				if c.dt == tensor.Float32 {
					w = float64(float32(w)) // one rounding, of the float64 mean
				}
				if g != w && math.Abs(g-w) > 1e-13*math.Abs(w) {
					t.Fatalf("%s: element %d is %v, want %v", name, j, g, w)
				}
			}
		}
	}
}

func repeat(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}
