package tensortest

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec/zarr"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
)

// writeZarr writes a float64 array of the given shape and chunks, zstd,
// with marsfs' own writer, into dir/name, and returns its values.
func writeZarr(t *testing.T, dir, name string, shape, chunks []int, seed uint64) []float64 {
	t.Helper()
	a, err := zarr.New(shape, chunks, tensor.Float64, 2, "zstd")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 3))
	vals := make([]float64, shape[0]*shape[1])
	for i := range vals {
		vals[i] = 1e3 + r.NormFloat64()*float64(1+i%5)
	}
	root := filepath.Join(dir, name)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i*chunks[0] < shape[0]; i++ {
		for j := 0; j*chunks[1] < shape[1]; j++ {
			c := make([]byte, a.ChunkBytes())
			for r := 0; r < chunks[0] && i*chunks[0]+r < shape[0]; r++ {
				for q := 0; q < chunks[1] && j*chunks[1]+q < shape[1]; q++ {
					v := vals[(i*chunks[0]+r)*shape[1]+j*chunks[1]+q]
					binary.LittleEndian.PutUint64(c[(r*chunks[1]+q)*8:], math.Float64bits(v))
				}
			}
			enc, err := a.Encode(c)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, a.Key([]int{i, j})), enc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	meta, err := a.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, a.MetaName()), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	return vals
}

// TestFuseMapsFromZarr: the mean, variance and standard deviation of a
// Zarr array along an axis read each store chunk once, in one chained op
// (from_zarr and one maps op running the three maps), never storing the
// chunk; their results are the unfused graph's to the bit, and NumPy's
// (a two-pass reference) to rounding, along either axis, with ragged
// edges.
func TestFuseMapsFromZarr(t *testing.T) {
	dir := t.TempDir()
	shape, chunks := []int{53, 9}, []int{10, 4}
	vals := writeZarr(t, dir, "a.zarr", shape, chunks, 1)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx := kernel.WithData(context.Background(), root)
	nchunks := 6 * 3
	for axis := range 2 {
		src := fmt.Sprintf("x = from_zarr(\"a.zarr\")\nm = x.mean(axis=%d)\nv = x.var(axis=%d)\ns = x.std(axis=%d, ddof=1)\nfetch m, v, s\n", axis, axis, axis)
		g, err := lang.ParseData(src, nil, root.FS())
		if err != nil {
			t.Fatal(err)
		}
		plain, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		fusedOps := 0
		fused, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, func(cg *chunk.Graph) {
			for i, op := range cg.Ops {
				switch name := op.Name(); {
				case name == "fuse(from_zarr+maps(mean.map+var.map+std.map))":
					fusedOps++
				case name == tensor.OpFromZarr || strings.HasSuffix(name, ".map"):
					t.Errorf("axis %d: op %d %s stands alone", axis, op.Key, name)
				case op.Ranges != nil:
					for j, r := range op.RangeList() {
						if in := cg.Ops[op.Inputs[j]]; r.Whole() || in.Kind != chunk.KindFuse || r.Off < 0 || r.Off+r.Len() > in.Shape[0] {
							t.Errorf("axis %d: op %d %s reads %+v of op %d %s", axis, op.Key, name, r, in.Key, in.Name())
						}
					}
				}
				cg.Ops[i] = gobRoundTrip(t, op) // as workers get them
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if fusedOps != nchunks {
			t.Errorf("axis %d: %d chained reads of the store's %d chunks", axis, fusedOps, nchunks)
		}
		for _, name := range []string{"m", "v", "s"} {
			if !slices.Equal(plain[name].Float64s(), fused[name].Float64s()) {
				t.Errorf("axis %d: %s fused %v, unfused %v", axis, name, fused[name].Float64s(), plain[name].Float64s())
			}
		}
		// The two-pass reference along the axis.
		n, m := shape[axis], shape[1-axis]
		at := func(i, j int) float64 { // i along the axis
			if axis == 0 {
				return vals[i*shape[1]+j]
			}
			return vals[j*shape[1]+i]
		}
		for j := range m {
			sum := 0.0
			for i := range n {
				sum += at(i, j)
			}
			mean := sum / float64(n)
			m2 := 0.0
			for i := range n {
				d := at(i, j) - mean
				m2 += d * d
			}
			for _, c := range []struct {
				name string
				want float64
			}{{"m", mean}, {"v", m2 / float64(n)}, {"s", math.Sqrt(m2 / float64(n-1))}} {
				if got := fused[c.name].Float64s()[j]; math.Abs(got-c.want) > 1e-12*math.Abs(c.want)+1e-12 {
					t.Errorf("axis %d: %s[%d] = %v, want %v", axis, c.name, j, got, c.want)
				}
			}
		}
	}
}

// TestFuseMapsKept: a chunk whose maps make partials of different
// dtypes, or of a narrow dtype, keeps its maps apart; the maps of a
// session tensor's chunk (stored, so no chain) share one op, and so do
// those of a chunk some other op reads too, which keeps that reader;
// results do not change.
func TestFuseMapsKept(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dt    tensor.DType
		extra bool // x's abs is an output too
		maps  int  // maps ops expected
	}{
		{"float", tensor.Float64, false, 4},
		{"read", tensor.Float64, true, 4},
		{"int", tensor.Int64, false, 0},       // sum's partial is int64, mean's float64
		{"float16", tensor.Float16, false, 0}, // maps of a narrow dtype run widened, alone
	} {
		b := newGraph(t)
		vals := make([]float64, 48)
		for i := range vals {
			vals[i] = float64(i*i%17) - 5
		}
		x := b.input(arrayOf(tc.dt, []int{8, 6}, vals...), [][]int{{2, 2, 2, 2}, {6}})
		mdt := tensor.Float64
		if tc.dt == tensor.Float16 {
			mdt = tensor.Float16
		}
		first, name := b.op(tensor.OpSum, tc.dt, []int{6}, spec.Attrs{Axes: []int{0}}, x), "maps(sum.map+mean.map)"
		if tc.dt == tensor.Float16 {
			// Partials of float64 both, as a float64 x's would share.
			first = b.op(tensor.OpVar, mdt, []int{6}, spec.Attrs{Axes: []int{0}}, x)
		}
		outs := []*spec.Node{first, b.op(tensor.OpMean, mdt, []int{6}, spec.Attrs{Axes: []int{0}}, x)}
		if tc.extra {
			outs = append(outs, b.op(tensor.OpAbs, tc.dt, []int{8, 6}, spec.Attrs{}, x))
		}
		cg, err := b.tile(outs...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Compute(context.Background(), cg, func(id uint64) (*tensor.Array, error) { return b.stored[id], nil })
		if err != nil {
			t.Fatal(err)
		}
		f := fuse.Optimize(cg, fuse.Options{Fuse: true, FuseExpr: true})
		n := 0
		for i, op := range f.Ops {
			if op.Kind == chunk.KindMaps {
				n++
				if got := op.Name(); got != name {
					t.Errorf("%s: %s", tc.name, got)
				}
			}
			f.Ops[i] = gobRoundTrip(t, op)
		}
		if n != tc.maps {
			t.Errorf("%s: %d maps ops, want %d", tc.name, n, tc.maps)
		}
		got, err := Compute(context.Background(), f, func(id uint64) (*tensor.Array, error) { return b.stored[id], nil })
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if !slices.Equal(want[i].Data, got[i].Data) {
				t.Errorf("%s: output %d fused differs", tc.name, i)
			}
		}
	}
}
