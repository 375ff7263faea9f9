package codec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"marsfs/tensor"
)

// TestFormatTextNumPy compares FormatText with str(ndarray) as NumPy 1.24
// prints it (testdata/format, written by gen.py there).
func TestFormatTextNumPy(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "format", "*.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("only %d format cases", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".npy")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			a, err := ReadNPY(bytes.NewReader(raw), 0)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".npy") + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			if got := FormatText(a); got != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestFormatTextInvalid(t *testing.T) {
	bad := &tensor.Array{DType: tensor.Float64, Shape: []int{3}, Data: make([]byte, 5)}
	if got := FormatText(bad); !strings.HasPrefix(got, "<array:") {
		t.Errorf("FormatText of a bad array = %q", got)
	}
}

// TestFormatTextRandomNumPy renders random arrays of every dtype, of many
// shapes and magnitudes, and compares with what NumPy prints for them. It
// needs a python3 with numpy and skips otherwise.
func TestFormatTextRandomNumPy(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	const n = 300
	arrays := make([]*tensor.Array, n)
	for k := range arrays {
		dt := tensor.DTypes[r.IntN(len(tensor.DTypes))]
		shape := make([]int, r.IntN(4))
		for ax := range shape {
			shape[ax] = 1 + r.IntN(8)
		}
		if r.IntN(10) == 0 {
			shape = []int{1 + r.IntN(1500)}
		}
		a := tensor.NewArray(dt, shape)
		scale := math.Pow(10, float64(r.IntN(24)-12))
		digits := r.IntN(12)
		for i := 0; i < a.Len(); i++ {
			v := r.NormFloat64() * scale
			switch dt {
			case tensor.Bool:
				if r.IntN(2) == 0 {
					a.Data[i] = 1
				}
			case tensor.Int32:
				a.Int32s()[i] = int32(r.Int64N(1<<uint(1+r.IntN(31))) - 1<<uint(r.IntN(20)))
			case tensor.Int64:
				a.Int64s()[i] = r.Int64() >> uint(r.IntN(64))
			case tensor.Float32:
				a.Float32s()[i] = float32(roundTo(v, digits))
			case tensor.Float64:
				a.Float64s()[i] = roundTo(v, digits)
				if r.IntN(30) == 0 {
					a.Float64s()[i] = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0}[r.IntN(4)]
				}
			case tensor.Float16:
				// Magnitudes a half holds: 1e-5 to 1e4.
				a.Halves()[i] = tensor.HalfFromFloat64(roundTo(r.NormFloat64()*math.Pow(10, float64(r.IntN(10)-5)), digits))
				if r.IntN(30) == 0 {
					a.Halves()[i] = tensor.HalfFromFloat64([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 0}[r.IntN(4)])
				}
			default: // the other integers: random bits
				b := a.Data[i*dt.Size() : (i+1)*dt.Size()]
				for j := range b {
					b[j] = byte(r.Uint32())
				}
				if r.IntN(2) == 0 { // small values too
					clear(b[1:])
				}
			}
		}
		arrays[k] = a
		var buf bytes.Buffer
		if err := WriteNPY(&buf, a); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(k)+".npy"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `import numpy as np, sys
for k in range(int(sys.argv[2])):
    sys.stdout.write(str(np.load("%s/%d.npy" % (sys.argv[1], k))) + "\0")
`
	out, err := exec.Command(py, "-c", script, dir, strconv.Itoa(n)).Output()
	if err != nil {
		t.Fatalf("numpy: %v", err)
	}
	wants := strings.Split(string(out), "\x00")
	for k, a := range arrays {
		if got := FormatText(a); got != wants[k] {
			t.Errorf("array %d (%v%v):\ngot:\n%s\nwant:\n%s", k, a.DType, a.Shape, got, wants[k])
		}
	}
}

// roundTo rounds v to a number of significant digits, so that the arrays have
// short and long decimal forms alike.
func roundTo(v float64, digits int) float64 {
	if v == 0 || digits == 0 {
		return v
	}
	s := strconv.FormatFloat(v, 'e', digits, 64)
	r, _ := strconv.ParseFloat(s, 64)
	return r
}

// FuzzFormatText renders arbitrary arrays: it must not panic, and the
// brackets must balance.
func FuzzFormatText(f *testing.F) {
	f.Add(uint8(tensor.Float64), []byte{2, 3}, bytes.Repeat([]byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 1}, 6))
	f.Add(uint8(tensor.Float32), []byte{4}, []byte{0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0x7f, 1, 0, 0, 0, 0xff, 0xff, 0x7f, 0x7f})
	f.Add(uint8(tensor.Int64), []byte{}, []byte{1, 2, 3, 4, 5, 6, 7, 0x80})
	f.Add(uint8(tensor.Bool), []byte{1, 0}, []byte{})
	f.Fuzz(func(t *testing.T, dt uint8, dims []byte, data []byte) {
		if !tensor.DType(dt).Valid() || len(dims) > 4 {
			return
		}
		shape := make([]int, len(dims))
		for i, d := range dims {
			shape[i] = int(d % 16)
		}
		a := tensor.NewArray(tensor.DType(dt), shape)
		copy(a.Data, data)
		if a.DType == tensor.Bool {
			for i := range a.Data {
				a.Data[i] &= 1
			}
		}
		s := FormatText(a)
		if strings.Count(s, "[") != strings.Count(s, "]") {
			t.Fatalf("unbalanced brackets in %q", s)
		}
	})
}
