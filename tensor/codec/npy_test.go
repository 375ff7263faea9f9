package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
)

// npyFixtures are files written by NumPy 1.24 (np.save and
// numpy.lib.format.write_array), with what they hold.
var npyFixtures = []struct {
	file  string
	dtype tensor.DType
	shape []int
	want  []float64 // nil: only dtype and shape are checked
	v1    bool      // written as version 1.0, so WriteNPY must match it byte for byte
}{
	{"f8_2x3.npy", tensor.Float64, []int{2, 3}, []float64{0.5, -1.25, 3, 1e-300, math.Inf(1), math.Copysign(0, -1)}, true},
	{"f4_4.npy", tensor.Float32, []int{4}, []float64{1.5, 2.25, -3, math.NaN()}, true},
	{"i4_2x2x2.npy", tensor.Int32, []int{2, 2, 2}, []float64{-4, -3, -2, -1, 0, 1, 2, 3}, true},
	{"i8_scalar.npy", tensor.Int64, []int{}, nil, true},
	{"b1_5.npy", tensor.Bool, []int{5}, []float64{1, 0, 1, 1, 0}, true},
	{"f8_0x3.npy", tensor.Float64, []int{0, 3}, []float64{}, true},
	{"i8_v2.npy", tensor.Int64, []int{3, 2}, []float64{0, 1, 2, 3, 4, 5}, false},
	{"f4_v3.npy", tensor.Float32, []int{1, 3}, []float64{1, 2, 3}, false},
}

func TestReadNPYFixtures(t *testing.T) {
	for _, fx := range npyFixtures {
		t.Run(fx.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "npy", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			a, err := ReadNPY(bytes.NewReader(raw), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if a.DType != fx.dtype || !slices.Equal(a.Shape, fx.shape) {
				t.Fatalf("got %v%v, want %v%v", a.DType, a.Shape, fx.dtype, fx.shape)
			}
			if err := a.Check(); err != nil {
				t.Fatal(err)
			}
			for i, w := range fx.want {
				g := a.Float64At(i)
				if g != w && !(math.IsNaN(g) && math.IsNaN(w)) || math.Signbit(g) != math.Signbit(w) {
					t.Errorf("element %d = %v, want %v", i, g, w)
				}
			}
			if fx.file == "i8_scalar.npy" && a.Int64s()[0] != -9007199254740993 {
				t.Errorf("scalar = %d", a.Int64s()[0])
			}
			var out bytes.Buffer
			if err := WriteNPY(&out, a); err != nil {
				t.Fatal(err)
			}
			if fx.v1 && !bytes.Equal(out.Bytes(), raw) {
				t.Errorf("WriteNPY differs from NumPy's file:\n got %q\nwant %q", out.Bytes(), raw)
			}
			b, err := ReadNPY(&out, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Data, b.Data) || !slices.Equal(a.Shape, b.Shape) || a.DType != b.DType {
				t.Error("round trip changed the array")
			}
		})
	}
}

func TestNPYHeaderAlignment(t *testing.T) {
	for _, shape := range [][]int{{}, {1}, {12345678901}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}} {
		for _, dt := range []tensor.DType{tensor.Bool, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Float64} {
			h := NPYHeader(dt, shape)
			if len(h)%64 != 0 || h[len(h)-1] != '\n' {
				t.Errorf("%v%v: header of %d bytes, last %q", dt, shape, len(h), h[len(h)-1])
			}
			if n := int(binary.LittleEndian.Uint16(h[8:])); n+10 != len(h) {
				t.Errorf("%v%v: header length field %d, header %d", dt, shape, n, len(h))
			}
			l, err := parseNPYHeader(string(h[10:]))
			if err != nil || l.DType != dt || !slices.Equal(l.Shape, shape) || l.Fortran || l.Big {
				t.Errorf("%v%v: header parses as %+v, %v", dt, shape, l, err)
			}
		}
	}
}

// npyFile builds a version 1.0 file with the given header dict and data.
func npyFile(dict string, data []byte) []byte {
	b := []byte(npyMagic + "\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	b = append(b, dict...)
	return append(b, data...)
}

func TestReadNPYErrors(t *testing.T) {
	f8 := func(shape string) string {
		return "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }"
	}
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "reading magic"},
		{"magic", []byte("\x93NUMPZ\x01\x00\x00\x00"), "bad magic"},
		{"version", []byte(npyMagic + "\x04\x00\x00\x00"), "unsupported version 4.0"},
		{"short header", []byte(npyMagic + "\x01\x00\x40\x00{'descr'"), "reading 64-byte header"},
		{"complex", npyFile("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", make([]byte, 16)), "npy: unsupported dtype '<c16'"},
		{"string", npyFile("{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }", make([]byte, 16)), "npy: unsupported dtype '<U4'"},
		{"object", npyFile("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), "npy: unsupported dtype '|O'"},
		{"odd int", npyFile("{'descr': '<i3', 'fortran_order': False, 'shape': (1,), }", make([]byte, 3)), "npy: unsupported dtype '<i3'"},
		{"short data", npyFile(f8("(2,)"), make([]byte, 12)), "npy: data is 12 bytes, header says 16"},
		{"trailing", npyFile(f8("(2,)"), make([]byte, 20)), "npy: data is 20 bytes, header says 16"},
		{"limit", npyFile(f8("(1000,)"), nil), "exceeds the limit"},
		{"overflow", npyFile(f8("(4294967296, 4294967296)"), nil), "too large"},
		{"huge dimension", npyFile(f8("(99999999999999999999,)"), nil), "dimension 99999999999999999999 is too large"},
		{"negative", npyFile(f8("(-1,)"), nil), "expected a dimension"},
		{"1-tuple", npyFile(f8("(2)"), make([]byte, 16)), "lacks the comma"},
		{"extra key", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (), 'x': 1}", make([]byte, 8)), "unexpected key \"x\""},
		{"missing key", npyFile("{'descr': '<f8', 'shape': ()}", make([]byte, 8)), "lacks key \"fortran_order\""},
		{"repeated key", npyFile("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': ()}", make([]byte, 8)), "repeats key"},
		{"not a dict", npyFile("['<f8']", nil), "not a dict"},
		{"code", npyFile("{'descr': __import__('os'), 'fortran_order': False, 'shape': ()}", nil), "expected a string"},
		{"junk after", npyFile(f8("()")+" x", make([]byte, 8)), "unexpected text after"},
		{"bool word", npyFile("{'descr': '<f8', 'fortran_order': 0, 'shape': ()}", make([]byte, 8)), "expected True or False"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNPY(bytes.NewReader(tc.file), 4096)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestReadNPYHandWritten(t *testing.T) {
	// Double quotes, no trailing comma, other key order, extra spaces.
	f := npyFile(`{"shape":(2 , 1 ,) ,"fortran_order":False,"descr":"<i4"}`+"   \n", []byte{1, 0, 0, 0, 255, 255, 255, 255})
	a, err := ReadNPY(bytes.NewReader(f), 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.DType != tensor.Int32 || !slices.Equal(a.Shape, []int{2, 1}) || a.Int32s()[1] != -1 {
		t.Fatalf("got %v%v %v", a.DType, a.Shape, a.Int32s())
	}
	// Bool bytes other than 0 and 1 read as true.
	f = npyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", []byte{0, 7, 1})
	if a, err = ReadNPY(bytes.NewReader(f), 0); err != nil || !bytes.Equal(a.Data, []byte{0, 1, 1}) {
		t.Fatalf("bools: %v %v", a, err)
	}
}

// numpyPython returns a Python interpreter that can import numpy, or skips.
func numpyPython(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import numpy").Run() == nil {
			return path
		}
	}
	t.Skip("no python3 with numpy")
	return ""
}

// TestNumPyLoadsWriteNPY checks that NumPy reads what WriteNPY writes.
func TestNumPyLoadsWriteNPY(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	a := tensor.NewArray(tensor.Float32, []int{2, 3})
	copy(a.Float32s(), []float32{0.5, -1, 2.25, float32(math.Inf(-1)), 1e-7, 3})
	b := tensor.NewArray(tensor.Bool, []int{3})
	b.Data[1] = 1
	c := tensor.NewArray(tensor.Int64, []int{})
	c.Int64s()[0] = math.MinInt64
	files := map[string]*tensor.Array{"a.npy": a, "b.npy": b, "c.npy": c}
	for name, arr := range files {
		var buf bytes.Buffer
		if err := WriteNPY(&buf, arr); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `import numpy as np, sys
for n in ["a", "b", "c"]:
    x = np.load(sys.argv[1] + "/" + n + ".npy")
    print(x.dtype, x.shape, x.tolist())
`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	want := "float32 (2, 3) [[0.5, -1.0, 2.25], [-inf, 1.0000000116860974e-07, 3.0]]\n" +
		"bool (3,) [False, True, False]\n" +
		"int64 () -9223372036854775808\n"
	if string(out) != want {
		t.Fatalf("numpy read:\n%s\nwant:\n%s", out, want)
	}
}

func FuzzReadNPY(f *testing.F) {
	for _, fx := range npyFixtures {
		raw, err := os.ReadFile(filepath.Join("testdata", "npy", fx.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", make([]byte, 16)))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadNPY(bytes.NewReader(b), 1<<20)
		if err != nil {
			return
		}
		if err := a.Check(); err != nil {
			t.Fatalf("ReadNPY returned a bad array: %v", err)
		}
		var buf bytes.Buffer
		if err := WriteNPY(&buf, a); err != nil {
			t.Fatal(err)
		}
		b2, err := ReadNPY(&buf, 0)
		if err != nil || !bytes.Equal(b2.Data, a.Data) || !slices.Equal(a.Shape, b2.Shape) {
			t.Fatalf("re-read failed: %v", err)
		}
	})
}
