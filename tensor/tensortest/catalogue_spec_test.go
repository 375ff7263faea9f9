package tensortest

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
)

type specWant struct {
	name  string
	dt    tensor.DType
	shape []int
	v     []float64
}

// catalogueSpecs are specs using the factorizations, sorting and
// statistics; the wanted outputs are NumPy 1.24's for the same text (with
// chunks= dropped).
var catalogueSpecs = []struct {
	name  string
	src   string
	wants []specWant
}{
	{"svd", `a = (arange(60, chunks=7) * 37 % 101 / 7.0).reshape(20, 3)
s = linalg.svd(a, compute_uv=False)`, []specWant{
		{"s", tensor.Float64, []int{3}, []float64{55.97012221973443, 22.84766810756546, 19.698826525171782}},
	}},
	{"svd32", `a = (arange(60, chunks=7) * 37 % 101 / 7.0).reshape(20, 3).astype('float32')
u, s, vt = linalg.svd(a, full_matrices=False)
s = s.astype('float64')`, []specWant{
		{"s", tensor.Float64, []int{3}, []float64{55.970123291015625, 22.847667694091797, 19.69882583618164}},
	}},
	{"norm", `a = (arange(60, chunks=7) * 37 % 101 / 7.0).reshape(20, 3)
n2 = linalg.norm(a, 2)
nm2 = linalg.norm(a, -2)
nuc = linalg.norm(a, 'nuc')
n2t = linalg.norm(a.T.astype('float32'), 2, axis=(1, 0))`, []specWant{
		{"n2", tensor.Float64, []int{}, []float64{55.97012221973443}},
		{"nm2", tensor.Float64, []int{}, []float64{19.698826525171782}},
		{"nuc", tensor.Float64, []int{}, []float64{98.51661685247167}},
		{"n2t", tensor.Float32, []int{}, []float64{55.970123291015625}},
	}},
	{"solve", `m = (arange(16, chunks=3).reshape(4, 4) % 5) + 4 * eye(4, chunks=3)
x = linalg.solve(m, arange(4))
mi = linalg.inv(m)
l = linalg.cholesky(m @ m.T)`, []specWant{
		{"x", tensor.Float64, []int{4}, []float64{-0.5231788079470198, 0.5364238410596026, 0.271523178807947, 0.3377483443708609}},
		{"mi", tensor.Float64, []int{4, 4}, []float64{0.28476821192052976, 0.01324503311258278, 0.09933774834437094, -0.24503311258278146, -0.304635761589404, 0.2649006622516556, -0.013245033112582781, 0.09933774834437085, 0.09271523178807947, -0.29801324503311255, 0.2649006622516556, 0.013245033112582792, -0.006622516556291371, 0.09271523178807946, -0.30463576158940403, 0.2847682119205298}},
		{"l", tensor.Float64, []int{4, 4}, []float64{5.477225575051661, 0.0, 0.0, 0.0, 5.11207720338155, 3.296462750686965, 0.0, 0.0, 4.9295030175464944, 2.6695281171207323, 3.2517102626005663, 0.0, 5.659799760886716, 0.9302901014208629, 2.342325669288426, 2.5719131892149014}},
	}},
	{"sort", `v = (arange(30, chunks=4) * 17 % 23) - 5.5
w = v.reshape(5, 6)
s = sort(v)
i = argsort(v, kind='stable')
s0 = sort(w, axis=0)
i0 = w.argsort(axis=0, kind='stable')
s1 = sort(w)
sn = sort(w, axis=None)`, []specWant{
		{"s", tensor.Float64, []int{30}, []float64{-5.5, -5.5, -4.5, -3.5, -2.5, -1.5, -0.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 4.5, 5.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 10.5, 11.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 16.5}},
		{"i", tensor.Int64, []int{30}, []float64{0.0, 23.0, 19.0, 15.0, 11.0, 7.0, 3.0, 26.0, 22.0, 18.0, 14.0, 10.0, 6.0, 29.0, 2.0, 25.0, 21.0, 17.0, 13.0, 9.0, 5.0, 28.0, 1.0, 24.0, 20.0, 16.0, 12.0, 8.0, 4.0, 27.0}},
		{"s0", tensor.Float64, []int{5, 6}, []float64{-5.5, -4.5, -0.5, -3.5, 0.5, -5.5, 1.5, -1.5, 2.5, -0.5, 3.5, -2.5, 4.5, 5.5, 5.5, 6.5, 10.5, 4.5, 11.5, 8.5, 12.5, 9.5, 13.5, 7.5, 14.5, 11.5, 15.5, 16.5, 16.5, 10.5}},
		{"i0", tensor.Int64, []int{5, 6}, []float64{0.0, 3.0, 4.0, 2.0, 3.0, 3.0, 3.0, 1.0, 2.0, 0.0, 1.0, 1.0, 1.0, 4.0, 0.0, 3.0, 4.0, 4.0, 4.0, 2.0, 3.0, 1.0, 2.0, 2.0, 2.0, 0.0, 1.0, 4.0, 0.0, 0.0}},
		{"s1", tensor.Float64, []int{5, 6}, []float64{-5.5, -0.5, 5.5, 10.5, 11.5, 16.5, -2.5, -1.5, 3.5, 4.5, 9.5, 15.5, -3.5, 2.5, 7.5, 8.5, 13.5, 14.5, -5.5, -4.5, 0.5, 1.5, 6.5, 12.5, -0.5, 4.5, 5.5, 10.5, 11.5, 16.5}},
		{"sn", tensor.Float64, []int{30}, []float64{-5.5, -5.5, -4.5, -3.5, -2.5, -1.5, -0.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5, 4.5, 5.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 10.5, 11.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 16.5}},
	}},
	{"stats", `v = (arange(30, chunks=4) * 17 % 23) - 5.5
w = v.reshape(5, 6)
h, e = histogram(v, bins=6)
h2, e2 = histogram(w, bins=4, range=(0, 10))
c = bincount(arange(30, chunks=4) * 17 % 23, minlength=25)
p = percentile(v, [5, 50, 95])
p1 = percentile(w, 42)
md = median(w)
mi = median(arange(7, chunks=2))`, []specWant{
		{"h", tensor.Int64, []int{6}, []float64{5.0, 5.0, 4.0, 5.0, 6.0, 5.0}},
		{"e", tensor.Float64, []int{7}, []float64{-5.5, -1.8333333333333335, 1.833333333333333, 5.5, 9.166666666666666, 12.833333333333332, 16.5}},
		{"h2", tensor.Int64, []int{4}, []float64{2.0, 4.0, 3.0, 3.0}},
		{"e2", tensor.Float64, []int{5}, []float64{0.0, 2.5, 5.0, 7.5, 10.0}},
		{"c", tensor.Int64, []int{25}, []float64{2.0, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.0, 0.0}},
		{"p", tensor.Float64, []int{3}, []float64{-5.05, 5.5, 16.049999999999997}},
		{"p1", tensor.Float64, []int{}, []float64{4.5}},
		{"md", tensor.Float64, []int{}, []float64{5.5}},
		{"mi", tensor.Float64, []int{}, []float64{3.0}},
	}},
	{"axes", `v = (arange(30, chunks=4) * 17 % 23) - 5.5
w = v.reshape(5, 6).rechunk((2, 4))
p1 = percentile(w, [10, 50, 99], axis=1)
p0 = percentile(w, 42, axis=0)
m1 = median(w, axis=-1)
m0 = median(w.astype('float32'), axis=0)
mi = median(arange(12, chunks=5).reshape(3, 4), axis=1)`, []specWant{
		{"p1", tensor.Float64, []int{3, 5}, []float64{-3.0, -2.0, -0.5, -5.0, 2.0, 8.0, 4.0, 8.0, 1.0, 8.0, 16.25, 15.200000000000001, 14.45, 12.200000000000001, 16.25}},
		{"p0", tensor.Float64, []int{6}, []float64{3.54, 3.26, 4.54, 4.26, 8.26, 2.26}},
		{"m1", tensor.Float64, []int{5}, []float64{8.0, 4.0, 8.0, 1.0, 8.0}},
		{"m0", tensor.Float32, []int{6}, []float64{4.5, 5.5, 5.5, 6.5, 10.5, 4.5}},
		{"mi", tensor.Float64, []int{3}, []float64{1.5, 5.5, 9.5}},
	}},
}

func TestCatalogueSpecs(t *testing.T) {
	for _, tc := range catalogueSpecs {
		tol := 1e-12
		if tc.name == "svd32" || tc.name == "norm" {
			tol = 1e-6 // NumPy factors float32 in float32, marsfs in float64
		}
		outs := runSpecOutputs(t, fetchAll(tc.src, tc.wants))
		for i, w := range tc.wants {
			got := outs[i]
			if got.DType != w.dt || !slices.Equal(got.Shape, w.shape) {
				t.Errorf("%s: %s is %v%v, NumPy %v%v", tc.name, w.name, got.DType, got.Shape, w.dt, w.shape)
				continue
			}
			for j, v := range w.v {
				if g := got.Float64At(j); math.Abs(g-v) > tol*max(1, math.Abs(v)) {
					t.Errorf("%s: %s[%d] = %v, NumPy %v", tc.name, w.name, j, g, v)
					break
				}
			}
		}
	}
}

// TestCatalogueJSONAndGob sends each catalogue spec through its JSON form,
// and each of its chunk ops through gob, as a worker would receive it; the
// decoded ops must compute the same bytes.
func TestCatalogueJSONAndGob(t *testing.T) {
	for _, tc := range catalogueSpecs {
		src := fetchAll(tc.src, tc.wants)
		jsonRoundTrip(t, src)
		g, err := lang.ParseText(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, func(cg *chunk.Graph) {
			for i, op := range cg.Ops {
				cg.Ops[i] = gobRoundTrip(t, op)
			}
		})
		if err != nil {
			t.Fatalf("%s: decoded ops: %v", tc.name, err)
		}
		for name := range want {
			if !bytes.Equal(got[name].Data, want[name].Data) {
				t.Errorf("%s: output %s differs after gob", tc.name, name)
			}
		}
	}
}

// fetchAll appends a fetch line naming every wanted output.
func fetchAll(src string, wants []specWant) string {
	src += "\nfetch "
	for i, w := range wants {
		if i > 0 {
			src += ", "
		}
		src += w.name
	}
	return src
}

// TestCatalogueSpecErrors checks that data a factorization cannot take fails
// the graph with a message that says why, also when the failing op is fused
// with the ops after it.
func TestCatalogueSpecErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"x = linalg.solve(ones((3, 3), chunks=2), arange(3)) * 2", "linalg.solve: matrix is singular"},
		{"x = linalg.inv(arange(9, chunks=4).reshape(3, 3)) + 1", "linalg.inv: matrix is singular"},
		{"x = linalg.cholesky(eye(4, chunks=3) - 2).sum()", "linalg.cholesky: matrix is not positive definite"},
		{"x = bincount(arange(10, chunks=3) - 2, minlength=5)", "bincount.len: the input has a negative value (-2)"},
		{"h, e = histogram(log(arange(4, chunks=3) - 1.0))", "histogram: autodetected range of [nan, nan] is not finite"},
	} {
		g, err := lang.ParseText(tc.src, nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		for _, opt := range []fuse.Options{{}, {Fuse: true}} {
			_, err = ComputeGraph(context.Background(), g, nil, nil, opt, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
			}
		}
	}
}

// TestCatalogueParseErrors checks the refusals of the catalogue, with
// NumPy's message where NumPy refuses too.
func TestCatalogueParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"x = linalg.solve(ones((3, 3)), ones(4))", "1:5: solve1: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (m,m),(m)->(m) (size 4 is different from 3)"},
		{"x = linalg.solve(ones((3, 3)), ones((4, 2)))", "1:5: solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (m,m),(m,n)->(m,n) (size 4 is different from 3)"},
		{"x = linalg.solve(ones((3, 3)), 5.0)", "1:5: solve: Input operand 1 does not have enough dimensions (has 0, gufunc core with signature (m,m),(m,n)->(m,n) requires 2)"},
		{"x = linalg.inv(ones((3, 4)))", "1:5: Last 2 dimensions of the array must be square"},
		{"q, r = linalg.qr(ones(3))", "1:8: 1-dimensional array given. Array must be at least two-dimensional"},
		{"q, r = linalg.qr(ones((5, 3)), mode='complete')", "1:37: linalg.qr: mode='complete' of a tall matrix is not supported (marsfs computes the reduced QR)"},
		{"x = linalg.cholesky(ones((2, 3)))", "1:5: Last 2 dimensions of the array must be square"},
		{"x = bincount(arange(3), minlength=-1)", "1:35: 'minlength' must not be negative"},
		{"x = unique(arange(3), return_inverse=1.5)", "1:38: unique(): return_inverse must be True or False"},
		{"x = unique(ones((2, 2)), axis=0)", "1:31: unique(): axis= is not supported: marsfs finds the unique values of the flattened array"},
		{"x = unique(arange(3)).shape[0]", "1:23: .shape of an array of shape (?,): its length depends on the data, which the spec cannot read"},
		{"x = unique(arange(3)).reshape(3)", "1:31: cannot reshape an array of shape (?,), whose length depends on the data, without a -1"},
		{"x = bincount(ones(3), minlength=4)", "1:5: Cannot cast array data from dtype('float64') to dtype('int64') according to the rule 'safe'"},
		{"x = bincount(ones((2, 2), dtype=int), minlength=4)", "1:5: object too deep for desired array"},
		{"h, e = histogram(ones(3), bins=0)", "1:8: `bins` must be positive, when an integer"},
		{"h, e = histogram(ones(3), range=(2, 1))", "1:8: max must be larger than min in range parameter."},
		{"h, e = histogram(ones(3), bins='auto')", "1:32: histogram(): the bin rule 'auto' is not supported yet: give a number of bins or their edges"},
		{"x = percentile(ones(3), 101)", "1:25: Percentiles must be in the range [0, 100]"},
		{"x = percentile(ones(3), 50, method='nearer')", "1:36: 'nearer' is not a valid method. Use one of: inverted_cdf, averaged_inverted_cdf, closest_observation, interpolated_inverted_cdf, hazen, weibull, linear, median_unbiased, normal_unbiased, lower, higher, midpoint, nearest"},
		{"x = median(ones((2, 3, 4)), axis=3)", "1:34: axis 3 is out of bounds for array of dimension 3"},
		{"x = sort(ones(3), order='f')", "1:25: sort(): order= is not supported"},
		{"x = ones(3).sort()", "1:13: a.sort() sorts in place and returns None: write sort(a)"},
	} {
		_, err := lang.ParseText(tc.src, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

// jsonRoundTrip checks text -> Graph -> JSON -> Graph -> JSON: the graphs
// agree node by node and the two JSON documents are the same.
func jsonRoundTrip(t *testing.T, src string) {
	t.Helper()
	g, err := lang.Parse(src, nil)
	if err != nil {
		t.Errorf("%q: %v", src, err)
		return
	}
	doc, err := g.JSON()
	if err != nil {
		t.Errorf("%q: JSON: %v", src, err)
		return
	}
	g2, err := spec.ParseJSON(doc, nil)
	if err != nil {
		t.Errorf("%q: ParseJSON: %v\n%s", src, err, doc)
		return
	}
	if len(g2.Nodes) != len(g.Nodes) || len(g2.Outputs) != len(g.Outputs) {
		t.Errorf("%q: round trip has %d nodes and %d outputs, want %d and %d", src, len(g2.Nodes), len(g2.Outputs), len(g.Nodes), len(g.Outputs))
		return
	}
	for i, n := range g.Nodes {
		m := g2.Nodes[i]
		if m.Op != n.Op || m.DType != n.DType || !slices.Equal(m.Shape, n.Shape) || !reflect.DeepEqual(m.Chunks, n.Chunks) || !reflect.DeepEqual(m.Attrs, n.Attrs) {
			t.Errorf("%q: node %d is %s %v%v after the round trip, was %s %v%v", src, i, m.Op, m.DType, m.Shape, n.Op, n.DType, n.Shape)
		}
	}
	doc2, err := g2.JSON()
	if err != nil || string(doc2) != string(doc) {
		t.Errorf("%q: JSON of the round trip differs (%v)", src, err)
	}
}
