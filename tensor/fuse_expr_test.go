package tensor

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// tileSpec parses and tiles spec with no session tensors.
func tileSpec(t *testing.T, spec string) *ChunkGraph {
	t.Helper()
	g, err := ParseSpec(spec, nil)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, spec)
	}
	cg, err := Tile(g, nil)
	if err != nil {
		t.Fatalf("tile: %v\n%s", err, spec)
	}
	return cg
}

// gobGraph sends every op of cg through gob, as the runtime sends ops to
// workers.
func gobGraph(t *testing.T, cg *ChunkGraph) *ChunkGraph {
	t.Helper()
	out := &ChunkGraph{Outputs: cg.Outputs}
	for _, op := range cg.Ops {
		out.Ops = append(out.Ops, gobRoundTrip(t, op))
	}
	return out
}

func computeAll(t *testing.T, cg *ChunkGraph) []*Array {
	t.Helper()
	outs, err := Compute(context.Background(), cg, nil)
	if err != nil {
		t.Fatalf("compute: %v", err)
	}
	return outs
}

// sameValues reports how got differs from want: bit for bit when exact,
// else within the rounding a reassociated float sum may bring.
func sameValues(got, want *Array, exact bool) string {
	if got.DType != want.DType || !sameShape(got.Shape, want.Shape) {
		return fmt.Sprintf("made %v%v, want %v%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	if exact || !got.DType.IsFloat() {
		if !bytes.Equal(got.Data, want.Data) {
			for i := 0; i < got.Len(); i++ {
				if g, w := got.Float64At(i), want.Float64At(i); g != w && !(g != g && w != w) {
					return fmt.Sprintf("differs at element %d: %v, want %v", i, g, w)
				}
			}
			if !bytes.Equal(got.Data, want.Data) && got.DType != Float32 && got.DType != Float64 {
				return "differs in bits"
			}
		}
		return ""
	}
	for i := 0; i < got.Len(); i++ {
		g, w := got.Float64At(i), want.Float64At(i)
		if math.IsNaN(g) != math.IsNaN(w) || math.IsInf(w, 0) && g != w ||
			!math.IsNaN(w) && !math.IsInf(w, 0) && math.Abs(g-w) > 1e-9*(math.Abs(w)+1) {
			return fmt.Sprintf("differs at element %d: %v, want %v", i, g, w)
		}
	}
	return ""
}

// fuseSpecs are specs whose outputs must come out the same fused and unfused.
// exact marks those with no reassociated float sum.
var fuseSpecs = []struct {
	spec  string
	exact bool
}{
	{"a = rand(10000, chunks=3000, seed=1)\nb = rand(10000, chunks=3000, seed=2)\ny = (a + b).sum()", false},
	{"a = rand(20000, chunks=7000, seed=1)\nb = rand(20000, chunks=7000, seed=2)\ny = ((a + b) * 2 - a / 3).sum()", false},
	{"a = rand(20000, chunks=7000, seed=1)\nb = rand(20000, chunks=7000, seed=2)\ny = (a + b) * 2 - a / 3", true},
	{"a = randn(300, 70, chunks=(128, 30), seed=5)\ny = abs(a) * 3 + 1", true},
	{"a = randn(300, 70, chunks=(128, 30), seed=5)\ny = (a * a).sum(axis=0)", false},
	{"a = randn(300, 70, chunks=(128, 30), seed=5)\ny = (a * a).sum(axis=1, keepdims=True)", false},
	{"a = randn(30, 7, 9, chunks=(8, 3, 4), seed=5)\ny = (a + 1).max(axis=(0, 2))", true},
	{"a = randint(-5, 5, size=(40, 50), chunks=(16, 20), seed=3)\ny = (a * 2 + 1).sum()", true},
	{"a = randint(-5, 5, size=(40, 50), chunks=(16, 20), seed=3)\ny = count_nonzero(a > 0)", true},
	{"a = randint(-5, 5, size=(40, 50), chunks=(16, 20), seed=3)\ny = (a > 0).any(axis=0)", true},
	{"a = randint(-5, 5, size=(40, 50), chunks=(16, 20), seed=3)\ny = (a < 4).all(axis=1)", true},
	{"a = uniform(-2, 3, size=(5000,), chunks=1234, seed=9)\ny = (a * a).mean()", false},
	{"a = normal(1, 2, size=(5000,), chunks=1234, seed=9)\ny = sqrt(abs(a)).min()", true},
	{"a = arange(10000, chunks=999)\ny = (a * 3 + 1).sum()", true},
	{"a = arange(10000, chunks=999)\ny = (a * 0.5).prod()", true},
	{"x = linspace(0, 1, 5001, chunks=1000)\ny = sin(x) * cos(x)", true},
	{"x = eye(70, 50, k=3, chunks=(16, 20))\ny = x * 2 + ones((70, 50), chunks=(16, 20))", true},
	{"x = arange(12.0, chunks=5).astype(float32)\ny = (x / 3).astype(int32) + 1", true},
	{"x = rand(100, 80, chunks=(30, 50), seed=4)\nr = rand(80, chunks=50, seed=5)\ny = where(x > r, x, r * 2)", true},
	{"x = rand(100, 80, chunks=(30, 50), seed=4)\nc = rand(100, 1, chunks=(30, 1), seed=6)\ny = ((x - c) ** 2).sum(axis=1)", false},
	{"x = rand(1000, chunks=300, seed=4)\ny = where(x > 0.5, x, nan)\nz = nansum(y)\nfetch y, z", false},
	{"x = rand(1000, chunks=300, seed=4)\ny = x + 1\nz = x * 2\nfetch y, z", true},
	{"x = arange(1000, chunks=300)\ny = x + 1\nz = x * 2\nw = x\nfetch y, z, w", true},
	{"x = rand(10, 0, chunks=(4, 1), seed=4)\ny = (x + 1).sum(axis=1)", true},
	{"x = zeros((3, 4), chunks=2)\ny = (x + 1).mean(axis=0)", true},
}

func TestFuseExprMatchesUnfused(t *testing.T) {
	for _, tc := range fuseSpecs {
		name := strings.ReplaceAll(tc.spec, "\n", "; ")
		t.Run(name, func(t *testing.T) {
			cg := tileSpec(t, tc.spec)
			want := computeAll(t, cg)
			for _, opt := range []Options{{FuseExpr: true}, {FuseExpr: true, Fuse: true}} {
				f := gobGraph(t, Optimize(cg, opt))
				exprs := 0
				for _, op := range f.Ops {
					if strings.Contains(op.Members(), "expr") {
						exprs++
					}
				}
				if exprs == 0 {
					t.Errorf("%+v: no expr op in the optimized graph", opt)
				}
				got := computeAll(t, f)
				for i := range want {
					if msg := sameValues(got[i], want[i], tc.exact); msg != "" {
						t.Errorf("%+v: output %s %s", opt, cg.Outputs[i].Name, msg)
					}
				}
			}
		})
	}
}
