package shm

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"marsfs/tensor"
)

// TestArrowIPC writes chunks of every dtype from the store as Arrow IPC and
// reads them back with Arrow's reader.
func TestArrowIPC(t *testing.T) {
	s := openTest(t, 1<<20, -1)
	for i, dt := range []tensor.DType{tensor.Bool, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Float64} {
		id := uint64(i)
		shape := []int{3, 7}
		b, err := s.Create(id, dt, shape)
		if err != nil {
			t.Fatal(err)
		}
		x := &tensor.Array{DType: dt, Shape: shape, Data: b.Data}
		for j := range x.Len() {
			switch dt {
			case tensor.Bool:
				b.Data[j] = byte(j % 3 % 2)
			case tensor.Int32:
				x.Int32s()[j] = int32(j*j - 50)
			case tensor.Int64:
				x.Int64s()[j] = int64(j) << 40
			case tensor.Float32:
				x.Float32s()[j] = float32(j) / 3
			case tensor.Float64:
				x.Float64s()[j] = float64(j) * -1.5
			}
		}
		if err := b.Seal(); err != nil {
			t.Fatal(err)
		}
		v, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		col, err := ArrowArray(v.Array())
		if err != nil {
			t.Fatal(err)
		}
		if dt != tensor.Bool && unsafe.SliceData(col.Data().Buffers()[1].Bytes()) != unsafe.SliceData(v.Data) {
			t.Errorf("%v: Arrow values buffer is a copy", dt)
		}
		col.Release()
		var buf bytes.Buffer
		if err := WriteArrowIPC(&buf, "x", v.Array()); err != nil {
			t.Fatal(err)
		}
		r, err := ipc.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		md := r.Schema().Metadata()
		if d, _ := md.GetValue("dtype"); d != dt.String() {
			t.Errorf("%v: dtype metadata %q", dt, d)
		}
		if sh, _ := md.GetValue("shape"); sh != "3,7" {
			t.Errorf("%v: shape metadata %q", dt, sh)
		}
		if !r.Next() {
			t.Fatalf("%v: no record: %v", dt, r.Err())
		}
		rec := r.RecordBatch()
		if rec.NumRows() != 21 || rec.NumCols() != 1 {
			t.Fatalf("%v: %d rows %d cols", dt, rec.NumRows(), rec.NumCols())
		}
		for j := range 21 {
			var got float64
			switch c := rec.Column(0).(type) {
			case *array.Boolean:
				if c.Value(j) {
					got = 1
				}
			case *array.Int32:
				got = float64(c.Value(j))
			case *array.Int64:
				got = float64(c.Value(j))
			case *array.Float32:
				got = float64(c.Value(j))
			case *array.Float64:
				got = c.Value(j)
			default:
				t.Fatalf("%v: column type %T", dt, c)
			}
			if want := v.Array().Float64At(j); got != want {
				t.Fatalf("%v element %d: %v, want %v", dt, j, got, want)
			}
		}
		r.Release()
		v.Release()
	}
	if _, err := ArrowArray(&tensor.Array{DType: tensor.Int32, Shape: []int{2}, Data: []byte{1}}); err == nil {
		t.Fatal("malformed array accepted")
	}
}
