package tensortest

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
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
	"marsfs/tensor/spec/lang"
)

// writeZarrCodec writes vals, a float64 array of shape, in chunks with
// compressor ("" for none), into dir/name.
func writeZarrCodec(t *testing.T, dir, name, compressor string, shape, chunks []int, vals []float64) {
	t.Helper()
	a, err := zarr.New(shape, chunks, tensor.Float64, 2, compressor)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, name)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i*chunks[0] < shape[0]; i++ {
		c := make([]byte, a.ChunkBytes())
		for r := 0; r < chunks[0] && i*chunks[0]+r < shape[0]; r++ {
			for q := range shape[1] {
				binary.LittleEndian.PutUint64(c[(r*shape[1]+q)*8:], math.Float64bits(vals[(i*chunks[0]+r)*shape[1]+q]))
			}
		}
		enc, err := a.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, a.Key([]int{i, 0})), enc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := a.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, a.MetaName()), meta, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRereadTwoPass: the two-pass variance m = x.mean(axis=0);
// d = ((x - m) ** 2).mean(axis=0) of an uncompressed or blosc Zarr array reads x
// again in the second pass (a copy of each read fused in front of its
// reader, nothing of x stored), and keeps a zstd one (a second decode
// costs more than storing it) unless the memory bound is too small for
// it; the plan's note says which and why. Results, under several
// chunkings, are the unfused graph's to the bit and NumPy's two-pass
// formula's to rounding; the anomaly x - m written with to_zarr is read
// again and written in the same op.
func TestRereadTwoPass(t *testing.T) {
	dir := t.TempDir()
	shape := []int{61, 7}
	vals := make([]float64, shape[0]*shape[1])
	for i := range vals {
		vals[i] = 5 + math.Sin(float64(i)*0.7)*float64(1+i%3)
	}
	// NumPy's m and d, two passes in float64.
	want := map[string][]float64{"m": make([]float64, shape[1]), "d": make([]float64, shape[1])}
	for j := range shape[1] {
		s := 0.0
		for i := range shape[0] {
			s += vals[i*shape[1]+j]
		}
		mu := s / float64(shape[0])
		m2 := 0.0
		for i := range shape[0] {
			d := vals[i*shape[1]+j] - mu
			m2 += d * d
		}
		want["m"][j], want["d"][j] = mu, m2/float64(shape[0])
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx := kernel.WithData(context.Background(), root)
	for _, tc := range []struct {
		compressor string
		rows       int
		bound      int64
		reread     bool
	}{
		{"", 10, 0, true},
		{"", 61, 0, true},
		{"", 4, 0, true},
		{"blosc", 10, 0, true},
		{"zstd", 10, 0, false},
		{"zstd", 10, 100, true}, // x's 3416 bytes pass the bound
	} {
		name := fmt.Sprintf("x-%s-%d.zarr", tc.compressor, tc.rows)
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			writeZarrCodec(t, dir, name, tc.compressor, shape, []int{tc.rows, shape[1]}, vals)
		}
		src := fmt.Sprintf("x = from_zarr(%q)\nm = x.mean(axis=0)\nd = ((x - m) ** 2).mean(axis=0)\nfetch m, d\n", name)
		g, err := lang.ParseData(src, nil, root.FS())
		if err != nil {
			t.Fatal(err)
		}
		plain, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		nchunks := (shape[0] + tc.rows - 1) / tc.rows
		for _, expr := range []bool{false, true} {
			var rereads, stored int
			var notes []string
			got, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{Fuse: true, FuseExpr: expr, MemoryBound: tc.bound}, func(cg *chunk.Graph) {
				notes = cg.Notes
				for i, op := range cg.Ops {
					switch n := op.Name(); {
					case strings.HasPrefix(n, "fuse(from_zarr+") && strings.Contains(n, "subtract"):
						rereads++
					case n == tensor.OpFromZarr:
						stored++
					}
					cg.Ops[i] = gobRoundTrip(t, op) // as workers get them
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			label := fmt.Sprintf("%q rows %d bound %d expr %v", tc.compressor, tc.rows, tc.bound, expr)
			if tc.reread && (rereads != nchunks || stored != 0) {
				t.Errorf("%s: %d chunks read again, %d stored, want %d and 0", label, rereads, stored, nchunks)
			}
			if !tc.reread && (rereads != 0 || stored != nchunks) {
				t.Errorf("%s: %d chunks read again, %d stored, want 0 and %d", label, rereads, stored, nchunks)
			}
			choice := "kept"
			if tc.reread {
				choice = "read again"
			}
			if len(notes) != 1 || !strings.Contains(notes[0], name) || !strings.Contains(notes[0], ": "+choice+", ") {
				t.Errorf("%s: notes %q, want one saying %s", label, notes, choice)
			}
			for _, out := range []string{"m", "d"} {
				if !slices.Equal(got[out].Float64s(), plain[out].Float64s()) {
					t.Errorf("%s: %s fused %v, unfused %v", label, out, got[out].Float64s(), plain[out].Float64s())
				}
				for j, w := range want[out] {
					if v := got[out].Float64s()[j]; math.Abs(v-w) > 1e-12*math.Abs(w) {
						t.Errorf("%s: %s[%d] = %v, want %v", label, out, j, v, w)
					}
				}
			}
		}
	}
}

// TestRereadAnomalyWrite: the anomaly x - m written with to_zarr, x read
// again, is one op a store chunk (the read, the subtraction, a program of
// its own so that the read streams into it, and the write), and the array
// written is x - m.
func TestRereadAnomalyWrite(t *testing.T) {
	dir := t.TempDir()
	shape := []int{23, 5}
	vals := make([]float64, shape[0]*shape[1])
	for i := range vals {
		vals[i] = float64(i%7) + 0.25*float64(i%3)
	}
	writeZarrCodec(t, dir, "x.zarr", "", shape, []int{6, 5}, vals)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx := kernel.WithData(context.Background(), root)
	src := "x = from_zarr(\"x.zarr\")\nm = x.mean(axis=0)\nto_zarr(x - m, \"a.zarr\", compressor=None)\nfetch m\n"
	g, err := lang.ParseData(src, nil, root.FS())
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	got, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, func(cg *chunk.Graph) {
		for i, op := range cg.Ops {
			n := op.Name()
			if n == "fuse(from_zarr+expr(subtract)+to_zarr.write)" {
				writes++
			} else if n == tensor.OpFromZarr || n == "subtract" || n == "expr(subtract)" || n == "to_zarr.write" {
				t.Errorf("op %d %s stands alone", op.Key, n)
			}
			cg.Ops[i] = gobRoundTrip(t, op)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if writes != 4 {
		t.Errorf("%d fused writes, want 4", writes)
	}
	m := got["m"].Float64s()
	g2, err := lang.ParseData("a = from_zarr(\"a.zarr\")\n", nil, root.FS())
	if err != nil {
		t.Fatal(err)
	}
	back, err := ComputeGraph(ctx, g2, nil, nil, fuse.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range back["a"].Float64s() {
		if w := vals[i] - m[i%shape[1]]; v != w {
			t.Fatalf("anomaly[%d] = %v, want %v", i, v, w)
		}
	}
}
