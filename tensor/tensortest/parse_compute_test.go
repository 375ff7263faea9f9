package tensortest

import (
	"context"
	"math"
	"slices"
	"testing"

	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// TestParseCompute runs specs through the whole tensor package (Parse,
// Tile, Compute) and compares each result with NumPy's, so that every
// lowering of the parser (norms, tensordot, stack, indexing, ...) is checked
// against the kernels that run it. The values were computed by NumPy 1.24.
func TestParseCompute(t *testing.T) {
	for _, tc := range e2eCases {
		g, err := lang.ParseText(tc.src, nil)
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		cg, err := tile.Graph(g, nil)
		if err != nil {
			t.Errorf("%q: tile: %v", tc.src, err)
			continue
		}
		out, err := Compute(context.Background(), cg, nil)
		if err != nil {
			t.Errorf("%q: compute: %v", tc.src, err)
			continue
		}
		a := out[0]
		if a.DType.String() != tc.dtype || !slices.Equal(a.Shape, tc.shape) {
			t.Errorf("%q: %s %s, NumPy %s %s", tc.src, spec.ShapeString(a.Shape), a.DType, spec.ShapeString(tc.shape), tc.dtype)
			continue
		}
		for i, want := range tc.data {
			got := a.Float64At(i)
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%q: element %d is %v, NumPy %v", tc.src, i, got, want)
				break
			}
		}
	}
}

var e2eCases = []struct {
	src   string
	shape []int
	dtype string
	data  []float64
}{
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = a[1, ::-2, 1:3]", []int{2, 2}, "int64", []float64{21.0, 22.0, 13.0, 14.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = a[..., None, -1]", []int{2, 3, 1}, "int64", []float64{3.0, 7.0, 11.0, 15.0, 19.0, 23.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = a.T", []int{4, 3, 2}, "int64", []float64{0.0, 12.0, 4.0, 16.0, 8.0, 20.0, 1.0, 13.0, 5.0, 17.0, 9.0, 21.0, 2.0, 14.0, 6.0, 18.0, 10.0, 22.0, 3.0, 15.0, 7.0, 19.0, 11.0, 23.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = swapaxes(a, 0, 2)[:, 1]", []int{4, 2}, "int64", []float64{4.0, 16.0, 5.0, 17.0, 6.0, 18.0, 7.0, 19.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = a.sum(axis=(0, 2), keepdims=True)", []int{1, 3, 1}, "int64", []float64{60.0, 92.0, 124.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = a.cumsum()", []int{24}, "int64", []float64{0.0, 1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0, 36.0, 45.0, 55.0, 66.0, 78.0, 91.0, 105.0, 120.0, 136.0, 153.0, 171.0, 190.0, 210.0, 231.0, 253.0, 276.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = cumprod(a[0] % 3 + 1, axis=1)", []int{3, 4}, "int64", []float64{1.0, 2.0, 6.0, 6.0, 2.0, 6.0, 6.0, 12.0, 3.0, 3.0, 6.0, 18.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = a.argmax(axis=1)", []int{2, 4}, "int64", []float64{2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = (a % 5).argmin()", []int{}, "int64", []float64{0.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = a.mean(axis=())", []int{2, 3, 4}, "float64", []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = count_nonzero(a % 3, axis=2)", []int{2, 3}, "int64", []float64{2.0, 3.0, 3.0, 2.0, 3.0, 3.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = a.sum(dtype=float32)", []int{}, "float32", []float64{276.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = dot(a, arange(8).reshape(2, 4, 1))", []int{2, 3, 2, 1}, "int64", []float64{14.0, 38.0, 38.0, 126.0, 62.0, 214.0, 86.0, 302.0, 110.0, 390.0, 134.0, 478.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = tensordot(a, a, axes=([0, 1], [0, 1]))", []int{4, 4}, "int64", []float64{880.0, 940.0, 1000.0, 1060.0, 940.0, 1006.0, 1072.0, 1138.0, 1000.0, 1072.0, 1144.0, 1216.0, 1060.0, 1138.0, 1216.0, 1294.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = tensordot(a, arange(4), 1)", []int{2, 3}, "int64", []float64{14.0, 38.0, 62.0, 86.0, 110.0, 134.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = stack([a[0], a[1] * 2], axis=-1)", []int{3, 4, 2}, "int64", []float64{0.0, 24.0, 1.0, 26.0, 2.0, 28.0, 3.0, 30.0, 4.0, 32.0, 5.0, 34.0, 6.0, 36.0, 7.0, 38.0, 8.0, 40.0, 9.0, 42.0, 10.0, 44.0, 11.0, 46.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = concatenate([a[0], a[1, :2]], axis=None)", []int{20}, "int64", []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0}},
	{"a = arange(24, chunks=5).reshape(2, 3, 4)\nx = expand_dims(a[0, 0], (0, 2)).squeeze(axis=0)", []int{4, 1}, "int64", []float64{0.0, 1.0, 2.0, 3.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = clip(m, -2, None)", []int{3, 4}, "float64", []float64{-2.0, -2.0, -2.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = where(m > 0, m, -1)", []int{3, 4}, "float64", []float64{-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = outer(m[0], m[:, 1])", []int{4, 3}, "float64", []float64{20.0, -0.0, -20.0, 16.0, -0.0, -16.0, 12.0, -0.0, -12.0, 8.0, -0.0, -8.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = m @ m.T[:, 0]", []int{3}, "float64", []float64{54.0, -2.0, -58.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = m[0] @ m.T", []int{3}, "float64", []float64{54.0, -2.0, -58.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m)", []int{}, "float64", []float64{12.083045973594572}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m, axis=0, keepdims=True)", []int{1, 4}, "float64", []float64{5.916079783099616, 5.656854249492381, 5.916079783099616, 6.6332495807108}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m, inf)", []int{}, "float64", []float64{18.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m, -1)", []int{}, "float64", []float64{8.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m, 'fro', keepdims=True)", []int{1, 1}, "float64", []float64{12.083045973594572}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m, 0, axis=1)", []int{3}, "float64", []float64{4.0, 3.0, 4.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m, -inf, axis=1)", []int{3}, "float64", []float64{2.0, 0.0, 3.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m[1], 0.5)", []int{}, "float64", []float64{11.65685424949238}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = linalg.norm(m, inf, axis=(1, 0))", []int{}, "float64", []float64{10.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = m.std(axis=1, ddof=1)", []int{3}, "float64", []float64{1.2909944487358056, 1.2909944487358056, 1.2909944487358056}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = (m // 2 % 3) ** 2 / 4", []int{3, 4}, "float64", []float64{0.0, 0.25, 0.25, 1.0, 1.0, 0.0, 0.0, 0.25, 0.25, 1.0, 1.0, 0.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = round(m / 3, 2)", []int{3, 4}, "float64", []float64{-1.67, -1.33, -1.0, -0.67, -0.33, 0.0, 0.33, 0.67, 1.0, 1.33, 1.67, 2.0}},
	{"m = arange(12.0, chunks=5).reshape(3, 4) - 5\nx = (m > 0) & ~(m > 4) | (m == -5)", []int{3, 4}, "bool", []float64{1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0}},
	{"x = linspace(-1, 1, 4, endpoint=False, chunks=3)", []int{4}, "float64", []float64{-1.0, -0.5, 0.0, 0.5}},
	{"x = arange(10, 1, -3, chunks=2)", []int{3}, "int64", []float64{10.0, 7.0, 4.0}},
	{"x = full((2, 2), 7, dtype=int32) // 2 + ones(2, dtype=bool)", []int{2, 2}, "int32", []float64{4.0, 4.0, 4.0, 4.0}},
	{"x = eye(3, 4, k=-1, dtype=int32).rechunk(2).max(axis=0)", []int{4}, "int32", []float64{1.0, 1.0, 0.0, 0.0}},
	{"x = arange(6).reshape(2, 3).astype(float32) * 1.5", []int{2, 3}, "float32", []float64{0.0, 1.5, 3.0, 4.5, 6.0, 7.5}},
}
