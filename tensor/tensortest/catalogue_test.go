package tensortest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// The NumPy golden catalogue: every case of testdata/catalogue/exprs.txt,
// numpy.txt, promotion.txt (the dtype matrix) and conformance.txt is parsed, tiled and computed under
// several chunkings of its inputs, and each output is compared with what
// NumPy computed (testdata/catalogue/golden, written by gen.py), a zero with
// its sign. Cases NumPy refuses must be refused, with NumPy's message when
// the case gives it.

// A catCase is one block of exprs.txt.
type catCase struct {
	name      string
	inputs    []string // in the order the block lists them
	spec      string
	outs      []string
	shapeOnly bool // "check shape": compare dtype and shape only (empty)
	// "check unsigned-zero": compare values, a zero's sign aside (a
	// divergence from NumPy the case's comment explains)
	unsignedZero bool
	refused      bool   // "check error": NumPy raises, so marsfs must fail too
	refusal      string // "check error MESSAGE": with MESSAGE in the error
}

func loadCatalogue(t *testing.T) []catCase {
	t.Helper()
	var cases []catCase
	for _, file := range []string{"exprs.txt", "numpy.txt", "promotion.txt", "conformance.txt", "features.txt"} {
		cases = append(cases, loadCaseList(t, file)...)
	}
	return cases
}

func loadCaseList(t *testing.T, file string) []catCase {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "catalogue", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		cases []catCase
		cur   *catCase
		text  []string
	)
	flush := func() {
		if cur != nil {
			cur.spec = strings.Join(text, "\n") + "\n"
			cases = append(cases, *cur)
		}
		cur, text = nil, nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		if word == "case" {
			flush()
			cur = &catCase{name: strings.TrimSpace(rest), outs: []string{"y"}}
			continue
		}
		if cur == nil {
			t.Fatalf("%s:%d: %q outside a case", file, n, word)
		}
		switch word {
		case "in":
			name, _, _ := strings.Cut(rest, "=")
			cur.inputs = append(cur.inputs, strings.TrimSpace(name))
		case "spec":
			text = append(text, rest)
		case "np":
		case "out":
			cur.outs = strings.Fields(rest)
		case "check":
			cur.shapeOnly = strings.TrimSpace(rest) == "shape"
			cur.unsignedZero = strings.TrimSpace(rest) == "unsigned-zero"
			verdict, msg, _ := strings.Cut(strings.TrimSpace(rest), " ")
			cur.refused = verdict == "error" || verdict == "raise"
			cur.refusal = strings.TrimSpace(msg)
		default:
			t.Fatalf("%s:%d: unknown word %q", file, n, word)
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func loadGolden(t *testing.T, c, file string) *tensor.Array {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "catalogue", "golden", c, file+".npy"))
	if err != nil {
		t.Fatalf("%v (run gen.py after changing exprs.txt)", err)
	}
	a, err := codec.ReadNPY(bytes.NewReader(raw), 0)
	if err != nil {
		t.Fatalf("golden %s/%s: %v", c, file, err)
	}
	return a
}

// A chunking mode cuts the inputs of a case and gives the chunks= of its
// creators.
type catMode struct {
	name    string
	creator string // substituted for {c}
	// chunks cuts input a, the k-th input of the case.
	chunks func(k int, a *tensor.Array) [][]int
	// viaJSON sends the spec through its JSON form: the parsed graph is
	// rendered with Graph.JSON and parsed again before tiling.
	viaJSON bool
}

var catModes = []catMode{
	{name: "one", creator: "1000", chunks: func(k int, a *tensor.Array) [][]int { return cutEach(a.Shape, func(n int) []int { return []int{n} }) }},
	{name: "ragged", creator: "3", chunks: func(k int, a *tensor.Array) [][]int { return cutEach(a.Shape, raggedChunks) }},
	{name: "elem", creator: "1", chunks: elemChunks},
	// Inputs chunked unlike each other, so that elementwise operands,
	// concatenations and products must realign their chunks.
	{name: "mixed", creator: "2", chunks: func(k int, a *tensor.Array) [][]int {
		cut := []func(int) []int{raggedChunks, func(n int) []int { return spec.RegularChunks(n, 2) }, func(n int) []int { return []int{n} }}[k%3]
		return cutEach(a.Shape, cut)
	}},
	{name: "json", creator: "3", chunks: func(k int, a *tensor.Array) [][]int { return cutEach(a.Shape, raggedChunks) }, viaJSON: true},
}

func cutEach(shape []int, cut func(n int) []int) [][]int {
	chunks := make([][]int, len(shape))
	for ax, n := range shape {
		chunks[ax] = cut(n)
	}
	return chunks
}

// elemChunks puts one element in a chunk when a is small (at most 64
// elements); larger inputs get one element a chunk along their first axis
// only, the other axes whole.
func elemChunks(k int, a *tensor.Array) [][]int {
	if a.Len() <= 64 {
		return cutEach(a.Shape, func(n int) []int { return spec.RegularChunks(n, 1) })
	}
	chunks := cutEach(a.Shape, func(n int) []int { return []int{n} })
	chunks[0] = spec.RegularChunks(a.Shape[0], 1)
	return chunks
}

// raggedChunks cuts an axis into chunks of n/2+1, so that the last chunk is
// smaller (n >= 3), or into single elements for n == 2.
func raggedChunks(n int) []int {
	if n <= 1 {
		return []int{n}
	}
	size := n/2 + 1
	if size >= n {
		size = n - 1
	}
	return spec.RegularChunks(n, size)
}

// catEnv holds a case's inputs as stored chunks, as a session would.
type catEnv struct {
	tensors spec.Env
	chunks  map[uint64]*tensor.Array
	next    uint64
}

func newCatEnv() *catEnv {
	return &catEnv{tensors: map[string]*tensor.TiledTensor{}, chunks: map[uint64]*tensor.Array{}, next: 1000}
}

// store uploads a as a session would: ConstGraph cuts it into const
// operands, whose chunks are kept under fresh global IDs.
func (e *catEnv) store(t *testing.T, name string, a *tensor.Array, chunks [][]int) {
	t.Helper()
	cg, err := tile.Const(name, a, chunks)
	if err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
	tt := cg.Outputs[0]
	for i, key := range tt.Keys {
		c, err := kernel.Run(context.Background(), cg.Ops[key], nil)
		if err != nil {
			t.Fatalf("upload %s: %v", name, err)
		}
		e.next++
		e.chunks[e.next] = c
		tt.Keys[i] = e.next
	}
	e.tensors[name] = &tt
}

func (e *catEnv) stored(id uint64) (*tensor.Array, error) {
	a, ok := e.chunks[id]
	if !ok {
		return nil, fmt.Errorf("no stored chunk %d", id)
	}
	return a, nil
}

func TestCatalogue(t *testing.T) {
	cases := loadCatalogue(t)
	if len(cases) < 120 {
		t.Fatalf("only %d cases", len(cases))
	}
	exprs := catExprOps
	defer func() {
		// Most cases have elementwise ops that fuse with their scalars.
		if n := catExprOps - exprs; n < len(cases) {
			t.Errorf("the fused runs made only %d expr ops for %d cases", n, len(cases))
		} else {
			t.Logf("the fused runs made %d expr ops", n)
		}
	}()
	for _, c := range cases {
		ins := make(map[string]*tensor.Array, len(c.inputs))
		for _, name := range c.inputs {
			ins[name] = loadGolden(t, c.name, "in_"+name)
		}
		wants := make([]*tensor.Array, len(c.outs))
		for i, name := range c.outs {
			wants[i] = loadGolden(t, c.name, "out_"+name)
		}
		if c.refused {
			t.Run(c.name+"/refused", func(t *testing.T) {
				env := newCatEnv()
				for k, name := range c.inputs {
					env.store(t, name, ins[name], catModes[0].chunks(k, ins[name]))
				}
				for _, o := range catOptims {
					text := strings.ReplaceAll(c.spec, "{c}", catModes[0].creator)
					if err := specError(text, env, o.opt); err == nil {
						t.Errorf("NumPy refuses this spec, marsfs accepted it%s:\n%s", o.name, c.spec)
					} else if !strings.Contains(err.Error(), c.refusal) {
						t.Errorf("marsfs refuses this spec%s with %q, NumPy with %q:\n%s", o.name, err, c.refusal, c.spec)
					}
				}
			})
			continue
		}
		for _, m := range catModes {
			for _, o := range catOptims {
				t.Run(c.name+"/"+m.name+o.name, func(t *testing.T) {
					env := newCatEnv()
					for k, name := range c.inputs {
						env.store(t, name, ins[name], m.chunks(k, ins[name]))
					}
					text := strings.ReplaceAll(c.spec, "{c}", m.creator)
					if m.viaJSON {
						text = specJSON(t, text, env)
					}
					got := runSpecWith(t, text, env, o.opt)
					for i, name := range c.outs {
						g, ok := got[name]
						if !ok {
							t.Fatalf("no output %q", name)
						}
						if err := compareGolden(g, wants[i], c.shapeOnly); err != nil {
							t.Errorf("%s: %v", name, err)
						} else if err := sameZeroSigns(g, wants[i]); err != nil && !c.shapeOnly && !c.unsignedZero {
							t.Errorf("%s: %v", name, err)
						}
					}
				})
			}
		}
	}
}

// sameZeroSigns reports a zero of got whose sign differs from want's, as
// -0.0 from 0.0 (their values compare equal).
func sameZeroSigns(got, want *tensor.Array) error {
	if !want.DType.IsFloat() || got.Len() != want.Len() {
		return nil
	}
	for i := range want.Len() {
		if g, w := got.Float64At(i), want.Float64At(i); g == 0 && w == 0 && math.Signbit(g) != math.Signbit(w) {
			return fmt.Errorf("element %d (%v) = %v, want %v: the sign of zero", i, tensor.Unravel(i, want.Shape), g, w)
		}
	}
	return nil
}

// specJSON returns the JSON form of spec.
func specJSON(t *testing.T, text string, env *catEnv) string {
	t.Helper()
	g, err := lang.Parse(text, env.tensors)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	js, err := g.JSON()
	if err != nil {
		t.Fatalf("json: %v\n%s", err, text)
	}
	return string(js)
}

// catOptims are the graph optimizations every case runs under: none, and
// both fusions (their ops sent through gob, as to a worker).
var catOptims = []struct {
	name string
	opt  fuse.Options
}{
	{"", fuse.Options{}},
	{"/fused", fuse.Options{Fuse: true, FuseExpr: true}},
}

// catExprOps counts the expr ops the fused runs computed.
var catExprOps int

// specError parses, tiles, optimizes and computes spec and returns the
// first error.
func specError(text string, env *catEnv, opt fuse.Options) error {
	g, err := lang.Parse(text, env.tensors)
	if err != nil {
		return err
	}
	_, err = ComputeGraph(context.Background(), g, env.tensors, env.stored, opt, nil)
	return err
}

// runSpec parses, tiles and computes spec and returns its outputs by name.
func runSpec(t *testing.T, text string, env *catEnv) map[string]*tensor.Array {
	t.Helper()
	return runSpecWith(t, text, env, fuse.Options{})
}

// runSpecWith is runSpec with the optimizations of opt; the optimized ops
// go through gob first when any is on.
func runSpecWith(t *testing.T, text string, env *catEnv, opt fuse.Options) map[string]*tensor.Array {
	t.Helper()
	g, err := lang.Parse(text, env.tensors)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	got, err := ComputeGraph(context.Background(), g, env.tensors, env.stored, opt, func(cg *chunk.Graph) {
		if opt.Fuse || opt.FuseExpr {
			for i, op := range cg.Ops {
				cg.Ops[i] = gobRoundTrip(t, op)
				if strings.Contains(op.Name(), "expr") {
					catExprOps++
				}
			}
		}
	})
	if err != nil {
		t.Fatalf("compute: %v", err)
	}
	return got
}

// compareGolden reports the first way got differs from want: dtype, shape,
// then values (exact for ints and bools; for floats within a relative
// tolerance of 1e-3 for float16 (an ulp: NumPy rounds each partial sum
// of a chunk, marsfs each chunk's), 1e-6 for float32 and 1e-12 for
// float64, and as much absolute
// tolerance for results near zero, where sums cancel; infinities equal and
// NaNs in the same places).
func compareGolden(got, want *tensor.Array, shapeOnly bool) error {
	if got.DType != want.DType {
		return fmt.Errorf("dtype %v, want %v", got.DType, want.DType)
	}
	if !slices.Equal(got.Shape, want.Shape) {
		return fmt.Errorf("shape %v, want %v", got.Shape, want.Shape)
	}
	if err := got.Check(); err != nil {
		return err
	}
	if shapeOnly {
		return nil
	}
	if !want.DType.IsFloat() {
		for i := 0; i < want.Len(); i++ {
			if g, w := got.Float64At(i), want.Float64At(i); g != w || got.DType == tensor.Int64 && got.Int64s()[i] != want.Int64s()[i] ||
				got.DType == tensor.Uint64 && got.Uint64s()[i] != want.Uint64s()[i] {
				return fmt.Errorf("element %d (%v) = %v, want %v", i, tensor.Unravel(i, want.Shape), g, w)
			}
		}
		return nil
	}
	rtol := 1e-12
	switch want.DType {
	case tensor.Float16:
		rtol = 1e-3
	case tensor.Float32:
		rtol = 1e-6
	}
	for i := 0; i < want.Len(); i++ {
		g, w := got.Float64At(i), want.Float64At(i)
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				return fmt.Errorf("element %d (%v) = %v, want %v", i, tensor.Unravel(i, want.Shape), g, w)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				return fmt.Errorf("element %d (%v) = %v, want %v", i, tensor.Unravel(i, want.Shape), g, w)
			}
		case math.Abs(g-w) > rtol*(math.Abs(w)+1):
			return fmt.Errorf("element %d (%v) = %.17g, want %.17g", i, tensor.Unravel(i, want.Shape), g, w)
		}
	}
	return nil
}

// TestCatalogueRandom checks the random generators, whose values cannot match
// NumPy's: dtype, shape and range, rough moments, the same values whatever
// the chunking, and different values for different seeds.
func TestCatalogueRandom(t *testing.T) {
	const n = 20 * 15
	cases := []struct {
		name, spec string
		dtype      tensor.DType
		lo, hi     float64 // every value in [lo, hi)
		mean, std  float64 // expected moments
	}{
		{"rand", "y = rand(20, 15, chunks={c}, seed={s})", tensor.Float64, 0, 1, 0.5, math.Sqrt(1.0 / 12)},
		{"randn", "y = randn(20, 15, chunks={c}, seed={s})", tensor.Float64, math.Inf(-1), math.Inf(1), 0, 1},
		{"randint", "y = randint(-3, 7, size=(20, 15), chunks={c}, seed={s})", tensor.Int64, -3, 7, 1.5, math.Sqrt((10*10 - 1) / 12.0)},
		{"uniform", "y = uniform(-2, 3, size=(20, 15), chunks={c}, seed={s})", tensor.Float64, -2, 3, 0.5, 5 / math.Sqrt(12)},
		{"normal", "y = normal(5, 2, size=(20, 15), chunks={c}, seed={s})", tensor.Float64, math.Inf(-1), math.Inf(1), 5, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var first *tensor.Array
			for _, chunks := range []string{"1000", "7", "(3, 4)", "1"} {
				text := strings.NewReplacer("{c}", chunks, "{s}", "42").Replace(tc.spec)
				y := runSpec(t, text, newCatEnv())["y"]
				if y == nil {
					t.Fatalf("chunks=%s: no output y", chunks)
				}
				if y.DType != tc.dtype || !slices.Equal(y.Shape, []int{20, 15}) {
					t.Fatalf("chunks=%s: %v%v, want %v[20 15]", chunks, y.DType, y.Shape, tc.dtype)
				}
				// Fused into the multiplication, the generator makes the
				// same values block by block.
				fused := strings.Replace(text, "y = ", "y = 1 * ", 1)
				yf := runSpecWith(t, fused, newCatEnv(), catOptims[1].opt)["y"]
				if yf == nil || !bytes.Equal(yf.Data, y.Data) {
					t.Errorf("chunks=%s: fused into 1 * x, other values", chunks)
				}
				if first == nil {
					first = y
					sum, sq := 0.0, 0.0
					for i := 0; i < n; i++ {
						v := y.Float64At(i)
						if v < tc.lo || v >= tc.hi || math.IsNaN(v) {
							t.Fatalf("element %d = %v, outside [%v, %v)", i, v, tc.lo, tc.hi)
						}
						sum += v
						sq += v * v
					}
					mean := sum / n
					std := math.Sqrt(sq/n - mean*mean)
					// Five standard errors of the mean; 20% on the deviation.
					if math.Abs(mean-tc.mean) > 5*tc.std/math.Sqrt(n) || math.Abs(std-tc.std) > 0.2*tc.std {
						t.Errorf("mean %.3f std %.3f, want about %.3f and %.3f", mean, std, tc.mean, tc.std)
					}
					continue
				}
				if !bytes.Equal(y.Data, first.Data) {
					t.Errorf("chunks=%s gives other values than chunks=1000", chunks)
				}
			}
			other := runSpec(t, strings.NewReplacer("{c}", "7", "{s}", "43").Replace(tc.spec), newCatEnv())["y"]
			if other != nil && bytes.Equal(other.Data, first.Data) {
				t.Error("seeds 42 and 43 give the same values")
			}
		})
	}
}
