package tensortest

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
)

// TestGobEveryKind tiles a graph using every op of this package, sends
// each chunk op through gob (as to a worker) and checks that the decoded op
// computes the same chunk as the original.
func TestGobEveryKind(t *testing.T) {
	g := newGraph(t)
	shape := []int{4, 6}
	cs := [][]int{{2, 2}, {3, 3}}
	f := g.input(testValues(tensor.Float64, shape, true), cs)
	i := g.input(testValues(tensor.Int64, shape, false), cs)
	pos := g.op(tensor.OpAbs, tensor.Float64, shape, spec.Attrs{}, f)
	for _, op := range []string{tensor.OpScalar, tensor.OpFull, tensor.OpRand, tensor.OpRandn, tensor.OpUniform, tensor.OpNormal} {
		if op == tensor.OpScalar {
			g.scalar(tensor.Float64, 2, false)
			continue
		}
		g.gen(op, tensor.Float64, shape, cs, spec.Attrs{Seed: 3, Value: 1, Start: 1, Step: 2})
	}
	g.gen(tensor.OpRandint, tensor.Int64, shape, cs, spec.Attrs{Seed: 3, Low: 0, High: 9})
	g.gen(tensor.OpArange, tensor.Float64, []int{6}, [][]int{{3, 3}}, spec.Attrs{Start: 1, Step: 2})
	g.gen(tensor.OpLinspace, tensor.Float64, []int{6}, [][]int{{3, 3}}, spec.Attrs{Start: 1, Step: 0.5})
	g.gen(tensor.OpEye, tensor.Float64, shape, cs, spec.Attrs{K: 1})
	for _, op := range tensor.ElemUnaryOps {
		switch op {
		case tensor.OpInvert:
			g.op(op, tensor.Int64, shape, spec.Attrs{}, i)
		case tensor.OpLogicalNot, tensor.OpIsnan, tensor.OpIsinf, tensor.OpIsfinite, tensor.OpSignbit:
			g.op(op, tensor.Bool, shape, spec.Attrs{}, f)
		case tensor.OpAstype:
			g.op(op, tensor.Int32, shape, spec.Attrs{}, f)
		default:
			g.op(op, tensor.Float64, shape, spec.Attrs{Decimals: 1}, pos)
		}
	}
	for _, op := range tensor.ElemBinaryOps {
		switch {
		case tensor.IsComparison(op) || op == tensor.OpLogicalAnd || op == tensor.OpLogicalOr:
			g.op(op, tensor.Bool, shape, spec.Attrs{}, f, i)
		case op == tensor.OpBitAnd || op == tensor.OpBitOr || op == tensor.OpBitXor:
			g.op(op, tensor.Int64, shape, spec.Attrs{}, i, i)
		case op == tensor.OpNormalize: // refuses a zero divisor
			g.op(op, tensor.Float64, shape, spec.Attrs{}, f, g.op(tensor.OpExp, tensor.Float64, shape, spec.Attrs{}, f))
		default:
			g.op(op, tensor.Float64, shape, spec.Attrs{}, f, i)
		}
	}
	g.op(tensor.OpWhere, tensor.Float64, shape, spec.Attrs{}, i, f, pos)
	for _, op := range tensor.Reductions {
		ax := []int{0}
		g.op(op, reduceDType(op, tensor.Float64), []int{6}, spec.Attrs{Axes: ax}, f)
	}
	g.op(tensor.OpCumsum, tensor.Float64, shape, spec.Attrs{Axes: []int{0}}, f)
	g.op(tensor.OpCumprod, tensor.Int64, shape, spec.Attrs{Axes: []int{0}}, i)
	// Every node is an output: the tiling keeps only what outputs need.
	cg, err := g.tile(g.nodes...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	chunks := make([]*tensor.Array, len(cg.Ops))
	seen := map[string]bool{}
	for _, op := range cg.Ops {
		if op.Stored != 0 {
			chunks[op.Key] = g.stored[op.Stored]
			continue
		}
		in := make([]*tensor.Array, len(op.Inputs))
		for j, k := range op.Inputs {
			in[j] = chunks[k]
		}
		want, err := kernel.Run(ctx, op, in)
		if err != nil {
			t.Fatalf("%s: %v", op.Kind, err)
		}
		dec := gobRoundTrip(t, op)
		got, err := kernel.Run(ctx, dec, in)
		if err != nil {
			t.Fatalf("decoded %s: %v", op.Kind, err)
		}
		if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("%s: decoded op computes %v%v, original %v%v", op.Kind, got.DType, got.Shape, want.DType, want.Shape)
		}
		chunks[op.Key] = want
		seen[string(op.Kind)] = true
	}
	var kinds []string
	kinds = append(kinds, tensor.OpFull, tensor.OpArange, tensor.OpLinspace, tensor.OpEye, tensor.OpRand, tensor.OpRandn, tensor.OpRandint, tensor.OpUniform, tensor.OpNormal, tensor.OpWhere)
	kinds = append(append(kinds, tensor.ElemUnaryOps...), tensor.ElemBinaryOps...)
	for _, op := range tensor.Reductions {
		kinds = append(kinds, op+".map", op+".combine", op+".final")
	}
	for _, op := range []string{tensor.OpCumsum, tensor.OpCumprod} {
		kinds = append(kinds, op+".local", op+".carry", op+".offset")
	}
	for _, k := range kinds {
		if !seen[k] {
			t.Errorf("kind %q not exercised", k)
		}
		if _, ok := kernel.KernelFor(chunk.Kind(k)); !ok {
			t.Errorf("kind %q has no kernel", k)
		}
	}
}
