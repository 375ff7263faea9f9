package tensortest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// TestExprMachineReuse runs graphs of many small chunks sharing programs,
// so that machines pass from op to op: generators at other offsets, edge
// chunks of other shapes, broadcast inputs and reductions must all come
// out as the unfused graph computes them, run after run.
func TestExprMachineReuse(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		exact bool
	}{
		{"y = (ones(1000, chunks=10) + 1).sum()", true},
		{"y = (arange(1003, chunks=10) * 2 + 1)", true},
		{"x = rand(997, chunks=100, seed=3)\ny = (exp(x) + arange(997, chunks=100)).sum()", false},
		{"x = rand(60, 7, chunks=(8, 7), seed=5)\nc = arange(7.0)\ny = ((x - c) * 1.5).max(axis=1)", true},
		{"x = randn(300, chunks=16, seed=2)\ny = (x * 3).var()", false},
		{"x = rand(90, chunks=16, seed=9)\ny = nanmean(where(x > 0.5, x, nan))", false},
		{"a = randint(0, 9, size=(50, 4), chunks=(7, 4), seed=1)\ny = (a * a).mean(axis=0)", false},
	} {
		name := strings.ReplaceAll(tc.spec, "\n", "; ")
		t.Run(name, func(t *testing.T) {
			cg := tileSpec(t, tc.spec)
			want := computeAll(t, cg)
			f := fuse.Optimize(cg, fuse.Options{FuseExpr: true})
			for run := range 3 {
				checkOutputs(t, f, cg.Outputs, want, tc.exact, fmt.Sprintf("run %d", run))
			}
		})
	}
}

// TestExprMachineReuseAllocs checks that an op whose program ran before
// allocates next to nothing beyond its output: it takes over a machine.
func TestExprMachineReuseAllocs(t *testing.T) {
	op, in := tinyExprOp(t)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := kernel.Run(context.Background(), op, in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 { // the output, in one piece
		t.Errorf("%v allocations running a program again", allocs)
	}
}

// tinySum is W4's sum at a thousandth of its size, fused: chunks of ten
// elements, each an expr op, and a tree of combines.
func tinySum(tb testing.TB) *chunk.Graph {
	tb.Helper()
	g, err := lang.Parse("y = (ones(1000, chunks=10) + 1).sum()", nil)
	if err != nil {
		tb.Fatal(err)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return fuse.Expr(cg)
}

// tinyExprOp is the first expr op of tinySum.
func tinyExprOp(tb testing.TB) (*chunk.Op, []*tensor.Array) {
	tb.Helper()
	return firstExpr(tb, tinySum(tb))
}

// firstExpr returns the first expr op of f and its inputs, made by running
// the ops that read nothing (generators) they come from.
func firstExpr(tb testing.TB, f *chunk.Graph) (*chunk.Op, []*tensor.Array) {
	tb.Helper()
	for _, op := range f.Ops {
		if op.Kind != chunk.KindExpr {
			continue
		}
		in := make([]*tensor.Array, len(op.Inputs))
		for i, k := range op.Inputs {
			var err error
			if in[i], err = kernel.Run(context.Background(), f.Ops[k], nil); err != nil {
				tb.Fatal(err)
			}
		}
		return op, in
	}
	tb.Fatalf("no expr op: %v", kinds(f))
	return nil, nil
}

// BenchmarkExprTinyOp runs an expr op over ten elements: what the kernel
// costs beyond the work.
func BenchmarkExprTinyOp(b *testing.B) {
	op, in := tinyExprOp(b)
	benchRun(b, op, in)
}

// benchRun runs op on in for the benchmark, counting its allocations.
func benchRun(b *testing.B, op *chunk.Op, in []*tensor.Array) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kernel.Run(ctx, op, in); err != nil {
			b.Fatal(err)
		}
	}
}
