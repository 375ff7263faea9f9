package codec

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"marsfs/tensor"
)

func TestWriteCSV(t *testing.T) {
	f32 := tensor.NewArray(tensor.Float32, []int{2, 3})
	copy(f32.Float32s(), []float32{0.1, -2, 1e-5, float32(math.NaN()), float32(math.Inf(1)), 3.5e20})
	f64 := tensor.NewArray(tensor.Float64, []int{4})
	copy(f64.Float64s(), []float64{0.1, 1.0 / 3, math.Inf(-1), math.Copysign(0, -1)})
	i32 := tensor.NewArray(tensor.Int32, []int{2, 2})
	copy(i32.Int32s(), []int32{-1, 2, math.MaxInt32, math.MinInt32})
	i64 := tensor.NewArray(tensor.Int64, []int{1, 2})
	copy(i64.Int64s(), []int64{math.MinInt64, 7})
	b := tensor.NewArray(tensor.Bool, []int{3, 1})
	b.Data[0], b.Data[2] = 1, 1
	empty := tensor.NewArray(tensor.Float64, []int{0, 3})
	for _, tc := range []struct {
		a    *tensor.Array
		want string
	}{
		{f32, "0.1,-2,1e-05\nnan,inf,3.5e+20\n"},
		{f64, "0.1\n0.3333333333333333\n-inf\n-0\n"},
		{i32, "-1,2\n2147483647,-2147483648\n"},
		{i64, "-9223372036854775808,7\n"},
		{b, "True\nFalse\nTrue\n"},
		{empty, ""},
	} {
		var buf bytes.Buffer
		if err := WriteCSV(&buf, tc.a); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("%v%v: got %q, want %q", tc.a.DType, tc.a.Shape, buf.String(), tc.want)
		}
	}
}

func TestWriteCSVErrors(t *testing.T) {
	for _, shape := range [][]int{{}, {2, 2, 2}} {
		err := WriteCSV(&bytes.Buffer{}, tensor.NewArray(tensor.Float64, shape))
		if err == nil || !strings.Contains(err.Error(), "only 1-D and 2-D") {
			t.Errorf("shape %v: err = %v", shape, err)
		}
	}
	if err := WriteCSV(failWriter{}, tensor.NewArray(tensor.Int64, []int{10000})); err == nil {
		t.Error("write error not reported")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestNumPyLoadsCSV checks that numpy.loadtxt reads WriteCSV's output back to
// the same values.
func TestNumPyLoadsCSV(t *testing.T) {
	py := numpyPython(t)
	a := tensor.NewArray(tensor.Float64, []int{3, 2})
	copy(a.Float64s(), []float64{0.1, 1.0 / 3, math.NaN(), math.Inf(-1), 1e300, -5e-324})
	b := tensor.NewArray(tensor.Bool, []int{3})
	b.Data[1] = 1
	dir := t.TempDir()
	for name, arr := range map[string]*tensor.Array{"a": a, "b": b} {
		var buf bytes.Buffer
		if err := WriteCSV(&buf, arr); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `import numpy as np, sys
a = np.loadtxt(sys.argv[1] + "/a.csv", delimiter=",")
print(a.shape, [float(x).hex() for x in a.ravel()])
print(np.genfromtxt(sys.argv[1] + "/b.csv", dtype=bool).tolist())
`
	out, err := exec.Command(py, "-c", script, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	want := "(3, 2) ['0x1.999999999999ap-4', '0x1.5555555555555p-2', 'nan', '-inf', '0x1.7e43c8800759cp+996', '-0x0.0000000000001p-1022']\n[False, True, False]\n"
	if string(out) != want {
		t.Errorf("numpy read:\n%s\nwant:\n%s", out, want)
	}
}
