package tensortest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// tileSpec parses and tiles spec with no session tensors.
func tileSpec(t *testing.T, text string) *chunk.Graph {
	t.Helper()
	g, err := lang.Parse(text, nil)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		t.Fatalf("tile: %v\n%s", err, text)
	}
	return cg
}

// gobGraph sends every op of cg through gob, as the runtime sends ops to
// workers.
func gobGraph(t *testing.T, cg *chunk.Graph) *chunk.Graph {
	t.Helper()
	out := &chunk.Graph{Outputs: cg.Outputs}
	for _, op := range cg.Ops {
		out.Ops = append(out.Ops, gobRoundTrip(t, op))
	}
	return out
}

func computeAll(t *testing.T, cg *chunk.Graph) []*tensor.Array {
	t.Helper()
	outs, err := Compute(context.Background(), cg, nil)
	if err != nil {
		t.Fatalf("compute: %v", err)
	}
	return outs
}

// sameValues reports how got differs from want: bit for bit when exact,
// else within the rounding a reassociated float sum may bring.
func sameValues(got, want *tensor.Array, exact bool) string {
	if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		return fmt.Sprintf("made %v%v, want %v%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	if exact || !got.DType.IsFloat() {
		if !bytes.Equal(got.Data, want.Data) {
			for i := 0; i < got.Len(); i++ {
				if g, w := got.Float64At(i), want.Float64At(i); g != w && !(g != g && w != w) {
					return fmt.Sprintf("differs at element %d: %v, want %v", i, g, w)
				}
			}
			if !bytes.Equal(got.Data, want.Data) && got.DType != tensor.Float32 && got.DType != tensor.Float64 {
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

// checkOutputs checks that graph f computes want, the values of outputs;
// label names the case in errors.
func checkOutputs(t *testing.T, f *chunk.Graph, outputs []tensor.TiledTensor, want []*tensor.Array, exact bool, label string) {
	t.Helper()
	got := computeAll(t, f)
	for i := range want {
		if msg := sameValues(got[i], want[i], exact); msg != "" {
			t.Errorf("%s: output %s %s", label, outputs[i].Name, msg)
		}
	}
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
	{"x = randn(3000, chunks=1000, seed=2)\ny = (x * 3 + 1).var()", false},
	{"x = randn(300, 70, chunks=(128, 30), seed=2)\ny = (x * 3 + 1).std(axis=0, ddof=1)", false},
	{"x = randn(300, 70, chunks=(128, 30), seed=2)\ny = (x * 3 + 1).var(axis=1, keepdims=True)", false},
	{"x = rand(9000, chunks=5000, seed=3)\ny = (x * 3).var()", false},
	{"x = randn(30, 7, 9, chunks=(8, 3, 4), seed=5)\ny = abs(x).var(axis=(0, 2))", false},
	{"x = rand(3000, 4, chunks=(1000, 4), seed=4)\ny = nanmean(where(x > 0.3, x, nan), axis=0)", false},
	{"x = rand(9000, chunks=5000, seed=4)\ny = nanmean(where(x > 0.3, x * 2, nan))", false},
	{"x = rand(30, 40, chunks=(16, 40), seed=4)\ny = nanmean(where(x > 0.3, x, nan), axis=1)", false},
	// Sibling reductions of one value, made in one pass.
	{"x = rand(200, 50, chunks=(20, 10), seed=1)\ns = x.sum(axis=0)\nm = x.mean(axis=1)\nfetch s, m", false},
	{"x = randn(60, 40, chunks=(16, 20), seed=2)\ny = abs(x) + 1\na = y.var(axis=0)\nb = y.max(axis=1)\nc = y.sum()\nfetch a, b, c", false},
	{"x = rand(300, 40, chunks=(100, 16), seed=4)\ny = where(x > 0.3, x, nan)\na = nanmean(y, axis=0)\nb = nansum(y, axis=1)\nfetch a, b", false},
	{"x = arange(1000, chunks=300)\na = x.min()\nb = x.max()\nfetch a, b", true},
	// Means of booleans add their bytes.
	{"x = rand(10000, chunks=3000, seed=1)\ny = rand(10000, chunks=3000, seed=2)\npi = 4 * ((x*x + y*y) < 1).mean()", true},
	{"x = rand(300, 70, chunks=(128, 30), seed=5)\na = (x > 0.2).mean(axis=0)\nb = (x < 0.7).mean(axis=1)\nfetch a, b", true},
}

func TestFuseExprMatchesUnfused(t *testing.T) {
	for _, tc := range fuseSpecs {
		name := strings.ReplaceAll(tc.spec, "\n", "; ")
		t.Run(name, func(t *testing.T) {
			cg := tileSpec(t, tc.spec)
			want := computeAll(t, cg)
			for _, opt := range []fuse.Options{{FuseExpr: true}, {FuseExpr: true, Fuse: true}} {
				f := gobGraph(t, fuse.Optimize(cg, opt))
				exprs := 0
				for _, op := range f.Ops {
					if strings.Contains(op.Name(), "expr") {
						exprs++
					}
				}
				if exprs == 0 {
					t.Errorf("%+v: no expr op in the optimized graph", opt)
				}
				checkOutputs(t, f, cg.Outputs, want, tc.exact, fmt.Sprintf("%+v", opt))
			}
		})
	}
}

// The chunks of one expression share one program; each op keeps the
// offsets of its generators' chunks, and the edge chunk, of another shape,
// runs the same program.
func TestFuseExprSharesPrograms(t *testing.T) {
	cg := tileSpec(t, "x = rand(1000, chunks=300, seed=3)\ny = (exp(x) + arange(1000, chunks=300)).sum()")
	f := fuse.Optimize(cg, fuse.Options{FuseExpr: true})
	var first *chunk.ExprArgs
	n := 0
	for _, op := range f.Ops {
		a, ok := op.Args.(chunk.ExprArgs)
		if !ok {
			continue
		}
		// rand's and arange's chunk offsets, in program order.
		off := 300 * n
		if !slices.Equal(a.Offsets, []int{off, off}) {
			t.Errorf("expr op %d: offsets %v, want [%d %d]", n, a.Offsets, off, off)
		}
		if first == nil {
			first = &a
		} else if &a.Code[0] != &first.Code[0] || &a.Members[0] != &first.Members[0] {
			t.Errorf("expr op %d does not share the program of the first", n)
		}
		for _, in := range a.Code {
			if len(in.Gen.Offset) != 0 {
				t.Errorf("expr op %d: %s instruction carries offset %v", n, in.Op, in.Gen.Offset)
			}
		}
		n++
	}
	if n != 4 {
		t.Fatalf("%d expr ops, want 4", n)
	}
	want := computeAll(t, cg)
	got := computeAll(t, gobGraph(t, f))
	if msg := sameValues(got[0], want[0], false); msg != "" {
		t.Error(msg)
	}
}

// A group that takes the program of the group before it gets the program
// compiling it would make.
func TestFuseExprReuseIsCompile(t *testing.T) {
	specs := []string{
		"x = rand(1000, chunks=99, seed=3)\ny = (exp(x) + arange(1000, chunks=99)).sum()",
		"x = rand(40, 30, chunks=(7, 9), seed=1)\ny = ((x * 2 + 1) > 1.5).sum(axis=0)",
		"a = arange(1000, chunks=300)\nb = rand(1000, chunks=100, seed=2)\ny = where(a > 500, a, b) * b",
		// Groups alike but for a constant, a seed, the order of inputs.
		"x = rand(100, chunks=50, seed=1)\ny = x * 2\nz = x * 3\nfetch y, z",
		"a = rand(100, chunks=50, seed=1)\nb = rand(100, chunks=50, seed=2)\ny = exp(a)\nz = exp(b)\nfetch y, z",
		"a = rand(100, chunks=50, seed=1)\nb = rand(100, chunks=50, seed=2)\ny = (a - b) * 2\nz = (b - a) * 2\nw = a * b\nfetch y, z, w",
		"a = rand(100, chunks=50, seed=1)\ny = (a * 2).sum()\nz = (a * 2).astype(float32).sum()\nfetch y, z",
	}
	for _, tc := range fuseSpecs {
		specs = append(specs, tc.spec)
	}
	for _, text := range specs {
		cg := tileSpec(t, text)
		want, got := fuse.FuseExpr(cg, false), fuse.FuseExpr(cg, true)
		if len(got.Ops) != len(want.Ops) {
			t.Fatalf("%q: %d ops, %d compiling every group", text, len(got.Ops), len(want.Ops))
		}
		for k, op := range got.Ops {
			w := want.Ops[k]
			if op.Kind != w.Kind || !slices.Equal(op.Inputs, w.Inputs) || !slices.Equal(op.Shape, w.Shape) ||
				op.DType != w.DType || op.Node != w.Node || fmt.Sprintf("%+v", op.Args) != fmt.Sprintf("%+v", w.Args) {
				// (Printed, the args compare NaNs alike, and floats exactly.)
				t.Errorf("%q: op %d is %+v, compiling every group makes %+v", text, k, op, w)
			}
		}
	}
}

// kinds counts the ops of cg by Name().
func kinds(cg *chunk.Graph) map[string]int {
	m := map[string]int{}
	for _, op := range cg.Ops {
		m[op.Name()]++
	}
	return m
}

func TestFuseExprSeedsExample(t *testing.T) {
	cg := tileSpec(t, "a = rand(10, chunks=5, seed=1)\nb = rand(10, chunks=5, seed=2)\ny = (a + b).sum()")
	// Mars' rule: ADD and SUM fuse, the RAND operands do not.
	chain := kinds(fuse.Optimize(cg, fuse.Options{Fuse: true}))
	if chain[tensor.OpRand] != 4 || chain["fuse(add+sum.map)"] != 2 {
		t.Errorf("chain fusion gives %v, want 4 rand and 2 fuse(add+sum.map)", chain)
	}
	// Past Mars: the generators fuse into the consuming kernel.
	both := kinds(fuse.Optimize(cg, fuse.Options{Fuse: true, FuseExpr: true}))
	want := map[string]int{"expr(rand+rand+add+sum.map)": 2, "fuse(sum.combine+sum.final)": 1}
	if len(both) != len(want) {
		t.Errorf("expression fusion gives %v, want %v", both, want)
	}
	for k, n := range want {
		if both[k] != n {
			t.Errorf("expression fusion gives %v, want %v", both, want)
		}
	}
}

func TestFuseExprSharing(t *testing.T) {
	cases := []struct {
		name, spec string
		want       map[string]int // ops by Members() that must be present
		absent     []string       // kinds that must not be
	}{
		// A rand chunk read by several groups is drawn again in each ...
		{"shared rand", "x = rand(10, chunks=5, seed=1)\ny = x + 1\nz = x * 2\nfetch y, z",
			map[string]int{"expr(rand+full+add)": 2, "expr(rand+full+multiply)": 2}, []string{"rand"}},
		{"shared rand, reduced", "x = rand(10, chunks=5, seed=1)\ny = (x * 2).max()\nz = x.min()\nfetch y, z",
			map[string]int{"expr(rand+full+multiply+max.map)": 2, "expr(rand+min.map)": 2}, []string{"rand"}},
		// ... but for an output, which exists anyway, one read by many ...
		{"rand read by many", "x = rand(10, chunks=5, seed=1)\na = x + 1\nb = x + 2\nc = x + 3\nd = x + 4\ne = x + 5\nfetch a, b, c, d, e",
			map[string]int{"rand": 2, "expr(full+add)": 10}, nil},
		{"rand output", "x = rand(10, chunks=5, seed=1)\ny = x + 1\nz = x.min()\nfetch x, y, z",
			map[string]int{"rand": 2, "expr(full+add)": 2, "min.map": 2}, nil},
		// ... and a normal one, which costs more to draw than to read.
		{"shared randn", "x = randn(10, chunks=5, seed=1)\ny = x + 1\nz = x * 2\nfetch y, z",
			map[string]int{"randn": 2, "expr(full+add)": 2, "expr(full+multiply)": 2}, nil},
		// An arange is copied into each group that reads it and dropped.
		{"copied arange", "x = arange(10, chunks=5)\ny = x + 1\nz = x * 2\nfetch y, z",
			map[string]int{"expr(arange+full+add)": 2, "expr(arange+full+multiply)": 2}, []string{"arange", "full"}},
		// ... unless it is an output itself.
		{"arange output", "x = arange(10, chunks=5)\ny = x + 1\nfetch x, y",
			map[string]int{"arange": 2, "expr(arange+full+add)": 2}, nil},
		// An output is never absorbed: its chunk must exist.
		{"output kept", "x = rand(10, chunks=5, seed=1)\ny = x + 1\nz = y * 2\nfetch y, z",
			map[string]int{"expr(rand+full+add)": 2, "expr(full+multiply)": 2}, []string{"rand"}},
		// Ops of another shape are read as inputs, broadcast block by block.
		{"broadcast", "x = rand(4, 6, chunks=(2, 6), seed=1)\nr = rand(6, chunks=6, seed=2)\ny = exp(r)\nz = (x - y).max(axis=1)\nfetch z",
			map[string]int{"expr(rand+subtract+max.map)": 2, "expr(rand+exp)": 1}, nil},
		// var, std and nanmean end programs too; argmax does not.
		{"moments", "x = randn(10, chunks=5, seed=1)\ny = (x * 2).var()\nz = nanmean(x + 1)\nw = (x - 1).argmax()\nfetch y, z, w",
			map[string]int{"expr(full+multiply+var.map)": 2, "expr(full+add+nanmean.map)": 2, "expr(full+subtract)": 2, "argmax.map": 2, "randn": 2}, nil},
		// A reduction with no elementwise input stays as it is.
		{"plain reduction", "x = rand(10, chunks=5, seed=1)\ny = x.sum()\nfetch x, y",
			map[string]int{"rand": 2, "sum.map": 2}, []string{"expr"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cg := tileSpec(t, tc.spec)
			f := fuse.Expr(cg)
			got := kinds(f)
			for k, n := range tc.want {
				if got[k] != n {
					t.Errorf("%d %q ops, want %d; graph has %v", got[k], k, n, got)
				}
			}
			for _, k := range tc.absent {
				for g := range got {
					if g == k || strings.HasPrefix(g, k+"(") {
						t.Errorf("graph still has %q ops: %v", g, got)
					}
				}
			}
			want := computeAll(t, cg)
			for i, g := range computeAll(t, gobGraph(t, f)) {
				if msg := sameValues(g, want[i], true); msg != "" {
					t.Errorf("output %s %s", cg.Outputs[i].Name, msg)
				}
			}
		})
	}
}

// w1Op is the expr op of one chunk of ((a + b) * 2 - a / 3).sum() over a
// stored a and a generated b, with its input.
func w1Op(t *testing.T) (*chunk.Op, []*tensor.Array) {
	t.Helper()
	x := tensor.NewArray(tensor.Float64, []int{100})
	for i, v := range x.Float64s() {
		x.Float64s()[i] = v + float64(i)
	}
	cg := &chunk.Graph{Ops: []*chunk.Op{{Key: 0, Kind: chunk.KindStored, Stored: 1, Shape: []int{100}, DType: tensor.Float64}}}
	// a stored, b = rand(100): the graph Tile makes for one chunk.
	cg.Ops = append(cg.Ops,
		&chunk.Op{Key: 1, Kind: chunk.KindRand, Shape: []int{100}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0}, Global: []int{100}, Seed: 2}},
		&chunk.Op{Key: 2, Kind: tensor.OpAdd, Inputs: []int{0, 1}, Shape: []int{100}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}},
		&chunk.Op{Key: 3, Kind: chunk.KindFull, Shape: []int{}, DType: tensor.Int64, Args: chunk.GenArgs{Offset: []int{}, Global: []int{}, IntValue: 2}},
		&chunk.Op{Key: 4, Kind: tensor.OpMultiply, Inputs: []int{2, 3}, Shape: []int{100}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}},
		&chunk.Op{Key: 5, Kind: chunk.KindFull, Shape: []int{}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{}, Global: []int{}, Value: 3}},
		&chunk.Op{Key: 6, Kind: tensor.OpDivide, Inputs: []int{0, 5}, Shape: []int{100}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}},
		&chunk.Op{Key: 7, Kind: tensor.OpSubtract, Inputs: []int{4, 6}, Shape: []int{100}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}},
		&chunk.Op{Key: 8, Kind: "sum.map", Inputs: []int{7}, Shape: []int{1}, DType: tensor.Float64, Args: chunk.ReduceArgs{Op: tensor.OpSum, In: tensor.Float64, Axes: []int{0}}},
	)
	cg.Outputs = []tensor.TiledTensor{{Name: "p", Shape: []int{1}, DType: tensor.Float64, Chunks: [][]int{{1}}, Keys: []uint64{8}}}
	f := fuse.Expr(cg)
	if len(f.Ops) != 2 || f.Ops[1].Kind != chunk.KindExpr {
		t.Fatalf("fused graph %v", kinds(f))
	}
	want, err := Compute(context.Background(), cg, func(uint64) (*tensor.Array, error) { return x, nil })
	if err != nil {
		t.Fatal(err)
	}
	op := gobRoundTrip(t, f.Ops[1])
	got, err := kernel.Run(context.Background(), op, []*tensor.Array{x})
	if err != nil {
		t.Fatal(err)
	}
	if msg := sameValues(got, want[0], false); msg != "" {
		t.Fatalf("expr op %s", msg)
	}
	return op, []*tensor.Array{x}
}

// cloneExpr deep-copies op's program so that a test can break it.
func cloneExpr(op *chunk.Op) (*chunk.Op, *chunk.ExprArgs) {
	c := *op
	a := op.Args.(chunk.ExprArgs)
	a.Shape = append([]int(nil), a.Shape...)
	a.Code = append([]chunk.ExprInstr(nil), a.Code...)
	a.Offsets = append([]int(nil), a.Offsets...)
	for i := range a.Code {
		in := &a.Code[i]
		in.Src = append([]int(nil), in.Src...)
		in.Axes = append([]int(nil), in.Axes...)
		in.Gen.Offset = append([]int(nil), in.Gen.Offset...)
		in.Gen.Global = append([]int(nil), in.Gen.Global...)
	}
	return &c, &a
}

// find returns the index of the first instruction of op.
func find(a *chunk.ExprArgs, op string) int {
	for i, in := range a.Code {
		if in.Op == op {
			return i
		}
	}
	panic("no " + op)
}

func TestExprBadPrograms(t *testing.T) {
	good, in := w1Op(t)
	last := func(a *chunk.ExprArgs) *chunk.ExprInstr { return &a.Code[len(a.Code)-1] }
	cases := []struct {
		name   string
		break_ func(op *chunk.Op, a *chunk.ExprArgs) []*tensor.Array
	}{
		{"block not a power of two", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Block = 1000; return in }},
		{"block too small", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Block = 0; return in }},
		{"negative registers", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Regs = -1; return in }},
		{"no code", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code = nil; return in }},
		{"negative dimension", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Shape = []int{-100}; return in }},
		{"huge shape", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Shape = []int{1 << 40, 1 << 40}; return in }},
		{"shape unlike the input", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Shape = []int{50}; return in }},
		{"unknown instruction", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code[0].Op = "jump"; return in }},
		{"register out of range", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprElem)].Src[0] = 99
			return in
		}},
		{"negative register", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprElem)].Src[1] = -3
			return in
		}},
		{"destination out of range", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code[0].Dst = a.Regs; return in }},
		{"output written early", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code[0].Dst = -1; return in }},
		{"unwritten register", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code = a.Code[1:]; return in }},
		{"read and write one register", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			i := find(a, chunk.ExprElem)
			a.Code[i].Dst = a.Code[i].Src[0]
			return in
		}},
		{"constant overwritten", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			i := find(a, chunk.ExprConst)
			gen := a.Code[find(a, chunk.ExprGen)]
			gen.Dst = a.Code[i].Dst
			a.Code = slices.Insert(a.Code, i+1, gen)
			return in
		}},
		{"constant in a used register", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			i := find(a, chunk.ExprConst)
			a.Code[i].Dst = a.Code[find(a, chunk.ExprGen)].Dst
			return in
		}},
		{"unknown elementwise op", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprElem)].Kind = "frobnicate"
			return in
		}},
		{"elementwise arity", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			i := find(a, chunk.ExprElem)
			a.Code[i].Src = a.Code[i].Src[:1]
			return in
		}},
		{"mistyped operand", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprElem)].Elem.Compute = tensor.Int32
			return in
		}},
		{"invalid dtype", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code[0].DType = 99; return in }},
		{"input out of range", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprLoad)].Input = 3
			return in
		}},
		{"input of another dtype", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			return []*tensor.Array{tensor.NewArray(tensor.Int64, []int{100})}
		}},
		{"input of another shape", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			return []*tensor.Array{tensor.NewArray(tensor.Float64, []int{7})}
		}},
		{"missing input", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { return []*tensor.Array{nil} }},
		{"generator outside its tensor", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Offsets = []int{50}; return in }},
		{"generator offset rank", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Offsets = []int{0, 0}; return in }},
		{"generator without offset", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Offsets = nil; return in }},
		{"offset in the instruction", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprGen)].Gen.Offset = []int{0}
			return in
		}},
		{"unknown generator", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprGen)].Kind = "full"
			return in
		}},
		{"generator dtype", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprGen)].DType = tensor.Int32
			return in
		}},
		{"constant shape", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code[find(a, chunk.ExprConst)].Shape = []int{3}
			return in
		}},
		{"reduction axes", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { last(a).Axes = []int{1}; return in }},
		{"reduction axis twice", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { last(a).Axes = []int{0, 0}; return in }},
		{"unsupported reduction", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { last(a).Kind = tensor.OpArgmax; return in }},
		{"reduction of another kind", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { last(a).Kind = tensor.OpVar; return in }},
		{"nanmean without its values", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { last(a).Kind = tensor.OpNanmean; return in }},
		{"reduction not last", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code = append(a.Code, a.Code[0]); return in }},
		{"partial shape", func(op *chunk.Op, _ *chunk.ExprArgs) []*tensor.Array { op.Shape = []int{2}; return in }},
		{"two partials, room for one", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code = append(a.Code, *last(a)); return in }},
		{"two partials, packed shape", func(op *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code = append(a.Code, *last(a))
			op.Shape = []int{1, 2}
			return in
		}},
		{"two partials, of two dtypes", func(op *chunk.Op, a *chunk.ExprArgs) []*tensor.Array {
			a.Code = append(a.Code, *last(a))
			last(a).Kind = tensor.OpCountNonzero
			op.Shape = []int{2}
			return in
		}},
		{"partial dtype", func(op *chunk.Op, _ *chunk.ExprArgs) []*tensor.Array { op.DType = tensor.Int64; return in }},
		{"no result", func(_ *chunk.Op, a *chunk.ExprArgs) []*tensor.Array { a.Code = a.Code[:len(a.Code)-1]; return in }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			op, a := cloneExpr(good)
			ins := tc.break_(op, a)
			op.Args = *a
			_, err := runNoPanic(op, ins)
			switch {
			case err == nil:
				t.Error("broken program ran")
			case strings.HasPrefix(err.Error(), "panic"):
				t.Error(err)
			default:
				t.Log(err)
			}
		})
	}
}

func runNoPanic(op *chunk.Op, in []*tensor.Array) (out *tensor.Array, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	return kernel.Run(context.Background(), op, in)
}

// TestExprMutatedPrograms changes the numbers of a valid program at random:
// the kernel must fail or run, never panic.
func TestExprMutatedPrograms(t *testing.T) {
	good, in := w1Op(t)
	rng := uint64(12345)
	next := func(n int) int {
		rng = elem.Mix64(rng + elem.Golden)
		return int(rng % uint64(n))
	}
	small := []int{-2, -1, 0, 1, 2, 3, 5, 8, 64, 99, 100, 101, 1 << 20}
	for iter := 0; iter < 3000; iter++ {
		op, a := cloneExpr(good)
		for range 1 + next(3) {
			i := next(len(a.Code))
			ins := &a.Code[i]
			v := small[next(len(small))]
			switch next(9) {
			case 0:
				ins.Dst = v
			case 1:
				if len(ins.Src) > 0 {
					ins.Src[next(len(ins.Src))] = v
				} else {
					ins.Src = append(ins.Src, v)
				}
			case 2:
				ins.Input = v
			case 3:
				ins.DType = tensor.DType(v)
			case 4:
				ins.Elem.Compute = tensor.DType(v)
			case 5:
				if len(a.Offsets) > 0 {
					a.Offsets[0] = v
				} else {
					ins.Gen.Global = append(ins.Gen.Global, v)
				}
			case 6:
				ins.Axes = append(ins.Axes, v)
			case 7:
				a.Code[i], a.Code[next(len(a.Code))] = a.Code[next(len(a.Code))], a.Code[i]
			case 8:
				a.Regs = v
			}
		}
		op.Args = *a
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("iteration %d: panic %v with program %+v", iter, p, a.Code)
				}
			}()
			kernel.Run(context.Background(), op, in)
		}()
	}
}

// TestExprAllocsPerBlock checks that an expr kernel allocates per call,
// never per block: a chunk of 64 blocks costs the allocations of a chunk
// of 4.
func TestExprAllocsPerBlock(t *testing.T) {
	for _, text := range []string{
		"a = rand({n}, seed=1)\nb = rand({n}, seed=2)\ny = ((a + b) * 2 - a / 3).sum()",
		"a = randn({n}, 8, seed=1)\nc = arange(8.0)\ny = ((a - c) * 1.5).astype(float32).max(axis=1)",
		"a = randint(0, 9, size=({n}, 4), seed=1)\ny = (a * a).mean(axis=0)",
		"a = rand({n}, seed=1)\ny = (a * 3).var()",
		"a = rand({n}, 2, seed=1)\ny = (a * 3).std(axis=0)",
		"a = rand({n}, seed=1)\ny = nanmean(where(a > 0.5, a, nan))",
	} {
		testExprAllocs(t, text)
	}
}

func testExprAllocs(t *testing.T, text string) {
	allocs := func(n int) float64 {
		cg := tileSpec(t, strings.ReplaceAll(text, "{n}", fmt.Sprint(n)))
		op, in := firstExpr(t, fuse.Expr(cg))
		kernel.Run(context.Background(), op, in) // fill the register pool
		return testing.AllocsPerRun(5, func() {
			if _, err := kernel.Run(context.Background(), op, in); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Chunks of 4 and 64 blocks of the value shape (at most 8 columns).
	// A collection may empty the register pool during a run: a few
	// allocations more are not per block, which would be 60 more.
	small, large := allocs(chunk.ExprBlock/2), allocs(8*chunk.ExprBlock)
	if large > small+8 {
		t.Errorf("%q: %v allocations for 64 blocks, %v for 4", text, large, small)
	}
}

// TestFuseExprLongChain fuses a chain longer than a group may be: it is cut
// into several expr ops, which compute what the chain does.
func TestFuseExprLongChain(t *testing.T) {
	var b strings.Builder
	b.WriteString("x0 = rand(5000, chunks=2000, seed=1)\n")
	const n = 600
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "x%d = x%d * 1.001 + %d\n", i, i-1, i%3)
	}
	fmt.Fprintf(&b, "y = x%d.sum()\n", n)
	cg := tileSpec(t, b.String())
	f := fuse.Expr(cg)
	exprs := 0
	for _, op := range f.Ops {
		if a, ok := op.Args.(chunk.ExprArgs); ok {
			exprs++
			if len(a.Members) > fuse.MaxExprMembers {
				t.Errorf("a group of %d ops", len(a.Members))
			}
		}
	}
	if exprs < 3*(2*n+1)/fuse.MaxExprMembers {
		t.Errorf("%d expr ops for 3 chunks of %d ops", exprs, 2*n+2)
	}
	want := computeAll(t, cg)
	if msg := sameValues(computeAll(t, gobGraph(t, f))[0], want[0], false); msg != "" {
		t.Error(msg)
	}
}

func TestExprCancel(t *testing.T) {
	cg := tileSpec(t, "a = rand(100000, seed=1)\ny = (a * 2).sum()")
	op := fuse.Expr(cg).Ops[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := kernel.Run(ctx, op, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled run: %v", err)
	}
}
