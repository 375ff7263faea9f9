package tensortest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/codec"
	"marsfs/tensor/spec/lang"
)

// The property test: random programs, the same text for marsfs and for
// NumPy, over random inputs cut in random chunks, run fused or not; every
// result must equal NumPy's (dtype, shape and values, as the catalogue
// compares them), and a program NumPy refuses must be refused. The
// catalogue holds the cases someone thought of; this finds the ones
// nobody did: it found that a fused program gave zeros for an integer to
// a negative power, where NumPy raises (the catalogue's case
// power_bool_base_negative_exponent), and that maximum and minimum choose
// another zero than NumPy's between 0.0 and -0.0 (documented in marsfs.4).

var (
	propCases = flag.Int("prop-cases", 300, "random programs TestPropertyAgainstNumPy checks")
	propSeed  = flag.Uint64("prop-seed", 1, "the seed of TestPropertyAgainstNumPy's first program")
)

// A propInput is an input of a program: its name, and the NumPy code that
// makes it from rng, the case's generator.
type propInput struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// A propCase is one random program: marsfs's spec is "y = EXPR", NumPy's
// "y = EXPR" with np. before the functions.
type propCase struct {
	Seed   uint64      `json:"seed"`
	Inputs []propInput `json:"inputs"`
	Spec   string      `json:"spec"`
	NumPy  string      `json:"numpy"`
}

// propGen writes random expressions over the inputs of one case.
type propGen struct {
	r      *rand.Rand
	shapes map[string][]int
	kinds  map[string]string // "f", "i", "b"
}

// inputs draws a base shape and four inputs broadcasting to it: floats
// (with a NaN, an infinity and a -0.0 among them), float32, small ints
// (zeros among them, for // and %), and bools.
func (g *propGen) inputs() []propInput {
	rank := 1 + g.r.IntN(3)
	base := make([]int, rank)
	for i := range base {
		base[i] = 1 + g.r.IntN(6)
	}
	shapeOf := func() []int {
		s := append([]int(nil), base...)
		if g.r.IntN(3) == 0 && len(s) > 1 {
			s = s[1:] // a suffix broadcasts
		}
		for i := range s {
			if g.r.IntN(5) == 0 {
				s[i] = 1
			}
		}
		return s
	}
	tuple := func(s []int) string {
		parts := make([]string, len(s))
		for i, d := range s {
			parts[i] = fmt.Sprint(d)
		}
		return "(" + strings.Join(parts, ", ") + ",)"
	}
	g.shapes, g.kinds = map[string][]int{}, map[string]string{}
	var ins []propInput
	add := func(name, kind, code string, s []int) {
		g.shapes[name], g.kinds[name] = s, kind
		ins = append(ins, propInput{name, code})
	}
	s := shapeOf()
	add("a", "f", fmt.Sprintf("special(np.round(rng.standard_normal(%s) * 3, 2))", tuple(s)), s)
	s = shapeOf()
	add("b", "f", fmt.Sprintf("(rng.integers(-8, 9, %s) / 4).astype(np.float32)", tuple(s)), s)
	s = shapeOf()
	add("c", "i", fmt.Sprintf("rng.integers(-4, 5, %s)", tuple(s)), s)
	s = shapeOf()
	add("d", "b", fmt.Sprintf("rng.random(%s) < 0.5", tuple(s)), s)
	return ins
}

// expr returns an expression of depth at most depth, in marsfs's and
// NumPy's words.
func (g *propGen) expr(depth int) (string, string) {
	if depth == 0 || g.r.IntN(4) == 0 {
		n := []string{"a", "b", "c", "d"}[g.r.IntN(4)]
		return n, n
	}
	x, nx := g.expr(depth - 1)
	switch g.r.IntN(10) {
	case 0, 1, 2:
		y, ny := g.expr(depth - 1)
		op := []string{"+", "-", "*", "/", "//", "%", "<", ">=", "==", "!=", "&", "|", "**"}[g.r.IntN(13)]
		return "(" + x + " " + op + " " + y + ")", "(" + nx + " " + op + " " + ny + ")"
	case 8:
		// A Python number on either side: it yields to the array's
		// dtype as in NumPy 1.24.
		// (Not **: NumPy computes an array to the power of some numbers
		// by other functions, of other dtypes: bools ** 2 is int8.)
		v := []string{"2", "-3", "0", "0.5", "-0.0", "3", "True", "-1"}[g.r.IntN(8)]
		op := []string{"+", "-", "*", "/", "//", "%", "<", "&"}[g.r.IntN(8)]
		if g.r.IntN(2) == 0 {
			return "(" + x + " " + op + " " + v + ")", "(" + nx + " " + op + " " + v + ")"
		}
		return "(" + v + " " + op + " " + x + ")", "(" + v + " " + op + " " + nx + ")"
	case 3:
		f := []string{"abs", "negative", "floor", "sqrt", "exp", "isnan", "sign", "cbrt", "expm1", "sinh", "arcsinh", "signbit"}[g.r.IntN(12)]
		if f == "signbit" {
			// The sign of a NaN is how each library's loops made it, not a
			// value: signbit reads numbers.
			return "signbit(nan_to_num(" + x + "))", "np.signbit(np.nan_to_num(" + nx + "))"
		}
		return f + "(" + x + ")", "np." + f + "(" + nx + ")"
	case 4:
		y, ny := g.expr(depth - 1)
		f := []string{"maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign", "fmod", "logaddexp", "logical_xor"}[g.r.IntN(10)]
		if f == "copysign" {
			// copysign reads a NaN's sign, which is how the loops made it.
			return f + "(" + x + ", nan_to_num(" + y + "))", "np." + f + "(" + nx + ", np.nan_to_num(" + ny + "))"
		}
		return f + "(" + x + ", " + y + ")", "np." + f + "(" + nx + ", " + ny + ")"
	case 5:
		c, nc := g.expr(depth - 1)
		y, ny := g.expr(depth - 1)
		return "where(" + c + " > 0, " + x + ", " + y + ")", "np.where(" + nc + " > 0, " + nx + ", " + ny + ")"
	case 6:
		dt := []string{"float32", "float64", "int64", "int32", "bool"}[g.r.IntN(5)]
		// NumPy casts NaN and infinities to integers as the CPU does:
		// keep the values finite and small before an integer cast.
		if dt == "int64" || dt == "int32" {
			return "clip(nan_to_num(" + x + "), -100, 100).astype(\"" + dt + "\")",
				"np.clip(np.nan_to_num(" + nx + "), -100, 100).astype(\"" + dt + "\")"
		}
		return x + ".astype(\"" + dt + "\")", "(" + nx + ").astype(\"" + dt + "\")"
	case 7:
		return x + "[::-1]", "np.asarray(" + nx + ")[::-1]"
	default:
		return "(" + x + " * 1)", "(" + nx + " * 1)"
	}
}

// program returns a case's spec: an expression, reduced or not.
func (g *propGen) program() (string, string) {
	x, nx := g.expr(3)
	// The expression reads an input, so it has rank 1 at least: a
	// reduction over all of it, or along its last axis, is valid.
	switch g.r.IntN(6) {
	case 0:
		f := []string{"sum", "mean", "max", "min", "prod", "std", "var", "any", "all"}[g.r.IntN(9)]
		return "y = (" + x + ")." + f + "()", "y = np.asarray(" + nx + ")." + f + "()"
	case 1:
		f := []string{"sum", "mean", "max", "min", "argmax", "argmin", "cumsum", "nansum", "cumprod"}[g.r.IntN(9)]
		keep := ""
		if f != "cumsum" && f != "cumprod" && f != "argmax" && f != "argmin" && g.r.IntN(2) == 0 {
			keep = ", keepdims=True"
		}
		if f == "nansum" {
			return "y = nansum(" + x + ", axis=-1" + keep + ")", "y = np.nansum(" + nx + ", axis=-1" + keep + ")"
		}
		return "y = (" + x + ")." + f + "(axis=-1" + keep + ")", "y = np.asarray(" + nx + ")." + f + "(axis=-1" + keep + ")"
	}
	return "y = " + x, "y = np.asarray(" + nx + ")"
}

const propPython = `
import json, os, sys, warnings
import numpy as np
d = sys.argv[1]
def special(x):
    f = x.reshape(-1)
    if f.size >= 3:
        f[0], f[1], f[2] = np.nan, np.inf, -0.0
    return x
cases = json.load(open(os.path.join(d, "cases.json")))
for i, c in enumerate(cases):
    out = os.path.join(d, str(i))
    os.mkdir(out)
    rng = np.random.default_rng(c["seed"])
    ns = {"np": np, "special": special, "rng": rng}
    for inp in c["inputs"]:
        v = np.asarray(eval(inp["code"], ns))
        ns[inp["name"]] = v
        np.save(os.path.join(out, "in_" + inp["name"] + ".npy"), v)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(c["numpy"], ns)
        np.save(os.path.join(out, "y.npy"), np.asarray(ns["y"]))
    except Exception as e:
        open(os.path.join(out, "error"), "w").write(type(e).__name__ + ": " + str(e))
`

// TestPropertyAgainstNumPy runs -prop-cases random programs from
// -prop-seed on, each in marsfs (random chunks, fused or not) and in
// NumPy, and compares them.
func TestPropertyAgainstNumPy(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with NumPy")
	}
	cases := make([]propCase, *propCases)
	gens := make([]*propGen, len(cases))
	for i := range cases {
		seed := *propSeed + uint64(i)
		g := &propGen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
		ins := g.inputs()
		s, n := g.program()
		cases[i], gens[i] = propCase{Seed: seed, Inputs: ins, Spec: s, NumPy: n}, g
	}
	dir := t.TempDir()
	raw, _ := json.Marshal(cases)
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-c", propPython, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	load := func(p string) *tensor.Array {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		a, err := codec.ReadNPY(bytes.NewReader(b), 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return a
	}
	var wrong, refused, bothRefused int
	for i, c := range cases {
		cdir := filepath.Join(dir, fmt.Sprint(i))
		r := gens[i].r
		env := newCatEnv()
		for _, in := range c.Inputs {
			a := load(filepath.Join(cdir, "in_"+in.Name+".npy"))
			env.store(t, in.Name, a, cutEach(a.Shape, func(n int) []int { return randomCuts(r, n) }))
		}
		opt := catOptims[r.IntN(len(catOptims))]
		desc := fmt.Sprintf("seed %d%s: %s\n  numpy: %s", c.Seed, opt.name, c.Spec, c.NumPy)
		var got *tensor.Array
		g, err := lang.Parse(c.Spec+"\n", env.tensors)
		if err == nil {
			var outs map[string]*tensor.Array
			outs, err = ComputeGraph(t.Context(), g, env.tensors, env.stored, opt.opt, nil)
			got = outs["y"]
		}
		npErr, npFailed := os.ReadFile(filepath.Join(cdir, "error"))
		switch {
		case npFailed == nil && err != nil:
			bothRefused++
		case npFailed == nil:
			wrong++
			t.Errorf("%s\n  NumPy raised %s; marsfs gave %v%v", desc, npErr, got.DType, got.Shape)
		case err != nil:
			refused++
			if !strings.Contains(err.Error(), "not supported") {
				t.Errorf("%s\n  marsfs refused it: %v", desc, err)
			}
		default:
			// Which zero maximum and minimum (and fmax, fmin, max, min)
			// choose between 0.0 and -0.0 NumPy leaves to its loops
			// (its SIMD ones give the second operand, its scalar ones
			// the first): the sign is compared only without them.
			signed := !strings.Contains(c.NumPy, "max") && !strings.Contains(c.NumPy, "min")
			if e := compareClose(got, load(filepath.Join(cdir, "y.npy")), propTolerance(c.NumPy), signed); e != nil {
				wrong++
				t.Errorf("%s\n  %v", desc, e)
			}
		}
	}
	t.Logf("%d programs from seed %d: %d wrong, %d refused by marsfs alone, %d refused by both", len(cases), *propSeed, wrong, refused, bothRefused)
}

// randomCuts cuts an axis of length n into random chunks.
func randomCuts(r *rand.Rand, n int) []int {
	if n == 0 {
		return []int{0}
	}
	var cs []int
	for n > 0 {
		c := 1 + r.IntN(n)
		cs = append(cs, c)
		n -= c
	}
	return cs
}

// propTolerance is the relative tolerance of a program's result: NumPy
// computes in the narrowest float its operands allow (float16 for a
// function of bools, float32 of float32s), and rounds each step's result
// to it, while marsfs may keep a fused step's intermediate wider, and
// NumPy's float32 and float16 functions are not always correctly rounded;
// so the result may differ by an ulp of that float, even when it is
// float64 in the end.
func propTolerance(src string) float64 {
	switch {
	case strings.Contains(src, "d") && strings.ContainsAny(src, "fsqcelpht"):
		return 2e-3
	case strings.Contains(src, "b") || strings.Contains(src, "float32"):
		return 2e-6
	}
	return 1e-12
}

// compareClose is compareGolden with a relative tolerance of rtol, and the
// sign of zero compared when signed.
func compareClose(got, want *tensor.Array, rtol float64, signed bool) error {
	if err := compareGolden(got, want, true); err != nil || !want.DType.IsFloat() {
		if err != nil {
			return err
		}
		return compareGolden(got, want, false)
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
		case signed && g == 0 && w == 0 && math.Signbit(g) != math.Signbit(w):
			return fmt.Errorf("element %d (%v) = %v, want %v: the sign of zero", i, tensor.Unravel(i, want.Shape), g, w)
		}
	}
	return nil
}
