package codec

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"marsfs/tensor"
)

// TestReadNPYEveryDType has NumPy write arrays of every fixed-size numeric
// and bool dtype, in both byte orders and both memory orders: ReadNPY
// gives each in its own dtype, C order and little-endian, the bytes NumPy
// gives.
func TestReadNPYEveryDType(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	const script = `
import sys, os
import numpy as np
out = sys.argv[1]
held = {"b1": "bool", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
        "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
        "f2": "float16", "f4": "float32", "f8": "float64"}
rng = np.random.default_rng(3)
for code, h in held.items():
    for bo in "<>":
        for order in "CF":
            dt = np.dtype(bo + code) if code != "b1" else np.dtype("bool")
            shape = (3, 4, 5)
            if dt.kind == "b":
                a = rng.integers(0, 2, size=shape).astype(dt)
            elif dt.kind == "f":
                a = rng.normal(0, 1000, size=shape).astype(dt)
                a.flat[0], a.flat[1], a.flat[2] = np.inf, -np.inf, 0.5
            else:
                info = np.iinfo(dt)
                hi = min(int(info.max), 2**62)
                a = rng.integers(int(info.min), hi, size=shape, dtype=np.int64 if info.min < 0 else np.uint64).astype(dt)
                a.flat[0], a.flat[1] = info.min, min(int(info.max), 2**63 - 1)
            a = np.asarray(a, order=order)
            name = "%s%s_%s" % ({"<": "le", ">": "be"}[bo], code, order)
            np.save(os.path.join(out, name + ".npy"), a)
            want = np.ascontiguousarray(a).astype(np.dtype(h).newbyteorder("<"))
            with open(os.path.join(out, name + ".want"), "wb") as f:
                f.write(want.tobytes())
`
	if out, err := exec.Command(py, "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.npy"))
	if len(files) != 12*2*2 {
		t.Fatalf("%d files from numpy", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".npy")
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(strings.TrimSuffix(file, ".npy") + ".want")
		a, err := ReadNPY(bytes.NewReader(raw), 0)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(a.Data, want) {
			t.Errorf("%s: read as %v%v, values differ from NumPy's", name, a.DType, a.Shape)
		}
		code := name[2 : len(name)-2]
		if wantDT := map[string]tensor.DType{"b1": tensor.Bool, "i1": tensor.Int8, "i2": tensor.Int16, "i4": tensor.Int32,
			"i8": tensor.Int64, "u1": tensor.Uint8, "u2": tensor.Uint16, "u4": tensor.Uint32, "u8": tensor.Uint64,
			"f2": tensor.Float16, "f4": tensor.Float32, "f8": tensor.Float64}[code]; a.DType != wantDT {
			t.Errorf("%s: read as %v, want %v", name, a.DType, wantDT)
		}
	}
}

// TestFortranToC lays a Fortran-order 2x3x4 array out in C order.
func TestFortranToC(t *testing.T) {
	shape := []int{2, 3, 4}
	f := tensor.NewArray(tensor.Int32, shape)
	// Element (i, j, k) holds 100i + 10j + k, at Fortran offset i + 2j + 6k.
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				f.Int32s()[i+2*j+6*k] = int32(100*i + 10*j + k)
			}
		}
	}
	c := tensor.NewArray(tensor.Int32, shape)
	FortranToC(c, f.Data)
	for n, v := range c.Int32s() {
		if i, j, k := n/12, n/4%3, n%4; v != int32(100*i+10*j+k) {
			t.Fatalf("C element %d = %d, want %d", n, v, 100*i+10*j+k)
		}
	}
}
