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
	"marsfs/tensor/spec/lang"
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
				g, err := lang.ParseData(src, nil, root.FS())
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
	g, err := lang.ParseData("x = from_zarr(\"c_zstd.zarr\")\ns = x.sum(axis=0)\n", nil, root.FS())
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
		{"v3shard.zarr", "sharding_indexed: inner chunks [] in shards of [4]"},
		{"empty.zarr", "not a Zarr array"},
	} {
		src := fmt.Sprintf("x = from_zarr(%q)\n", tc.path)
		_, err := lang.ParseData(src, nil, root.FS())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "from_zarr") {
			t.Errorf("%s: %v, want %q", strings.TrimSpace(src), err, tc.want)
		}
	}
	if _, err := lang.ParseData("x = from_zarr(\"a.zarr\")\n", nil, nil); err == nil || !strings.Contains(err.Error(), "no data directory") {
		t.Errorf("without a data directory: %v", err)
	}
}

// TestToZarr writes tensors of several dtypes and shapes with to_zarr,
// each compressor and both formats, under several chunkings (regular and
// not), fused and not: read back by from_zarr equal to the tensor, no
// temporary left, and the format 2 arrays read by zarr-python equal.
// An existing array is refused without overwrite=True.
func TestToZarr(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	data := root.FS()
	ctx := kernel.WithData(context.Background(), root)
	cases := []struct{ name, expr string }{
		{"f", "arange(24, chunks={c}).reshape(4, 6) * 0.5"},
		{"i", "arange(60, chunks={c}).reshape(3, 4, 5).astype('int16') - 7"},
		{"b", "arange(10, chunks={c}) % 3 == 0"},
		{"h", "(arange(12, chunks={c}) / 7).astype('float16')"},
		{"s", "arange(5, chunks={c}).sum()"},
		{"e", "zeros((0, 3), chunks={c})"},
		{"r", "arange(24, chunks=((5, 7, 12),)) * 3"}, // irregular chunks
	}
	var names []string
	for _, tc := range cases {
		names = append(names, tc.name)
	}
	compressors := []string{`"zstd"`, `"blosc"`, `"zlib"`, `None`}
	for ci, c := range []string{"1", "2", "5", "100"} {
		for _, opt := range []fuse.Options{{}, {Fuse: true, FuseExpr: true}} {
			for _, format := range []int{2, 3} {
				comp := compressors[ci%len(compressors)]
				var src strings.Builder
				for _, tc := range cases {
					fmt.Fprintf(&src, "%s = %s\nto_zarr(%s, \"%s%d.zarr\", compressor=%s, zarr_format=%d, overwrite=True)\n",
						tc.name, strings.ReplaceAll(tc.expr, "{c}", c), tc.name, tc.name, format, comp, format)
				}
				src.WriteString("fetch " + strings.Join(names, ", ") + "\n")
				g, err := lang.ParseData(src.String(), nil, data)
				if err != nil {
					t.Fatalf("%s: %v", src.String(), err)
				}
				got, err := ComputeGraph(ctx, g, nil, nil, opt, nil)
				if err != nil {
					t.Fatalf("chunks %s: %v", c, err)
				}
				for _, tc := range cases {
					path := fmt.Sprintf("%s%d.zarr", tc.name, format)
					g, err := lang.ParseData(fmt.Sprintf("x = from_zarr(%q)\n", path), nil, data)
					if err != nil {
						t.Fatal(err)
					}
					back, err := ComputeGraph(ctx, g, nil, nil, fuse.Options{}, nil)
					if err != nil {
						t.Fatal(err)
					}
					want, x := got[tc.name], back["x"]
					if x.DType != want.DType || fmt.Sprint(x.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(x.Data, want.Data) {
						t.Errorf("chunks %s, %s: %s holds %v%v, the tensor is %v%v", c, comp, path, x.DType, x.Shape, want.DType, want.Shape)
					}
				}
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.old")); len(left) > 0 {
		t.Errorf("replaced arrays left: %v", left)
	}
	if exec.Command(python, "-c", "import zarr").Run() == nil {
		check := `import sys, numpy as np, zarr
d = sys.argv[1]
ok = np.array_equal(zarr.open(d + "/f2.zarr", mode="r")[...], np.arange(24).reshape(4, 6) * 0.5) and \
     np.array_equal(zarr.open(d + "/i2.zarr", mode="r")[...], np.arange(60).reshape(3, 4, 5).astype("int16") - 7) and \
     np.array_equal(zarr.open(d + "/b2.zarr", mode="r")[...], np.arange(10) % 3 == 0) and \
     zarr.open(d + "/h2.zarr", mode="r").dtype == np.float16 and zarr.open(d + "/s2.zarr", mode="r")[...] == 10 and \
     zarr.open(d + "/e2.zarr", mode="r").shape == (0, 3) and \
     np.array_equal(zarr.open(d + "/r2.zarr", mode="r")[...], np.arange(24) * 3)
print(ok)`
		if out, err := exec.Command(python, "-c", check, dir).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "True" {
			t.Errorf("zarr-python reads the arrays: %s %v", out, err)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{"to_zarr(ones(3), \"f2.zarr\")", "exists"},
		{"to_zarr(ones(3), \"n.zarr\", compressor=\"lzma\")", "compressor \"lzma\""},
		{"to_zarr(ones(3), \"n.zarr\", zarr_format=4)", "zarr_format=4"},
		{"to_zarr(ones(3), \"../n.zarr\")", "not inside the data directory"},
		{"to_zarr(ones(3), \"no/dir/n.zarr\")", "does not exist"},
		{"y = to_zarr(ones(3), \"n.zarr\")", "statement of its own"},
	} {
		if _, err := lang.ParseData(tc.src+"\n", nil, data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
	// The JSON form carries the sink's options.
	g, err := lang.ParseData("to_zarr(ones((2, 3)), \"j.zarr\", compressor=None, zarr_format=3)\nx = from_zarr(\"f2.zarr\", chunks=2)\n", nil, data)
	if err != nil {
		t.Fatal(err)
	}
	js, err := g.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := lang.ParseData(string(js), nil, data)
	if err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	if s := back.Sinks; len(s) != 1 || s[0].Format != "zarr" || s[0].Compressor != "" || s[0].ZarrFormat != 3 {
		t.Errorf("sinks after JSON: %+v\n%s", s, js)
	}
	if x := back.Outputs[0].Node; x.Attrs.Zarr == nil || fmt.Sprint(x.Chunks) != "[[2 2] [2 2 2]]" {
		t.Errorf("from_zarr after JSON: %+v\n%s", x, js)
	}
}
