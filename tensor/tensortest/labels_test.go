package tensortest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// TestLabelSums runs the k-means iterations of testdata/labels (gen.py
// wrote each case's X, C, spec and NumPy's result) with X cut into one
// band, ragged bands and bands of three rows, fused and not, and compares
// every result with NumPy's: ties go to the first centre, NaN distances
// to the first NaN, and a centre that receives no point is 0/0, NaN. The
// fused runs must have made their bands' label.sums ops (fuse.Labels),
// the others none.
func TestLabelSums(t *testing.T) {
	root := filepath.Join("..", "testdata", "labels")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		cases++
		name := d.Name()
		x := loadLabelsGolden(t, name, "X")
		c := loadLabelsGolden(t, name, "C")
		want := loadLabelsGolden(t, name, "out")
		text, err := os.ReadFile(filepath.Join(root, name, "spec.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range labelModes {
			for _, fused := range []bool{false, true} {
				mode := m.name
				if fused {
					mode += "/fused"
				}
				t.Run(name+"/"+mode, func(t *testing.T) {
					got, n := runLabels(t, string(text), x, c, m.rows(x.Shape[0]), fused)
					if err := compareGolden(got["out"], want, false); err != nil {
						t.Errorf("out: %v\nspec:\n%s", err, text)
					}
					bands := len(m.rows(x.Shape[0]))
					if name == "counts" {
						// Only a sum reads the one-hot: the expression
						// fuser folds it into the sum's pass instead.
						bands = 0
					}
					switch {
					case fused && n != bands:
						t.Errorf("%d label.sums ops for %d bands of X", n, bands)
					case !fused && n != 0:
						t.Errorf("%d label.sums ops unfused", n)
					}
				})
			}
		}
	}
	if cases < 8 {
		t.Fatalf("only %d cases in %s", cases, root)
	}
}

// TestLabelSumsNotFused checks that a one-hot the spec also keeps, or
// scores it keeps, leave the graph as it was: what an output needs is
// made.
func TestLabelSumsNotFused(t *testing.T) {
	x := loadLabelsGolden(t, "k5", "X")
	c := loadLabelsGolden(t, "k5", "C")
	want := loadLabelsGolden(t, "k5", "out")
	base, err := os.ReadFile(filepath.Join("..", "testdata", "labels", "k5", "spec.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fetch := range []string{"out, oh", "out, d"} {
		text := string(base) + "fetch " + fetch + "\n"
		got, n := runLabels(t, text, x, c, raggedChunks(x.Shape[0]), true)
		if n != 0 {
			t.Errorf("fetch %s: %d label.sums ops", fetch, n)
		}
		if err := compareGolden(got["out"], want, false); err != nil {
			t.Errorf("fetch %s: out: %v", fetch, err)
		}
		if len(got) != 2 {
			t.Errorf("fetch %s: %d outputs", fetch, len(got))
		}
	}
}

var labelModes = []struct {
	name string
	rows func(n int) []int
}{
	{"one", func(n int) []int { return []int{n} }},
	{"ragged", raggedChunks},
	{"tiny", func(n int) []int { return spec.RegularChunks(n, 3) }},
}

// runLabels runs text over X cut into bands of rows and C whole, tiled
// and optimized as a session does (fused or not), its ops sent through
// gob, and returns its outputs and the number of label.sums ops.
func runLabels(t *testing.T, text string, x, c *tensor.Array, rows []int, fused bool) (map[string]*tensor.Array, int) {
	t.Helper()
	env := newCatEnv()
	env.store(t, "X", x, [][]int{rows, {x.Shape[1]}})
	env.store(t, "C", c, [][]int{{c.Shape[0]}, {c.Shape[1]}})
	g, err := lang.Parse(text, env.tensors)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	opt := fuse.Options{Fuse: fused, FuseExpr: fused}
	st, err := tile.StagesWith(g, env.tensors, tile.Options{Fused: fused})
	if err != nil {
		t.Fatalf("tile: %v", err)
	}
	if !st.Last() {
		t.Fatalf("a graph of several stages")
	}
	cg := fuse.Optimize(st.Graph, opt)
	n := 0
	for i, op := range cg.Ops {
		cg.Ops[i] = gobRoundTrip(t, op)
		if strings.Contains(op.Name(), string(chunk.KindLabelSums)) {
			n++
		}
	}
	outs, err := Compute(context.Background(), cg, env.stored)
	if err != nil {
		t.Fatalf("compute: %v", err)
	}
	got := map[string]*tensor.Array{}
	for i, o := range cg.Outputs {
		got[o.Name] = outs[i]
	}
	return got, n
}

func loadLabelsGolden(t *testing.T, c, file string) *tensor.Array {
	t.Helper()
	return loadNPYFile(t, filepath.Join("..", "testdata", "labels", c, file+".npy"))
}

// loadNPYFile reads the .npy file at path.
func loadNPYFile(t *testing.T, path string) *tensor.Array {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run gen.py there after changing a case)", err)
	}
	a, err := codec.ReadNPY(bytes.NewReader(raw), 0)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return a
}

// TestLabelSumsViews runs an iteration whose product's output blocks are
// finer than X's chunk (70,000 x 64 scores of a 70,000 x 2 chunk: more
// than the 4 Mi elements a block may have), so that each band is a view
// of some rows of the chunk, and checks the fused result against the
// unfused one. The values are small integers: both are exact.
func TestLabelSumsViews(t *testing.T) {
	const n, d, k = 70000, 2, 64
	x := tensor.NewArray(tensor.Float32, []int{n, d})
	for i := range x.Float32s() {
		x.Float32s()[i] = float32((i*7919)%17 - 8)
	}
	c := tensor.NewArray(tensor.Float32, []int{k, d})
	for i := range c.Float32s() {
		c.Float32s()[i] = float32((i*104729)%23 - 11)
	}
	text := "d = (C*C).sum(axis=1) - 2*(X @ C.T)\noh = (d.argmin(axis=1)[:, None] == arange(64)).astype(float32)\nout = (oh.T @ X) / oh.sum(axis=0)[:, None]\n"
	want, _ := runLabels(t, text, x, c, []int{n}, false)
	got, bands := runLabels(t, text, x, c, []int{n}, true)
	if bands < 2 {
		t.Fatalf("%d label.sums ops: the product was not cut into views of X's chunk", bands)
	}
	if err := compareGolden(got["out"], want["out"], false); err != nil {
		t.Errorf("fused against unfused: %v", err)
	}
}
