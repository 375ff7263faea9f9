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
	data := os.DirFS(dir)
	ctx := kernel.WithData(context.Background(), data)
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
				g, err := spec.ParseData(src, nil, data)
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
		_, err := spec.ParseData(tc.src+"\n", nil, d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.src, err, tc.want)
		}
	}
}
