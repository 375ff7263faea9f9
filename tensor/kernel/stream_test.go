package kernel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec/zarr"
)

// streamStore writes a one-chunk Zarr array of the given dtype, shape and
// compressor under dir, its values around 280 with a spread of a few
// units (a temperature's) and NaN at nan of them, and returns the read
// op of its chunk.
func streamStore(t *testing.T, dir string, dt tensor.DType, shape []int, compressor string, nan int, seed uint64) *chunk.Op {
	t.Helper()
	arr, err := zarr.New(shape, shape, dt, 2, compressor)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("s%d-%v-%s.zarr", seed, dt, compressor)
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	x := tensor.NewArray(dt, shape)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range x.Len() {
		v := 280 + 12*math.Sin(float64(i)/50) + r.NormFloat64()
		if i < nan*97 && i%97 == 3 {
			v = math.NaN()
		}
		if dt == tensor.Float32 {
			x.Float32s()[i] = float32(v)
		} else {
			x.Float64s()[i] = v
		}
	}
	enc, err := arr.Encode(x.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, arr.Key(make([]int, len(shape)))), enc, 0o644); err != nil {
		t.Fatal(err)
	}
	return &chunk.Op{Kind: chunk.KindFromZarr, Shape: slices.Clone(shape), DType: dt,
		Args: chunk.ZarrArgs{Path: name, Array: arr.Desc(), Offset: make([]int, len(shape))}}
}

// TestStreamReduce runs fuse(from_zarr+map) of blosc chunks block by
// block (streamReduce) and checks its partials against the general path
// (the chunk read, then the map op): a mean's and a float64 sum's to the
// bit, a var's and std's M2 within 1e-9 of the two-pass one, NaN where it
// has NaN; float32 and float64, the leading one or two axes reduced, rows
// that are not a multiple of the vector or of a blosc block, a chunk of
// many blocks, and a maps op of a mean and a var. Chunks the way cannot
// take (zstd, the last axis reduced, a missing file) are declined and run
// by the general path.
func TestStreamReduce(t *testing.T) {
	dir, ctx := dataDir(t)
	type tc struct {
		dt    tensor.DType
		shape []int
		axes  []int
		nan   int
	}
	cases := []tc{
		{tensor.Float32, []int{24, 18, 36}, []int{0}, 0},
		{tensor.Float32, []int{24, 181, 360}, []int{0}, 0}, // 12 blocks of 512 KB
		{tensor.Float32, []int{7, 13, 29}, []int{0}, 3},
		{tensor.Float32, []int{5, 3, 67}, []int{0, 1}, 0},
		{tensor.Float32, []int{3, 70001}, []int{0}, 2},
		{tensor.Float64, []int{11, 9, 31}, []int{0}, 0},
		{tensor.Float64, []int{4, 65537}, []int{0}, 5},
	}
	seed := uint64(0)
	for _, c := range cases {
		seed++
		read := streamStore(t, dir, c.dt, c.shape, "blosc", c.nan, seed)
		x, err := Run(ctx, read, nil)
		if err != nil {
			t.Fatal(err)
		}
		reds := []string{tensor.OpMean, tensor.OpVar, tensor.OpStd}
		if c.dt == tensor.Float64 {
			reds = append(reds, tensor.OpSum)
		}
		var maps []chunk.Op
		for _, red := range reds {
			m := mapOp(red, c.dt, c.shape, c.axes)
			if red != tensor.OpSum {
				maps = append(maps, *m)
			}
			want, err := Run(ctx, m, []*tensor.Array{x})
			if err != nil {
				t.Fatal(err)
			}
			got := runStream(t, ctx, read, m)
			compareStream(t, fmt.Sprintf("%v%v %s over %v", c.dt, c.shape, red, c.axes), red, got.Float64s(), want.Float64s())
		}
		// maps(mean.map+var.map+std.map): the partials one after the other.
		total := 0
		for _, m := range maps {
			total += tensor.NumElements(m.Shape)
		}
		mo := &chunk.Op{Kind: chunk.KindMaps, Inputs: []int{0}, Shape: []int{total}, DType: tensor.Float64,
			Args: chunk.MapsArgs{Members: maps}}
		want, err := Run(ctx, mo, []*tensor.Array{x})
		if err != nil {
			t.Fatal(err)
		}
		got := runStream(t, ctx, read, mo).Float64s()
		at := 0
		for _, m := range maps {
			n := tensor.NumElements(m.Shape)
			red := m.Args.(chunk.ReduceArgs).Op
			compareStream(t, fmt.Sprintf("%v%v maps' %s over %v", c.dt, c.shape, red, c.axes), red, got[at:at+n], want.Float64s()[at:at+n])
			at += n
		}
	}

	// Declined: zstd, the last axis reduced, a missing chunk (the fill
	// value); the fuse op still runs, by the general path.
	zstd := streamStore(t, dir, tensor.Float32, []int{8, 100}, "zstd", 0, 90)
	blosc := streamStore(t, dir, tensor.Float32, []int{8, 100}, "blosc", 0, 91)
	missing := *blosc
	za := missing.Args.(chunk.ZarrArgs)
	za.Path = "missing.zarr"
	missing.Args = za
	for _, d := range []struct {
		name string
		read *chunk.Op
		axes []int
	}{{"zstd", zstd, []int{0}}, {"last axis", blosc, []int{1}}, {"missing file", &missing, []int{0}}} {
		m := mapOp(tensor.OpMean, tensor.Float32, []int{8, 100}, d.axes)
		op := fuseOf(d.read, m)
		p, ok := streamable(op, op.Args.(chunk.FuseArgs).Members)
		if ok {
			if _, ok, _ = streamReduce(ctx, op, p); ok {
				t.Errorf("%s: streamed", d.name)
			}
		}
		if _, err := Run(ctx, op, nil); err != nil {
			t.Errorf("%s: %v", d.name, err)
		}
	}
}

func fuseOf(read, m *chunk.Op) *chunk.Op {
	mm := *m
	mm.Inputs = []int{0}
	return &chunk.Op{Kind: chunk.KindFuse, Shape: mm.Shape, DType: mm.DType,
		Args: chunk.FuseArgs{Members: []chunk.Op{*read, mm}}}
}

// runStream runs fuse(read+m) by streamReduce, failing when it declines,
// and through Run, which must give the same chunk.
func runStream(t *testing.T, ctx context.Context, read, m *chunk.Op) *tensor.Array {
	t.Helper()
	op := fuseOf(read, m)
	p, ok := streamable(op, op.Args.(chunk.FuseArgs).Members)
	if !ok {
		t.Fatalf("%s of %v%v: not streamable", m.Kind, read.DType, read.Shape)
	}
	// The output comes from an allocator that hands out dirty memory
	// (a worker's shared memory reused), which the sums must not add to.
	dirty := tensor.WithAlloc(ctx, func(dt tensor.DType, shape []int, zero bool) *tensor.Array {
		a := tensor.NewArray(dt, shape)
		for i := range a.Data {
			a.Data[i] = 0xff // NaN in every float64
		}
		return a
	})
	out, ok, err := streamReduce(dirty, op, p)
	if !ok || err != nil {
		t.Fatalf("%s of %v%v: streamed %v, %v", m.Kind, read.DType, read.Shape, ok, err)
	}
	viaRun, err := Run(ctx, op, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(viaRun.Data, out.Data) {
		t.Fatalf("%s of %v%v: Run's fused op differs from streamReduce's", m.Kind, read.DType, read.Shape)
	}
	return out
}

// compareStream holds a streamed partial to the general path's: sums and
// counts to the bit, M2 within 1e-9 relative (it is computed another
// way), NaN where it is NaN.
func compareStream(t *testing.T, what, red string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		exact := red == tensor.OpMean || red == tensor.OpSum || i%3 != 2
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if math.IsNaN(w) != math.IsNaN(g) {
				t.Fatalf("%s: value %d is %v, want %v", what, i, g, w)
			}
		case exact && math.Float64bits(g) != math.Float64bits(w):
			t.Fatalf("%s: value %d is %v, want %v to the bit", what, i, g, w)
		case !exact && math.Abs(g-w) > 1e-9*math.Abs(w)+1e-12:
			t.Fatalf("%s: M2 %d is %v, want %v", what, i, g, w)
		}
	}
}

// TestStreamReduceEdge streams the last chunk of an array whose first
// axis ends inside it (a read of the chunk's leading rows): its partials
// are the general path's to the bit (M2 within 1e-9), and the padding
// rows past the array's end, NaN here, are not read; an edge along
// another axis is declined.
func TestStreamReduceEdge(t *testing.T) {
	dir, ctx := dataDir(t)
	for i, c := range []struct {
		dt            tensor.DType
		shape, chunks []int
	}{
		{tensor.Float32, []int{36, 181, 360}, []int{24, 181, 360}}, // the climate store's last chunk: 12 rows of 24
		{tensor.Float32, []int{25, 7, 70}, []int{24, 7, 70}},
		{tensor.Float64, []int{30, 3, 677}, []int{8, 3, 677}},
	} {
		arr, err := zarr.New(c.shape, c.chunks, c.dt, 2, "blosc")
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("edge%d.zarr", i)
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		nd := len(c.shape)
		idx := make([]int, nd)
		idx[0] = (c.shape[0] - 1) / c.chunks[0]
		rows := c.shape[0] - idx[0]*c.chunks[0]
		stored := tensor.NewArray(c.dt, c.chunks)
		inner := stored.Len() / c.chunks[0]
		r := rand.New(rand.NewPCG(uint64(i), 9))
		for e := range stored.Len() {
			v := 280 + 12*math.Sin(float64(e)/50) + r.NormFloat64()
			if e >= rows*inner || e%89 == 5 {
				v = math.NaN() // the padding, and a few values of the read
			}
			if c.dt == tensor.Float32 {
				stored.Float32s()[e] = float32(v)
			} else {
				stored.Float64s()[e] = v
			}
		}
		enc, err := arr.Encode(stored.Data)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, arr.Key(idx)), enc, 0o644); err != nil {
			t.Fatal(err)
		}
		off := make([]int, nd)
		off[0] = idx[0] * c.chunks[0]
		xshape := slices.Clone(c.chunks)
		xshape[0] = rows
		read := &chunk.Op{Kind: chunk.KindFromZarr, Shape: xshape, DType: c.dt,
			Args: chunk.ZarrArgs{Path: name, Array: arr.Desc(), Offset: off}}
		x, err := Run(ctx, read, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, red := range []string{tensor.OpMean, tensor.OpVar} {
			m := mapOp(red, c.dt, xshape, []int{0})
			want, err := Run(ctx, m, []*tensor.Array{x})
			if err != nil {
				t.Fatal(err)
			}
			got := runStream(t, ctx, read, m)
			compareStream(t, fmt.Sprintf("edge %v%v of %v: %s", c.dt, xshape, c.chunks, red), red, got.Float64s(), want.Float64s())
			for j, v := range got.Float64s() {
				if math.IsNaN(v) && !math.IsNaN(want.Float64s()[j]) {
					t.Fatalf("edge %v: the padding was read", c.dt)
				}
			}
		}
	}
	// Cut short along the kept axes: not streamed.
	arr, err := zarr.New([]int{24, 10}, []int{24, 8}, tensor.Float32, 2, "blosc")
	if err != nil {
		t.Fatal(err)
	}
	read := &chunk.Op{Kind: chunk.KindFromZarr, Shape: []int{24, 2}, DType: tensor.Float32,
		Args: chunk.ZarrArgs{Path: "none.zarr", Array: arr.Desc(), Offset: []int{0, 8}}}
	if _, _, ok := leadingStoreChunk(read); ok {
		t.Errorf("a chunk cut short along its last axis taken for a leading read")
	}
}
