package tensortest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"marsfs/tensor/codec"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
)

const python = "/usr/bin/python3"

func needZarr(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import zarr, numcodecs, numpy").Run(); err != nil {
		t.Skip("no python3 with zarr, numcodecs and numpy (apt-get install python3-zarr): " + err.Error())
	}
}

// zarrStores has zarr-python write the stores of codec/zarr's interop
// test into a data directory: NAME.zarr beside NAME.npy, what zarr-python
// reads from it.
func zarrStores(t *testing.T) (string, *os.Root) {
	needZarr(t)
	dir := t.TempDir()
	if out, err := exec.Command(python, "../codec/zarr/testdata/gen_stores.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("zarr-python: %v\n%s", err, out)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dir, root
}

// TestFromZarr reads every store zarr-python wrote (each codec, shuffle,
// separator, order, dtype, fill value, ragged edges, a group's arrays)
// with from_zarr, in the store's chunks and in others that cut across
// them, fused and not, and compares with what zarr-python reads.
func TestFromZarr(t *testing.T) {
	dir, root := zarrStores(t)
	ctx := kernel.WithData(context.Background(), root)
	npys, _ := filepath.Glob(filepath.Join(dir, "*.npy"))
	for _, npy := range npys {
		name := strings.TrimSuffix(filepath.Base(npy), ".npy")
		store := name + ".zarr"
		switch name {
		case "g_x":
			store = "g.zarr/x"
		case "g_sub_y":
			store = "g.zarr/sub/y"
		}
		raw, _ := os.ReadFile(npy)
		want, err := codec.ReadNPY(bytes.NewReader(raw), 0)
		if err != nil {
			t.Fatal(err)
		}
		chunkings := []string{"", ", chunks=4", ", chunks=11"}
		if len(want.Shape) == 0 {
			chunkings = chunkings[:1]
		}
		if strings.HasPrefix(name, "big") {
			chunkings = []string{"", ", chunks=150000"}
		}
		for _, chunks := range chunkings {
			for _, opt := range []fuse.Options{{}, {Fuse: true, FuseExpr: true}} {
				src := fmt.Sprintf("x = from_zarr(%q%s)\n", store, chunks)
				g, err := spec.ParseData(src, nil, root.FS())
				if err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				got, err := ComputeGraph(ctx, g, nil, nil, opt, nil)
				if err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				x := got["x"]
				if x.DType != want.DType || fmt.Sprint(x.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(x.Data, want.Data) {
					t.Errorf("%s: %v%v differs from zarr-python's %v%v", src, x.DType, x.Shape, want.DType, want.Shape)
				}
			}
		}
	}
	// Computed on: a reduction over a store read in its chunks.
	g, err := spec.ParseData("x = from_zarr(\"c_zstd.zarr\")\ns = x.sum(axis=0)\n", nil, root.FS())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestFromZarrRefused checks what from_zarr refuses at parse, naming the
// path and what is wrong.
func TestFromZarrRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	meta := func(dtype, comp string) string {
		return `{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "` + dtype + `", "compressor": ` + comp + `, "fill_value": 0, "order": "C", "filters": null}`
	}
	write("junk.zarr/.zarray", "{not json")
	write("cplx.zarr/.zarray", meta("<c16", "null"))
	write("str.zarr/.zarray", meta("<U4", "null"))
	write("snappy.zarr/.zarray", meta("<f8", `{"id": "snappy"}`))
	write("bz2.zarr/.zarray", meta("<f8", `{"id": "bz2", "level": 1}`))
	write("filters.zarr/.zarray", strings.Replace(meta("<f8", "null"), `"filters": null`, `"filters": [{"id": "delta", "dtype": "<f8"}]`, 1))
	write("grp.zarr/.zgroup", `{"zarr_format": 2}`)
	write("v3shard.zarr/zarr.json", `{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float64",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
		"chunk_key_encoding": {"name": "default"}, "fill_value": 0,
		"codecs": [{"name": "sharding_indexed", "configuration": {}}]}`)
	write("empty.zarr/x", "")
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct{ path, want string }{
		{"missing.zarr", "no such file"},
		{"../x.zarr", "not inside the data directory"},
		{"/etc", "not inside the data directory"},
		{"junk.zarr", ".zarray: not JSON"},
		{"cplx.zarr", `dtype "<c16" is not supported`},
		{"str.zarr", `dtype "<U4" is not supported`},
		{"snappy.zarr", "is not supported"},
		{"bz2.zarr", "bz2"},
		{"filters.zarr", "filters"},
		{"grp.zarr", "is a Zarr group"},
		{"v3shard.zarr", "sharding_indexed is not supported"},
		{"empty.zarr", "not a Zarr array"},
	} {
		src := fmt.Sprintf("x = from_zarr(%q)\n", tc.path)
		_, err := spec.ParseData(src, nil, root.FS())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "from_zarr") {
			t.Errorf("%s: %v, want %q", strings.TrimSpace(src), err, tc.want)
		}
	}
	if _, err := spec.ParseData("x = from_zarr(\"a.zarr\")\n", nil, nil); err == nil || !strings.Contains(err.Error(), "no data directory") {
		t.Errorf("without a data directory: %v", err)
	}
}
