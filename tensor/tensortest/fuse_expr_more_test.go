package tensortest

import (
	"math"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
)

// TestFuseExprSiblingReductions checks W6's graph: a random tensor read
// only by two reductions is drawn once a chunk, in one expr op that makes
// both partials, each cut out by an expr.part op; the results are those of
// each reduction fused alone, bit for bit, and the sums of the tensor's
// values within rounding.
func TestFuseExprSiblingReductions(t *testing.T) {
	const x = "x = rand(200, 50, chunks=(20, 10), seed=1)\n"
	cg := tileSpec(t, x+"s = x.sum(axis=0)\nm = x.mean(axis=1)\nfetch s, m")
	f := fuse.Optimize(cg, fuse.Options{FuseExpr: true, Fuse: true})
	got := kinds(f)
	if got["expr(rand+sum.map+mean.map)"] != 50 || got[chunk.ExprPart] != 100 {
		t.Errorf("graph has %v, want 50 expr(rand+sum.map+mean.map) and 100 %s", got, chunk.ExprPart)
	}
	for _, op := range f.Ops {
		if op.Kind == tensor.OpRand || tensor.NumElements(op.Shape) == 200 {
			t.Errorf("a random chunk is made: %s%v", op.Name(), op.Shape)
		}
		if a, ok := op.Args.(chunk.ExprArgs); ok && !slices.Equal(op.Shape, []int{10 + 2*20}) {
			t.Errorf("expr op makes %v, want the 10 sums and 20 (sum, count) pairs: %v", op.Shape, a.Members)
		}
	}
	outs := computeAll(t, gobGraph(t, f))

	// Each reduction fused alone gives the same bits.
	for i, text := range []string{x + "s = x.sum(axis=0)", x + "m = x.mean(axis=1)"} {
		alone := computeAll(t, fuse.Optimize(tileSpec(t, text), fuse.Options{FuseExpr: true, Fuse: true}))[0]
		if msg := sameValues(outs[i], alone, true); msg != "" {
			t.Errorf("%s: %s", cg.Outputs[i].Name, msg)
		}
	}
	// And the sums of the tensor's own values.
	v := computeAll(t, tileSpec(t, x+"fetch x"))[0].Float64s()
	for j := range 50 {
		want := 0.0
		for i := range 200 {
			want += v[i*50+j]
		}
		if g := outs[0].Float64At(j); math.Abs(g-want) > 1e-12*want {
			t.Fatalf("s[%d] = %v, want %v", j, g, want)
		}
	}
	for i := range 200 {
		want := 0.0
		for j := range 50 {
			want += v[i*50+j]
		}
		if g := outs[1].Float64At(i); math.Abs(g-want/50) > 1e-12*want {
			t.Fatalf("m[%d] = %v, want %v", i, g, want/50)
		}
	}

	// Reductions whose partials differ in dtype, or a value read by
	// another op too, are left as they were.
	for _, text := range []string{
		"x = randint(0, 9, size=(30, 20), chunks=(8, 8), seed=3)\na = x.sum(axis=0)\nb = x.mean(axis=1)\nfetch a, b",
		x + "s = x.sum(axis=0)\ny = x + 1\nfetch s, y",
	} {
		cg := tileSpec(t, text)
		f := fuse.Expr(cg)
		if n := kinds(f)[chunk.ExprPart]; n != 0 {
			t.Errorf("%q: %d %s ops", text, n, chunk.ExprPart)
		}
		want := computeAll(t, cg)
		for i, g := range computeAll(t, f) {
			if msg := sameValues(g, want[i], true); msg != "" {
				t.Errorf("%q: output %s %s", text, cg.Outputs[i].Name, msg)
			}
		}
	}
}

func TestSumBytes(t *testing.T) {
	s := elem.NewRandStream(9, 0)
	for _, n := range []int{0, 1, 7, 8, 9, 1023, 1024, 1025, 5000} {
		for _, full := range []bool{false, true} {
			b := make([]byte, n)
			want := 0
			for i := range b {
				b[i] = byte(s.Bits(uint64(i)))
				if full {
					b[i] = 255
				}
				want += int(b[i])
			}
			if got := expr.SumBytes(b); got != want {
				t.Errorf("n=%d full=%v: %d, want %d", n, full, got, want)
			}
		}
	}
}

// testVecCmp checks the packed float64 comparisons against Go's operators.
func testVecCmp(t *testing.T, special []float64) {
	ops := []struct {
		kind string
		f    func(a, b float64) bool
	}{
		{tensor.OpLess, func(a, b float64) bool { return a < b }},
		{tensor.OpLessEq, func(a, b float64) bool { return a <= b }},
		{tensor.OpGreater, func(a, b float64) bool { return a > b }},
		{tensor.OpGreaterEq, func(a, b float64) bool { return a >= b }},
		{tensor.OpEqual, func(a, b float64) bool { return a == b }},
		{tensor.OpNotEqual, func(a, b float64) bool { return a != b }},
	}
	s := elem.NewRandStream(4, 0)
	for _, op := range ops {
		row := expr.VecRow(op.kind, tensor.Float64, tensor.Bool)
		if row == nil {
			if expr.UseCmpAVX {
				t.Fatalf("no packed %s", op.kind)
			}
			continue
		}
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 255, 4096} {
			a, b := make([]float64, n+1), make([]float64, n+1)
			for i := range a {
				a[i] = special[int(s.Bits(uint64(2*i))%uint64(len(special)))]
				b[i] = special[int(s.Bits(uint64(2*i+1))%uint64(len(special)))]
				if i%4 == 0 {
					b[i] = a[i] // equal operands, NaN included
				}
			}
			d := make([]byte, n)
			for i := range d {
				d[i] = 7 // overwritten
			}
			if err := row(d, [][]byte{elem.Float64Bytes(a), elem.Float64Bytes(b)}); err != nil {
				t.Fatal(err)
			}
			for i, v := range d {
				if w := elem.B2u(op.f(a[i], b[i])); v != w {
					t.Fatalf("%s n=%d: %v, %v gives %d, want %d", op.kind, n, a[i], b[i], v, w)
				}
			}
		}
	}
}
