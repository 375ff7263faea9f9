package tensortest

import (
	"context"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// computeSpec parses, tiles and computes src, returning the outputs by name.
func computeSpec(t *testing.T, src string) map[string]*tensor.Array {
	t.Helper()
	g, err := lang.ParseText(src, nil)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		t.Fatalf("tile %q: %v", src, err)
	}
	outs, err := Compute(context.Background(), cg, nil)
	if err != nil {
		t.Fatalf("compute %q: %v", src, err)
	}
	res := map[string]*tensor.Array{}
	for i, o := range cg.Outputs {
		res[o.Name] = outs[i]
	}
	return res
}

// TestSpecs runs specs end to end, from the text through the parser's
// dtype and shape inference to the kernels, against values NumPy 1.24
// computes for the same expressions.
func TestSpecs(t *testing.T) {
	type out struct {
		name  string
		dt    tensor.DType
		shape []int
		want  []float64
		tol   float64
	}
	cases := []struct {
		src  string
		outs []out
	}{
		{"x = arange(10, chunks=3)\ny = (x % 3 == 0) | (x > 7)",
			[]out{{"y", tensor.Bool, []int{10}, []float64{1, 0, 0, 1, 0, 0, 1, 0, 1, 1}, 0}}},
		{"x = linspace(0, 1, 11, chunks=4)\ny = round(sin(x) * 10, 2)",
			[]out{{"y", tensor.Float64, []int{11}, []float64{0.0, 1.0, 1.99, 2.96, 3.89, 4.79, 5.65, 6.44, 7.17, 7.83, 8.41}, 1e-15}}},
		{"x = arange(24, chunks=5).reshape((4, 6))\nm = x.mean(axis=0)\ns = x.std(axis=1, ddof=1)\nv = x.var()\nfetch m, s, v",
			[]out{
				{"m", tensor.Float64, []int{6}, []float64{9, 10, 11, 12, 13, 14}, 1e-15},
				{"s", tensor.Float64, []int{4}, []float64{1.8708286933869707, 1.8708286933869707, 1.8708286933869707, 1.8708286933869707}, 1e-15},
				{"v", tensor.Float64, []int{}, []float64{47.916666666666664}, 1e-15},
			}},
		{"x = arange(20, chunks=7).astype(float32) / 3\ny = x.cumsum()",
			[]out{{"y", tensor.Float32, []int{20}, []float64{0.0, 0.3333333432674408, 1.0, 2.0, 3.3333334922790527, 5.0, 7.0, 9.333333015441895, 12.0, 15.0,
				18.33333396911621, 22.0, 26.0, 30.33333396911621, 35.0, 40.0, 45.33333206176758, 51.0, 57.0, 63.33333206176758}, 1e-6}}},
		{"x = eye(5, chunks=2)\ny = where(x > 0, 7, -x - 1).sum(axis=1, keepdims=True)",
			[]out{{"y", tensor.Float64, []int{5, 1}, []float64{3, 3, 3, 3, 3}, 0}}},
		{"x = arange(-6, 6, chunks=5)\ny = x.argmax()\nz = abs(x).argmin()\nw = maximum(x, 2) ** 2\nfetch y, z, w",
			[]out{
				{"y", tensor.Int64, []int{}, []float64{11}, 0},
				{"z", tensor.Int64, []int{}, []float64{6}, 0},
				{"w", tensor.Int64, []int{12}, []float64{4, 4, 4, 4, 4, 4, 4, 4, 4, 9, 16, 25}, 0},
			}},
		{"x = ones((3, 4), chunks=2, dtype=int32)\ny = x.sum()\nz = (x * 3).prod(axis=0)\nfetch y, z",
			[]out{
				{"y", tensor.Int64, []int{}, []float64{12}, 0},
				{"z", tensor.Int64, []int{4}, []float64{27, 27, 27, 27}, 0},
			}},
		{"x = arange(12, chunks=5, dtype=float32)\na = x < 0.1\nb = x * 0.1\nc = (x > 5.5).mean()\nd = x // 5\nfetch a, b, c, d",
			[]out{
				{"a", tensor.Bool, []int{12}, []float64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0},
				{"b", tensor.Float32, []int{12}, nil, 0},
				{"c", tensor.Float64, []int{}, []float64{0.5}, 0},
				{"d", tensor.Float32, []int{12}, []float64{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2}, 0},
			}},
		{"x = arange(6, chunks=4, dtype=int32)\na = x / 4\nb = x // -4\nc = x % -4\nd = x ** 2\ne = count_nonzero(x % 2)\nfetch a, b, c, d, e",
			[]out{
				{"a", tensor.Float64, []int{6}, []float64{0, 0.25, 0.5, 0.75, 1, 1.25}, 0},
				{"b", tensor.Int32, []int{6}, []float64{0, -1, -1, -1, -1, -2}, 0},
				{"c", tensor.Int32, []int{6}, []float64{0, -3, -2, -1, 0, -3}, 0},
				{"d", tensor.Int32, []int{6}, []float64{0, 1, 4, 9, 16, 25}, 0},
				{"e", tensor.Int64, []int{}, []float64{3}, 0},
			}},
	}
	for _, c := range cases {
		res := computeSpec(t, c.src)
		for _, o := range c.outs {
			got, ok := res[o.name]
			if !ok {
				t.Fatalf("%q: no output %s", c.src, o.name)
			}
			want := o.want
			if want == nil { // float32 x * 0.1, computed here in float32
				for i := range 12 {
					want = append(want, float64(float32(i)*float32(0.1)))
				}
			}
			checkArray(t, c.src+": "+o.name, got, o.dt, o.shape, want, o.tol)
		}
	}
}

// TestSpecRandomInvariance checks through the parser that a generator's
// values do not depend on chunks=.
func TestSpecRandomInvariance(t *testing.T) {
	a := computeSpec(t, "x = randn(50, 7, chunks=(50, 7), seed=9)\ny = randint(0, 100, size=(50, 7), chunks=(50, 7), seed=9)\nfetch x, y")
	b := computeSpec(t, "x = randn(50, 7, chunks=(13, 3), seed=9)\ny = randint(0, 100, size=(50, 7), chunks=(1, 2), seed=9)\nfetch x, y")
	for _, name := range []string{"x", "y"} {
		checkArray(t, name, b[name], a[name].DType, a[name].Shape, kernValues(a[name]), 0)
	}
}
