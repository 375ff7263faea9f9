package tensor

import (
	"bytes"
	"context"
	"slices"
	"testing"
)

// TestGobEveryKind tiles a graph using every op of this package, sends
// each chunk op through gob (as to a worker) and checks that the decoded op
// computes the same chunk as the original.
func TestGobEveryKind(t *testing.T) {
	g := newGraph(t)
	shape := []int{4, 6}
	cs := [][]int{{2, 2}, {3, 3}}
	f := g.input(testValues(Float64, shape, true), cs)
	i := g.input(testValues(Int64, shape, false), cs)
	pos := g.op(OpAbs, Float64, shape, Attrs{}, f)
	for _, op := range []string{OpScalar, OpFull, OpRand, OpRandn, OpUniform, OpNormal} {
		if op == OpScalar {
			g.scalar(Float64, 2, false)
			continue
		}
		g.gen(op, Float64, shape, cs, Attrs{Seed: 3, Value: 1, Start: 1, Step: 2})
	}
	g.gen(OpRandint, Int64, shape, cs, Attrs{Seed: 3, Low: 0, High: 9})
	g.gen(OpArange, Float64, []int{6}, [][]int{{3, 3}}, Attrs{Start: 1, Step: 2})
	g.gen(OpLinspace, Float64, []int{6}, [][]int{{3, 3}}, Attrs{Start: 1, Step: 0.5})
	g.gen(OpEye, Float64, shape, cs, Attrs{K: 1})
	for _, op := range elemUnaryOps {
		switch op {
		case OpInvert:
			g.op(op, Int64, shape, Attrs{}, i)
		case OpLogicalNot:
			g.op(op, Bool, shape, Attrs{}, f)
		case OpAstype:
			g.op(op, Int32, shape, Attrs{}, f)
		default:
			g.op(op, Float64, shape, Attrs{Decimals: 1}, pos)
		}
	}
	for _, op := range elemBinaryOps {
		switch {
		case isComparison(op) || op == OpLogicalAnd || op == OpLogicalOr:
			g.op(op, Bool, shape, Attrs{}, f, i)
		case op == OpBitAnd || op == OpBitOr:
			g.op(op, Int64, shape, Attrs{}, i, i)
		default:
			g.op(op, Float64, shape, Attrs{}, f, i)
		}
	}
	g.op(OpWhere, Float64, shape, Attrs{}, i, f, pos)
	for _, op := range reductions {
		ax := []int{0}
		g.op(op, reduceDType(op, Float64), []int{6}, Attrs{Axes: ax}, f)
	}
	g.op(OpCumsum, Float64, shape, Attrs{Axes: []int{0}}, f)
	g.op(OpCumprod, Int64, shape, Attrs{Axes: []int{0}}, i)
	cg, err := g.tile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	chunks := make([]*Array, len(cg.Ops))
	seen := map[string]bool{}
	for _, op := range cg.Ops {
		if op.Stored != 0 {
			chunks[op.Key] = g.stored[op.Stored]
			continue
		}
		in := make([]*Array, len(op.Inputs))
		for j, k := range op.Inputs {
			in[j] = chunks[k]
		}
		want, err := Run(ctx, op, in)
		if err != nil {
			t.Fatalf("%s: %v", op.Kind, err)
		}
		dec := gobRoundTrip(t, op)
		got, err := Run(ctx, dec, in)
		if err != nil {
			t.Fatalf("decoded %s: %v", op.Kind, err)
		}
		if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("%s: decoded op computes %v%v, original %v%v", op.Kind, got.DType, got.Shape, want.DType, want.Shape)
		}
		chunks[op.Key] = want
		seen[op.Kind] = true
	}
	var kinds []string
	kinds = append(kinds, OpFull, OpArange, OpLinspace, OpEye, OpRand, OpRandn, OpRandint, OpUniform, OpNormal, OpWhere)
	kinds = append(append(kinds, elemUnaryOps...), elemBinaryOps...)
	for _, op := range reductions {
		kinds = append(kinds, op+".map", op+".combine", op+".final")
	}
	for _, op := range []string{OpCumsum, OpCumprod} {
		kinds = append(kinds, op+".local", op+".carry", op+".offset")
	}
	for _, k := range kinds {
		if !seen[k] {
			t.Errorf("kind %q not exercised", k)
		}
		if _, ok := kernelFor(k); !ok {
			t.Errorf("kind %q has no kernel", k)
		}
	}
}
