package tensor

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os/exec"
	"testing"
)

// TestHalfRoundTrip converts every half to float32 and back.
func TestHalfRoundTrip(t *testing.T) {
	for i := range 1 << 16 {
		h := Half(i)
		f := h.Float32()
		if f != f {
			if g := HalfFromFloat32(f); g.Float32() == g.Float32() {
				t.Errorf("nan %#04x came back as %#04x", i, g)
			}
			continue
		}
		if g := HalfFromFloat32(f); g != h {
			t.Errorf("%#04x -> %v -> %#04x", i, f, g)
		}
	}
}

// TestHalfRoundingAsNumPy rounds float64 values of every magnitude a half
// meets, ties and subnormals included, and compares with NumPy's
// astype(float16).
func TestHalfRoundingAsNumPy(t *testing.T) {
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		t.Skip("no python3")
	}
	r := rand.New(rand.NewPCG(1, 2))
	var vals []float64
	for range 20000 {
		vals = append(vals, math.Ldexp(r.Float64()*2-1, r.IntN(40)-30))
	}
	for i := range 1 << 16 { // ties: halfway between neighbouring halves
		a, b := Half(i).Float32(), Half(i+1).Float32()
		if i&0x7fff < 0x7bff && a == a {
			vals = append(vals, (float64(a)+float64(b))/2)
		}
	}
	vals = append(vals, 65504, 65519.99, 65520, 1e6, -1e6, 5.96e-8, 2.98e-8, 2.99e-8, 0, math.Copysign(0, -1), math.Inf(1))
	var in bytes.Buffer
	binary.Write(&in, binary.LittleEndian, vals)
	cmd := exec.Command(py, "-c", "import sys, numpy as np; sys.stdout.buffer.write(np.frombuffer(sys.stdin.buffer.read(), '<f8').astype('<f2').tobytes())")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("numpy: %v", err)
	}
	want := make([]uint16, len(vals))
	binary.Read(bytes.NewReader(out), binary.LittleEndian, want)
	bad := 0
	for i, v := range vals {
		if got := HalfFromFloat64(v); uint16(got) != want[i] {
			if bad++; bad <= 10 {
				t.Errorf("%v (%#x): %#04x, NumPy %#04x", v, math.Float64bits(v), got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d values round unlike NumPy", bad, len(vals))
	}
}

func TestPromote(t *testing.T) {
	for _, tc := range []struct{ a, b, want DType }{
		{Int8, Uint8, Int16}, {Int16, Uint16, Int32}, {Int32, Uint32, Int64}, {Int64, Uint64, Float64},
		{Int8, Uint16, Int32}, {Int64, Uint32, Int64}, {Uint8, Float16, Float16}, {Int16, Float16, Float32},
		{Int32, Float32, Float64}, {Uint64, Float16, Float64}, {Bool, Uint8, Uint8}, {Float16, Float64, Float64},
		{Int32, Int8, Int32}, {Uint8, Uint64, Uint64}, {Bool, Bool, Bool}, {Int32, Float64, Float64},
	} {
		if got := Promote(tc.a, tc.b); got != tc.want {
			t.Errorf("Promote(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := Promote(tc.b, tc.a); got != tc.want {
			t.Errorf("Promote(%v, %v) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestHalfCorners checks the half-precision conversion at its corners.
func TestHalfCorners(t *testing.T) {
	for _, tc := range []struct {
		h    Half
		want float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 5.9604645e-08},
		{0x03ff, 6.097555e-05}, {0x0400, 6.1035156e-05}, {0x3555, 0.33325195},
		{0x7c00, float32(math.Inf(1))}, {0xfc00, float32(math.Inf(-1))},
	} {
		if got := tc.h.Float32(); got != tc.want {
			t.Errorf("Half(%#04x) = %v, want %v", uint16(tc.h), got, tc.want)
		}
	}
	if got := Half(0x7e00).Float32(); got == got {
		t.Errorf("Half(0x7e00) = %v, want NaN", got)
	}
	if got := Half(0x8000).Float32(); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("Half(0x8000) = %v, want -0", got)
	}
}
