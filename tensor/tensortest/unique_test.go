package tensortest

import (
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
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// computeStaged computes outs of the graph of c stage by stage.
func (c *shapeCase) computeStaged(outs ...*spec.Node) ([]*tensor.Array, error) {
	g := &spec.Graph{Nodes: c.nodes}
	for i, o := range outs {
		g.Outputs = append(g.Outputs, spec.Output{Name: fmt.Sprintf("out%d", i), Node: o})
	}
	got, err := ComputeGraph(context.Background(), g, c.env, func(id uint64) (*tensor.Array, error) { return c.stored[id], nil }, fuse.Options{}, nil)
	if err != nil {
		return nil, err
	}
	res := make([]*tensor.Array, len(outs))
	for i := range outs {
		res[i] = got[fmt.Sprintf("out%d", i)]
	}
	return res, nil
}

// uniqueRef is NumPy's unique with counts, computed the simple way.
func uniqueRef(vals []float64) ([]float64, []int64) {
	s := slices.Clone(vals)
	slices.SortFunc(s, func(a, b float64) int {
		switch {
		case kernel.LessFloat(a, b):
			return -1
		case kernel.LessFloat(b, a):
			return 1
		}
		return 0
	})
	var u []float64
	var c []int64
	for i, v := range s {
		if i > 0 && (v == s[i-1] || v != v && s[i-1] != s[i-1]) {
			c[len(c)-1]++
			continue
		}
		u = append(u, v)
		c = append(c, 1)
	}
	return u, c
}

func TestUnique(t *testing.T) {
	const n = 97
	ints, floats := tensor.NewArray(tensor.Int64, []int{n}), tensor.NewArray(tensor.Float64, []int{n})
	for i := range n {
		ints.Int64s()[i] = int64((i*37)%23 - 7)
		floats.Float64s()[i] = float64((i*53)%29) / 4
		if i%11 == 0 {
			floats.Float64s()[i] = math.NaN()
		}
	}
	floats.Float64s()[5] = math.Copysign(0, -1)
	for _, a := range []*tensor.Array{ints, floats, kernel.ConvertChunk(ints, tensor.Int32), kernel.ConvertChunk(floats, tensor.Float32), kernel.ConvertChunk(ints, tensor.Bool)} {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = a.Float64At(i)
		}
		wantU, wantC := uniqueRef(vals)
		for _, chunks := range [][]int{{n}, {10, 10, 10, 10, 10, 10, 10, 10, 10, 7}, {1, 50, 3, 43}, spec.RegularChunks(n, 1)} {
			c := newShapeCase()
			x := c.input(a, [][]int{chunks})
			u := c.add(&spec.Node{Op: tensor.OpUnique, Inputs: []*spec.Node{x}, Shape: []int{tensor.Unknown}, DType: a.DType})
			cnt := c.add(&spec.Node{Op: tensor.OpUniqueCounts, Inputs: []*spec.Node{x}, Shape: []int{tensor.Unknown}, DType: tensor.Int64})
			outs, err := c.computeStaged(u, cnt)
			if err != nil {
				t.Fatal(err)
			}
			checkArray(t, fmt.Sprintf("unique %v chunks %d", a.DType, len(chunks)), outs[0], a.DType, []int{len(wantU)}, wantU, 0)
			if !slices.Equal(outs[1].Int64s(), wantC) {
				t.Errorf("counts %v chunks %d: %v, want %v", a.DType, len(chunks), outs[1].Int64s(), wantC)
			}
		}
	}
}

// TestUniqueStages checks how a graph with unique tiles: the first stage
// computes the unique values in a tree whose ops read a few partial results
// each (never the whole input), and ends at the length; the next stage reads
// the tree's root as a stored chunk of that length.
func TestUniqueStages(t *testing.T) {
	g, err := lang.ParseText("x = arange(1000, chunks=10) % 37\nv, c = unique(x, return_counts=True)\ny = (v * c).sum()\nfetch v, y", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Nodes {
		if n.Op == tensor.OpUnique && tensor.FormatShape(n.Shape) != "(?,)" {
			t.Errorf("unique's shape before it runs is %s, want (?,)", tensor.FormatShape(n.Shape))
		}
	}
	s, err := tile.Stages(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Last() || s.Results != 0 || len(s.Probes) != 2 {
		t.Fatalf("first stage: last %v, %d results, %d probes; want a stage with no results and 2 probes", s.Last(), s.Results, len(s.Probes))
	}
	maps := 0
	for _, op := range s.Graph.Ops {
		if strings.HasPrefix(string(op.Kind), "unique") && len(op.Inputs) > tile.StatsCombine {
			t.Errorf("%s reads %d chunks: the tree should read at most %d", op.Kind, len(op.Inputs), tile.StatsCombine)
		}
		if op.Kind == chunk.KindUniqueMap {
			maps++
		}
	}
	if maps != 100 {
		t.Errorf("%d unique.map ops for 100 chunks: values and counts should share them", maps)
	}
	if _, err := tile.Graph(g, nil); err == nil || !strings.Contains(err.Error(), "stages") {
		t.Errorf("Tile of a staged graph: %v, want an error about stages", err)
	}
	got, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 37)
	for i := range want {
		want[i] = float64(i)
	}
	checkArray(t, "v", got["v"], tensor.Int64, []int{37}, want, 0)
	checkArray(t, "y", got["y"], tensor.Int64, []int{}, []float64{17982}, 0) // sum(arange(1000) % 37)
}

// TestUniqueSpecs runs specs that use unique and bincount with the ops
// after them, fused and not.
func TestUniqueSpecs(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		name  string
		dt    tensor.DType
		shape []int
		want  []float64
	}{
		{"x = arange(20, chunks=3) % 7\ny = unique(x) * 2 + 1", "y", tensor.Int64, []int{7}, []float64{1, 3, 5, 7, 9, 11, 13}},
		{"x = arange(20, chunks=3) % 7\ny = unique(x).sum()", "y", tensor.Int64, []int{}, []float64{21}},
		{"x = arange(20, chunks=3) % 7\ny = unique(x)[-2]", "y", tensor.Int64, []int{}, []float64{5}},
		{"x = arange(20, chunks=3) % 7\ny = unique(x)[1:6:2]", "y", tensor.Int64, []int{3}, []float64{1, 3, 5}},
		{"x = arange(20, chunks=3) % 7\ny = unique(x)[::-3]", "y", tensor.Int64, []int{3}, []float64{6, 3, 0}},
		{"x = arange(20, chunks=3) % 7\nv, c = unique(x, return_counts=True)\ny = c / c.sum()", "y", tensor.Float64, []int{7}, []float64{0.15, 0.15, 0.15, 0.15, 0.15, 0.15, 0.1}},
		{"x = arange(12, chunks=5).reshape(3, 4) % 5\ny = unique(x)", "y", tensor.Int64, []int{5}, []float64{0, 1, 2, 3, 4}},
		{"x = arange(20, chunks=3) % 7\ny = unique(unique(x) % 3)", "y", tensor.Int64, []int{3}, []float64{0, 1, 2}},
		{"x = arange(20, chunks=3) % 7\ny = unique(x).reshape(-1, 1) + zeros((1, 2), dtype=int)", "y", tensor.Int64, []int{7, 2}, []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}},
		{"x = arange(20, chunks=3) % 7\nu = unique(x)\ny = u + u[::-1]", "y", tensor.Int64, []int{7}, []float64{6, 6, 6, 6, 6, 6, 6}},
		{"x = arange(6, chunks=4) * 2\ny = bincount(x)", "y", tensor.Int64, []int{11}, []float64{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}},
		{"x = arange(6, chunks=4) * 2\ny = bincount(x, minlength=13)", "y", tensor.Int64, []int{13}, []float64{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0}},
		{"x = zeros(0, dtype=int)\ny = bincount(x)", "y", tensor.Int64, []int{0}, nil},
		{"x = zeros(0)\ny = unique(x)", "y", tensor.Float64, []int{0}, nil},
		{"x = arange(30, chunks=7) % 4\ny = bincount(x) @ arange(4)", "y", tensor.Int64, []int{}, []float64{8*1 + 7*2 + 7*3}},
	} {
		for _, opt := range catOptims {
			got := runSpecWith(t, tc.spec, newCatEnv(), opt.opt)
			checkArray(t, tc.spec+opt.name, got[tc.name], tc.dt, tc.shape, tc.want, 1e-12)
		}
	}
}

func TestUniqueErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"x = arange(20, chunks=3) % 7\ny = unique(x) + arange(3)", "operands could not be broadcast together with shapes (7,) (3,)"},
		{"x = arange(20, chunks=3) % 7\ny = unique(x)[9]", "index 9 is out of bounds for axis 0 with size 7"},
		{"x = arange(20, chunks=3) % 7\ny = unique(x).reshape(-1, 2)", "cannot reshape array of size 7"},
	} {
		err := specError(tc.spec, newCatEnv(), fuse.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.spec, err, tc.want)
		}
	}
}

// TestUniqueSpecExample runs docs/examples/unique.spec and checks it
// against the counts computed here.
func TestUniqueSpecExample(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "unique.spec"))
	if err != nil {
		t.Fatal(err)
	}
	got := runSpec(t, string(src), newCatEnv())
	const n = 1000000
	count := make([]int64, 13)
	sum := 0.0
	for i := range n {
		v := i * 7919 % 1009 % 13
		count[v]++
		sum += float64(v * 5)
	}
	var values, freq []float64
	for v, c := range count {
		values = append(values, float64(v*5))
		freq = append(freq, float64(c)/n)
	}
	checkArray(t, "values", got["values"], tensor.Int64, []int{13}, values, 0)
	if !slices.Equal(got["counts"].Int64s(), count) {
		t.Errorf("counts %v, want %v", got["counts"].Int64s(), count)
	}
	checkArray(t, "freq", got["freq"], tensor.Float64, []int{13}, freq, 1e-12)
	checkArray(t, "mean", got["mean"], tensor.Float64, []int{}, []float64{sum / n}, 1e-12)
	every := got["every"]
	if every.DType != tensor.Int64 || !slices.Equal(every.Shape, []int{61}) {
		t.Fatalf("every: %v%v, want int64 (61,)", every.DType, every.Shape)
	}
	for i, c := range every.Int64s() {
		want := int64(0)
		if i%5 == 0 {
			want = count[i/5]
		}
		if c != want {
			t.Fatalf("every[%d] = %d, want %d", i, c, want)
		}
	}
}
