package codec

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"marsfs/tensor"
)

// TestReadNPYEveryDType has NumPy write arrays of every fixed-size numeric
// and bool dtype, in both byte orders and both memory orders, with the
// values each held dtype must read as (C order, little-endian): ReadNPY
// gives those bytes, and the layout says which dtype was converted.
func TestReadNPYEveryDType(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	const script = `
import sys, os
import numpy as np
out = sys.argv[1]
held = {"b1": "bool", "i1": "int32", "i2": "int32", "i4": "int32", "i8": "int64",
        "u1": "int32", "u2": "int32", "u4": "int64", "u8": "int64",
        "f2": "float32", "f4": "float32", "f8": "float64"}
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
			t.Errorf("%s: read as %v%v, values differ from NumPy's astype", name, a.DType, a.Shape)
		}
		l, err := ReadNPYHeader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		src, converted := l.Converted()
		code := name[2 : len(name)-2]
		if wantConv := !(code == "b1" || code == "i4" || code == "i8" || code == "f4" || code == "f8"); converted != wantConv {
			t.Errorf("%s: converted %v (from %s to %v)", name, converted, src, l.DType)
		}
	}
}

// TestFloat16 checks the half-precision conversion at its corners.
func TestFloat16(t *testing.T) {
	for _, tc := range []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 5.9604645e-08},
		{0x03ff, 6.097555e-05}, {0x0400, 6.1035156e-05}, {0x3555, 0.33325195},
		{0x7c00, float32(math.Inf(1))}, {0xfc00, float32(math.Inf(-1))},
	} {
		if got := float16(tc.h); got != tc.want {
			t.Errorf("float16(%#04x) = %v, want %v", tc.h, got, tc.want)
		}
	}
	if got := float16(0x7e00); got == got {
		t.Errorf("float16(0x7e00) = %v, want NaN", got)
	}
	if got := float16(0x8000); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("float16(0x8000) = %v, want -0", got)
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
