package tensortest

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec/lang"
)

// TestCopiesEachReader: a Zarr array read by several reductions and a
// gathered mean (the climate analysis' shape: x's mean and std along its
// first axis, a weighted sum along its second, a mean of a reshape) gives
// each reader its own read of a blosc or uncompressed chunk, fused in
// front of it, and no read is left with more readers than the one that
// cannot take a copy; a zstd array keeps its chunks, read once each. The
// results are the unfused graph's, a mean's and a sum's to the bit.
func TestCopiesEachReader(t *testing.T) {
	shape, chunks := []int{48, 70}, []int{8, 70}
	dir, root, ctx, vals := storeFixture(t, 4, shape)
	for _, codec := range []string{"blosc", "", "zstd"} {
		name := "x-" + codec + ".zarr"
		writeZarrCodec(t, dir, name, codec, shape, chunks, vals)
		src := `x = from_zarr("` + name + `")
w = arange(70) * 0.01
m = x.mean(axis=0)
s = x.std(axis=0)
g = (x * w).sum(axis=1)
c = x.reshape(2, 24, 70).mean(axis=0)
fetch m, s, g, c
`
		g, err := lang.ParseData(src, nil, root.FS())
		if err != nil {
			t.Fatal(err)
		}
		plain, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		copied, shared := false, false
		fused, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, func(cg *chunk.Graph) {
			readers := map[int]int{}
			for _, op := range cg.Ops {
				for _, in := range op.Inputs {
					readers[in]++
				}
			}
			for _, op := range cg.Ops {
				if op.Kind == chunk.KindFromZarr && readers[op.Key] > 1 {
					shared = true
				}
				if strings.HasPrefix(op.Name(), "fuse(from_zarr+") {
					copied = true
				}
			}
			for _, n := range cg.Notes {
				if strings.HasPrefix(n, "copies ") != (codec != "zstd") {
					t.Errorf("%q: note %q", codec, n)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if copied == (codec == "zstd") || shared != (codec == "zstd") {
			t.Errorf("%q: a read fused in front of a reader %v, a read op of several readers %v", codec, copied, shared)
		}
		for _, out := range []string{"m", "g", "c"} {
			if !slices.Equal(plain[out].Float64s(), fused[out].Float64s()) {
				t.Errorf("%q: %s fused %v, unfused %v", codec, out, fused[out].Float64s()[:3], plain[out].Float64s()[:3])
			}
		}
		for i, v := range plain["s"].Float64s() {
			if d := fused["s"].Float64s()[i] - v; d > 1e-12 || d < -1e-12 {
				t.Fatalf("%q: std %d fused %v, unfused %v", codec, i, fused["s"].Float64s()[i], v)
			}
		}
	}
}

// TestCopiesLoneReader: a chunk of a file whose only reader reads other
// chunks too (the global mean's x * w[:, None], which reads the weights)
// has its read fused in front of that reader, whatever the codec (zstd
// too: it is read once either way), with no note (nothing is read
// twice); no read op is left. The results are the unfused graph's to the
// bit.
func TestCopiesLoneReader(t *testing.T) {
	shape, chunks := []int{12, 9, 70}, []int{5, 9, 70}
	dir, root, ctx, vals := storeFixture(t, 5, shape)
	for _, codec := range []string{"blosc", "", "zstd"} {
		name := "x-" + codec + ".zarr"
		writeZarrCodec(t, dir, name, codec, shape, chunks, vals)
		src := `x = from_zarr("` + name + `")
w = cos(linspace(90, -90, 9) * 0.017453292519943295)
g = (x * w[:, None]).sum(axis=(1, 2))
`
		g, err := lang.ParseData(src, nil, root.FS())
		if err != nil {
			t.Fatal(err)
		}
		plain, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		fusedReads := 0
		fused, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, func(cg *chunk.Graph) {
			for _, op := range cg.Ops {
				if op.Kind == chunk.KindFromZarr {
					t.Errorf("%q: a read op left: %s", codec, op.Name())
				}
				if strings.HasPrefix(op.Name(), "fuse(from_zarr+") {
					fusedReads++
				}
			}
			if len(cg.Notes) != 0 {
				t.Errorf("%q: notes %q", codec, cg.Notes)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if fusedReads != 3 {
			t.Errorf("%q: %d reads fused in front of their reader, want 3", codec, fusedReads)
		}
		if !slices.Equal(plain["g"].Float64s(), fused["g"].Float64s()) {
			t.Errorf("%q: g fused %v, unfused %v", codec, fused["g"].Float64s(), plain["g"].Float64s())
		}
	}
}

// storeFixture makes a directory for Zarr arrays, opened as the data root
// the kernels read, and temperature-like values of shape from seed.
func storeFixture(t *testing.T, seed uint64, shape []int) (dir string, root *os.Root, ctx context.Context, vals []float64) {
	t.Helper()
	dir = t.TempDir()
	r := rand.New(rand.NewPCG(seed, seed))
	n := 1
	for _, d := range shape {
		n *= d
	}
	vals = make([]float64, n)
	for i := range vals {
		vals[i] = 280 + r.NormFloat64()
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dir, root, kernel.WithData(context.Background(), root), vals
}
