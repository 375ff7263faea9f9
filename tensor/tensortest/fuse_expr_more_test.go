package tensortest

import (
	"math"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
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
	if got["expr(rand+sum.map+mean.map)"] != 50 || got[string(chunk.KindExprPart)] != 100 {
		t.Errorf("graph has %v, want 50 expr(rand+sum.map+mean.map) and 100 %s", got, chunk.KindExprPart)
	}
	for _, op := range f.Ops {
		if op.Kind == tensor.OpRand || tensor.NumElements(op.Shape) == 200 {
			t.Errorf("a random chunk is made: %s%v", op.Name(), op.Shape)
		}
		if a, ok := op.Args.(chunk.ExprArgs); ok && !slices.Equal(op.Shape, []int{10 + 20}) {
			t.Errorf("expr op makes %v, want the 10 sums and the mean's 20: %v", op.Shape, a.Members)
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
		if n := kinds(f)[string(chunk.KindExprPart)]; n != 0 {
			t.Errorf("%q: %d %s ops", text, n, chunk.KindExprPart)
		}
		want := computeAll(t, cg)
		for i, g := range computeAll(t, f) {
			if msg := sameValues(g, want[i], true); msg != "" {
				t.Errorf("%q: output %s %s", text, cg.Outputs[i].Name, msg)
			}
		}
	}
}
