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

// TestFromNPY has NumPy write .npy files of several dtypes, shapes, byte
// orders and memory orders, reads each in place with from_npy under
// several chunkings (fused and not), and compares with the file as
// ReadNPY reads it whole (itself checked against NumPy in codec).
func TestFromNPY(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skip("no numpy")
	}
	dir := t.TempDir()
	gen := `
import sys, os, numpy as np
rng = np.random.default_rng(2)
for code in ["<f8", ">f8", "<i4", ">i2", "|u1", "<f2", "|b1", "<u8"]:
    for shape in [(), (7,), (5, 6), (3, 4, 5)]:
        for order in "CF":
            dt = np.dtype(code)
            a = (rng.standard_normal(shape) * 100).astype(dt)
            name = "%s_%d_%s.npy" % (code[1:], len(shape), order)
            if code[0] == ">":
                name = "be" + name
            np.save(os.path.join(sys.argv[1], name), np.asarray(a, order=order))
`
	if out, err := exec.Command(py, "-c", gen, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v: %s", err, out)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	data := root.FS()
	ctx := kernel.WithData(context.Background(), root)
	files, _ := filepath.Glob(filepath.Join(dir, "*.npy"))
	if len(files) != 8*4*2 {
		t.Fatalf("%d files", len(files))
	}
	for _, file := range files {
		name := filepath.Base(file)
		raw, _ := os.ReadFile(file)
		want, err := codec.ReadNPY(bytes.NewReader(raw), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, chunks := range []string{"", ", chunks=2", ", chunks=1", ", chunks=3"} {
			for _, opt := range []fuse.Options{{}, {Fuse: true, FuseExpr: true}} {
				src := fmt.Sprintf("x = from_npy(%q%s)\n", name, chunks)
				g, err := lang.ParseData(src, nil, data)
				if err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				got, err := ComputeGraph(ctx, g, nil, nil, opt, nil)
				if err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				x := got["x"]
				if x.DType != want.DType || fmt.Sprint(x.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(x.Data, want.Data) {
					t.Errorf("%s: %v%v differs from the file's %v%v", src, x.DType, x.Shape, want.DType, want.Shape)
				}
			}
		}
	}
}

// TestFromNPYRefused checks what from_npy refuses at parse, naming what is
// wrong: no data directory, paths that leave it, a missing file, a file
// that is no .npy, one shorter than its header says.
func TestFromNPYRefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "junk.npy"), []byte("not a numpy file"), 0o644)
	short := codec.NPYHeader(5, []int{100}) // float64 x 100, no data
	os.WriteFile(filepath.Join(dir, "short.npy"), short, 0o644)
	data := os.DirFS(dir)
	for _, tc := range []struct {
		src  string
		data bool
		want string
	}{
		{`x = from_npy("a.npy")`, false, "no data directory"},
		{`x = from_npy("/etc/passwd")`, true, "not inside the data directory"},
		{`x = from_npy("../x.npy")`, true, "not inside the data directory"},
		{`x = from_npy("a/../../x.npy")`, true, "not inside the data directory"},
		{`x = from_npy("missing.npy")`, true, "no such file"},
		{`x = from_npy("junk.npy")`, true, "not a .npy file"},
		{`x = from_npy("short.npy")`, true, "header says 800 bytes"},
		{`x = from_npy(3)`, true, "must be a string"},
	} {
		var d = data
		if !tc.data {
			d = nil
		}
		_, err := lang.ParseData(tc.src+"\n", nil, d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestToNPY writes tensors of several dtypes and shapes with to_npy under
// several chunkings, fused and not, and reads each file back: whole and
// equal to the tensor, the header last (no temporary file is left), and
// NumPy loads it equal. A file that exists is refused without
// overwrite=True, and replaced with it.
func TestToNPY(t *testing.T) {
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
	}
	for _, c := range []string{"1", "2", "5", "100"} {
		for _, opt := range []fuse.Options{{}, {Fuse: true, FuseExpr: true}} {
			var src strings.Builder
			for _, tc := range cases {
				fmt.Fprintf(&src, "%s = %s\nto_npy(%s, %q, overwrite=True)\n", tc.name, strings.ReplaceAll(tc.expr, "{c}", c), tc.name, tc.name+".npy")
			}
			src.WriteString("fetch " + "f, i, b, h, s, e" + "\n")
			g, err := lang.ParseData(src.String(), nil, data)
			if err != nil {
				t.Fatalf("%s: %v", src.String(), err)
			}
			got, err := ComputeGraph(ctx, g, nil, nil, opt, nil)
			if err != nil {
				t.Fatalf("chunks %s: %v", c, err)
			}
			for _, tc := range cases {
				raw, err := os.ReadFile(filepath.Join(dir, tc.name+".npy"))
				if err != nil {
					t.Fatal(err)
				}
				back, err := codec.ReadNPY(bytes.NewReader(raw), 0)
				if err != nil {
					t.Fatalf("%s.npy: %v", tc.name, err)
				}
				want := got[tc.name]
				if back.DType != want.DType || fmt.Sprint(back.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(back.Data, want.Data) {
					t.Errorf("chunks %s: %s.npy holds %v%v, the tensor is %v%v", c, tc.name, back.DType, back.Shape, want.DType, want.Shape)
				}
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if py := "/usr/bin/python3"; exec.Command(py, "-c", "import numpy").Run() == nil {
		check := `import sys, numpy as np
d = sys.argv[1]
ok = np.array_equal(np.load(d + "/f.npy"), np.arange(24).reshape(4, 6) * 0.5) and \
     np.array_equal(np.load(d + "/i.npy"), np.arange(60).reshape(3, 4, 5).astype("int16") - 7) and \
     np.load(d + "/h.npy").dtype == np.float16 and np.load(d + "/s.npy") == 10 and np.load(d + "/e.npy").shape == (0, 3)
print(ok)`
		if out, err := exec.Command(py, "-c", check, dir).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "True" {
			t.Errorf("NumPy reads the files: %s %v", out, err)
		}
	}
	// An existing file is refused without overwrite.
	if _, err := lang.ParseData("x = ones(3)\nto_npy(x, \"f.npy\")\n", nil, data); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("to_npy over an existing file: %v", err)
	}
	for _, tc := range []struct{ src, want string }{
		{"y = to_npy(ones(3), \"a.npy\")", "statement of its own"},
		{"to_npy(ones(3), \"../a.npy\")", "not inside the data directory"},
		{"to_npy(ones(3), \"no/such/dir/a.npy\")", "does not exist"},
		{"to_npy(ones(3), \"a.npy\")\nto_npy(ones(4), \"a.npy\")", "written twice"},
		{"ones(3)", "not assigned to a name"},
	} {
		if _, err := lang.ParseData(tc.src+"\n", nil, data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestSinkJSON sends a spec that writes a file through its JSON form: the
// sink comes back the same.
func TestSinkJSON(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	g, err := lang.ParseData("x = ones((2, 3))\nto_npy(x * 2, \"sub.npy\", overwrite=True)\n", nil, root.FS())
	if err != nil {
		t.Fatal(err)
	}
	js, err := g.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := lang.ParseData(string(js), nil, root.FS())
	if err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	if len(back.Sinks) != 1 || back.Sinks[0].Path != "sub.npy" || !back.Sinks[0].Overwrite || back.Sinks[0].Format != "npy" ||
		fmt.Sprint(back.Sinks[0].Node.Shape) != "[2 3]" {
		t.Errorf("sinks after JSON: %+v\n%s", back.Sinks, js)
	}
}
