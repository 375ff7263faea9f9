package zarr

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/codec"
)

const python = "/usr/bin/python3"

// needZarr skips the test when zarr-python is missing (CI installs it).
func needZarr(t testing.TB) {
	t.Helper()
	if err := exec.Command(python, "-c", "import zarr, numcodecs, numpy").Run(); err != nil {
		t.Skip("no python3 with zarr, numcodecs and numpy (apt-get install python3-zarr): " + err.Error())
	}
}

// readAll reads the whole array at dir, chunk by chunk, as a kernel reads
// a block: missing chunks are the fill value.
func readAll(t testing.TB, fsys interface {
	ReadFile(string) ([]byte, error)
}, a *Array, dir string) *tensor.Array {
	t.Helper()
	out := tensor.NewArray(a.DType, a.Shape)
	off := make([]int, len(a.Shape))
	lo, hi := a.Overlapping(a.Shape, off)
	chunk := make([]byte, a.ChunkBytes())
	var scratch []byte
	eachIndex(lo, hi, func(idx []int) {
		raw, err := fsys.ReadFile(filepath.Join(dir, a.Key(idx)))
		if os.IsNotExist(err) {
			a.Overlap(out.Data, a.Shape, off, idx, nil)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Decode(chunk, raw, &scratch); err != nil {
			t.Fatalf("%s chunk %v: %v", dir, idx, err)
		}
		a.Overlap(out.Data, a.Shape, off, idx, chunk)
	})
	return out
}

func eachIndex(lo, hi []int, f func([]int)) {
	for ax := range lo {
		if hi[ax] <= lo[ax] {
			return
		}
	}
	idx := slices.Clone(lo)
	for {
		f(idx)
		ax := len(idx) - 1
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < hi[ax] {
				break
			}
			idx[ax] = lo[ax]
		}
		if ax < 0 {
			return
		}
	}
}

type osFS struct{}

func (osFS) ReadFile(p string) ([]byte, error) { return os.ReadFile(p) }

// TestReadZarrPython has zarr-python write stores with every codec it
// offers here (blosc with each inner codec and shuffle, zstd, zlib, gzip,
// lz4, none), both dimension separators, C and F order, a dozen dtypes of
// either byte order, ragged edge chunks, missing chunks with fill values
// (a number, NaN, -Infinity, an integer, true), 0-d and 1-d arrays and a
// group's arrays, and reads each back equal to what zarr-python reads.
func TestReadZarrPython(t *testing.T) {
	needZarr(t)
	dir := t.TempDir()
	if out, err := exec.Command(python, "testdata/gen_stores.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("zarr-python: %v\n%s", err, out)
	}
	npys, _ := filepath.Glob(filepath.Join(dir, "*.npy"))
	if len(npys) < 50 {
		t.Fatalf("%d stores", len(npys))
	}
	for _, npy := range npys {
		name := strings.TrimSuffix(filepath.Base(npy), ".npy")
		store := name + ".zarr"
		switch name {
		case "g_x":
			store = "g.zarr/x"
		case "g_sub_y":
			store = "g.zarr/sub/y"
		}
		t.Run(name, func(t *testing.T) {
			a, err := Open(os.DirFS(dir), store)
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, osFS{}, a, filepath.Join(dir, store))
			raw, _ := os.ReadFile(npy)
			want, err := codec.ReadNPY(bytes.NewReader(raw), 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.DType != want.DType || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(got.Data, want.Data) {
				t.Errorf("%s: read %v%v, zarr-python reads %v%v (equal bytes: %v)", store, got.DType, got.Shape, want.DType, want.Shape, bytes.Equal(got.Data, want.Data))
			}
		})
	}
	// A group is refused, saying so.
	if _, err := Open(os.DirFS(dir), "g.zarr"); err == nil || !strings.Contains(err.Error(), "group") {
		t.Errorf("opening a group: %v", err)
	}
}

// TestWriteZarrPython writes arrays with Encode and Metadata, format 2
// with each compressor, and has zarr-python read them equal; format 3
// stores are read back by Open (zarr-python 2 cannot read format 3), and
// their chunks decoded by numcodecs.
func TestWriteZarrPython(t *testing.T) {
	needZarr(t)
	dir := t.TempDir()
	x := tensor.NewArray(tensor.Float64, []int{23, 17})
	for i := range x.Float64s() {
		x.Float64s()[i] = float64(i%97) * 0.25
	}
	var check strings.Builder
	check.WriteString("import numpy as np, zarr, sys\nd = sys.argv[1]\nx = (np.arange(23*17) % 97 * 0.25).reshape(23, 17)\nok = True\n")
	check.WriteString(readV3Py)
	for _, format := range []int{2, 3} {
		for _, comp := range []string{"zstd", "blosc", "zlib", ""} {
			a, err := New(x.Shape, []int{10, 6}, x.DType, format, comp)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("w%d_%s.zarr", format, comp)
			writeStore(t, filepath.Join(dir, name), a, x)
			back, err := Open(os.DirFS(dir), name)
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, osFS{}, back, filepath.Join(dir, name)); !bytes.Equal(got.Data, x.Data) {
				t.Errorf("%s: read back differs", name)
			}
			if format == 2 {
				fmt.Fprintf(&check, "z = zarr.open(d + '/%s', mode='r')\nif not np.array_equal(z[...], x): ok = False; print('%s differs')\n", name, name)
			} else {
				fmt.Fprintf(&check, "if not np.array_equal(read_v3(d + '/%s'), x): ok = False; print('%s differs')\n", name, name)
			}
		}
	}
	// Small chunks (3 and 19 float64s, under 256 bytes): numcodecs sizes
	// its output from a zstd frame's header, which must say the size.
	for _, n := range []int{3, 19} {
		small := tensor.NewArray(tensor.Float64, []int{n})
		for i := range small.Float64s() {
			small.Float64s()[i] = float64(i) * 0.5
		}
		for _, comp := range []string{"zstd", "blosc", "zlib"} {
			a, err := New(small.Shape, small.Shape, small.DType, 2, comp)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("small%d_%s.zarr", n, comp)
			writeStore(t, filepath.Join(dir, name), a, small)
			fmt.Fprintf(&check, "z = zarr.open(d + '/%s', mode='r')\nif not np.array_equal(z[...], np.arange(%d) * 0.5): ok = False; print('%s differs')\n", name, n, name)
		}
	}
	check.WriteString("print(ok)\n")
	if out, err := exec.Command(python, "-c", check.String(), dir).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Errorf("zarr-python reads marsfs' stores: %v\n%s", err, out)
	}
}

// writeStore writes x as the array a at dir, chunk by chunk.
func writeStore(t testing.TB, dir string, a *Array, x *tensor.Array) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	chunk := tensor.NewArray(a.DType, a.Chunks)
	lo, hi := a.Overlapping(a.Shape, make([]int, len(a.Shape)))
	eachIndex(lo, hi, func(idx []int) {
		clear(chunk.Data)
		// The chunk is the block of the array at idx*Chunks: the
		// array's overlap copied in, the rest zero.
		off := make([]int, len(idx))
		for ax := range idx {
			off[ax] = idx[ax] * a.Chunks[ax]
		}
		CopyBox(chunk.Data, a.Chunks, off, x.Data, x.Shape, make([]int, len(x.Shape)), x.DType.Size())
		enc, err := a.Encode(chunk.Data)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, a.Key(idx))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, enc, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	meta, err := a.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, a.MetaName()), meta, 0o644)
}

// readV3Py is a reader of the format 3 arrays marsfs writes, by hand with
// numcodecs (zarr-python 2 reads only format 2): zarr.json, the chunk
// keys "c/i/j", and each chunk's codecs undone by numcodecs.
const readV3Py = `
import json, os, itertools, numcodecs
def read_v3(path):
    m = json.load(open(path + "/zarr.json"))
    assert m["zarr_format"] == 3 and m["node_type"] == "array", m
    shape, chunks = m["shape"], m["chunk_grid"]["configuration"]["chunk_shape"]
    dt = np.dtype(m["data_type"])
    codecs = m["codecs"]
    assert codecs[0] == {"name": "bytes", "configuration": {"endian": "little"}}, codecs
    out = np.full(shape, m["fill_value"], dtype=dt)
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    for idx in itertools.product(*[range(g) for g in grid]):
        b = open(path + "/c/" + "/".join(map(str, idx)), "rb").read()
        for c in reversed(codecs[1:]):
            cfg = c.get("configuration", {})
            if c["name"] == "zstd":
                b = numcodecs.Zstd().decode(b)
            elif c["name"] == "gzip":
                b = numcodecs.GZip().decode(b)
            elif c["name"] == "blosc":
                assert cfg["shuffle"] == "shuffle" and cfg["typesize"] == dt.itemsize, cfg
                b = numcodecs.Blosc().decode(b)
            else:
                raise SystemExit("codec " + c["name"])
        a = np.frombuffer(bytes(b), dtype=dt.newbyteorder("<")).reshape(chunks)
        sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, shape))
        out[sl] = a[tuple(slice(0, x.stop - x.start) for x in sl)]
    return out
`
