package tensor

import (
	"math"
	"slices"
	"testing"
)

// TestFuseExprSiblingReductions checks W6's graph: a random tensor read
// only by two reductions is drawn once a chunk, in one expr op that makes
// both partials, each cut out by an expr.part op; the results are those of
// each reduction fused alone, bit for bit, and the sums of the tensor's
// values within rounding.
func TestFuseExprSiblingReductions(t *testing.T) {
	const x = "x = rand(200, 50, chunks=(20, 10), seed=1)\n"
	cg := tileSpec(t, x+"s = x.sum(axis=0)\nm = x.mean(axis=1)\nfetch s, m")
	f := Optimize(cg, Options{FuseExpr: true, Fuse: true})
	got := kinds(f)
	if got["expr(rand+sum.map+mean.map)"] != 50 || got[exprPart] != 100 {
		t.Errorf("graph has %v, want 50 expr(rand+sum.map+mean.map) and 100 %s", got, exprPart)
	}
	for _, op := range f.Ops {
		if op.Kind == OpRand || NumElements(op.Shape) == 200 {
			t.Errorf("a random chunk is made: %s%v", op.Name(), op.Shape)
		}
		if a, ok := op.Args.(ExprArgs); ok && !slices.Equal(op.Shape, []int{10 + 2*20}) {
			t.Errorf("expr op makes %v, want the 10 sums and 20 (sum, count) pairs: %v", op.Shape, a.Members)
		}
	}
	outs := computeAll(t, gobGraph(t, f))

	// Each reduction fused alone gives the same bits.
	for i, text := range []string{x + "s = x.sum(axis=0)", x + "m = x.mean(axis=1)"} {
		alone := computeAll(t, Optimize(tileSpec(t, text), Options{FuseExpr: true, Fuse: true}))[0]
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
		f := FuseExpr(cg)
		if n := kinds(f)[exprPart]; n != 0 {
			t.Errorf("%q: %d %s ops", text, n, exprPart)
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
	s := newRandStream(9, 0)
	for _, n := range []int{0, 1, 7, 8, 9, 1023, 1024, 1025, 5000} {
		for _, full := range []bool{false, true} {
			b := make([]byte, n)
			want := 0
			for i := range b {
				b[i] = byte(s.bits(uint64(i)))
				if full {
					b[i] = 255
				}
				want += int(b[i])
			}
			if got := sumBytes(b); got != want {
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
		{OpLess, func(a, b float64) bool { return a < b }},
		{OpLessEq, func(a, b float64) bool { return a <= b }},
		{OpGreater, func(a, b float64) bool { return a > b }},
		{OpGreaterEq, func(a, b float64) bool { return a >= b }},
		{OpEqual, func(a, b float64) bool { return a == b }},
		{OpNotEqual, func(a, b float64) bool { return a != b }},
	}
	s := newRandStream(4, 0)
	for _, op := range ops {
		row := vecRow(op.kind, Float64, Bool)
		if row == nil {
			if useCmpAVX {
				t.Fatalf("no packed %s", op.kind)
			}
			continue
		}
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 255, 4096} {
			a, b := make([]float64, n+1), make([]float64, n+1)
			for i := range a {
				a[i] = special[int(s.bits(uint64(2*i))%uint64(len(special)))]
				b[i] = special[int(s.bits(uint64(2*i+1))%uint64(len(special)))]
				if i%4 == 0 {
					b[i] = a[i] // equal operands, NaN included
				}
			}
			d := make([]byte, n)
			for i := range d {
				d[i] = 7 // overwritten
			}
			if err := row(d, [][]byte{float64Bytes(a), float64Bytes(b)}); err != nil {
				t.Fatal(err)
			}
			for i, v := range d {
				if w := b2u(op.f(a[i], b[i])); v != w {
					t.Fatalf("%s n=%d: %v, %v gives %d, want %d", op.kind, n, a[i], b[i], v, w)
				}
			}
		}
	}
}
