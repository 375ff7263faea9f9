package codec

import (
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"marsfs/tensor"
)

// TestArrowRoundTrip writes tensors of every dtype, 1-D and 2-D, as an
// Arrow IPC stream of two record batches and reads them back with Arrow's
// own reader, element by element.
func TestArrowRoundTrip(t *testing.T) {
	for _, dt := range tensor.DTypes {
		for _, shape := range [][]int{{6}, {6, 5}} {
			a := tensor.NewArray(dt, shape)
			for i := range a.Len() {
				switch dt {
				case tensor.Bool:
					a.Bools()[i] = i%3 == 0
				case tensor.Int32:
					a.Int32s()[i] = int32(i - 7)
				case tensor.Int64:
					a.Int64s()[i] = int64(i) << 40
				case tensor.Float32:
					a.Float32s()[i] = float32(i) / 3
				case tensor.Float64:
					a.Float64s()[i] = float64(i) / 7
				default: // the others: bytes, which Arrow reads as its values
					for j := range dt.Size() {
						a.Data[i*dt.Size()+j] = byte(i*37 + j*11)
					}
				}
			}
			schema, inner := ArrowSchema("x", dt, shape)
			var buf bytes.Buffer
			w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
			row := inner * dt.Size()
			for _, rows := range [][2]int{{0, 4}, {4, 6}} {
				rec := ArrowBatch(schema, inner, dt, a.Data[rows[0]*row:rows[1]*row], rows[1]-rows[0])
				if err := w.Write(rec); err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := ipc.NewReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if md := r.Schema().Metadata(); md.Values()[md.FindKey("dtype")] != dt.String() || md.Values()[md.FindKey("shape")] != tensor.FormatShape(shape) {
				t.Errorf("%v%v: metadata %v", dt, shape, md)
			}
			var got []any
			for r.Next() {
				col := r.RecordBatch().Column(0)
				if l, ok := col.(*array.FixedSizeList); ok {
					col = l.ListValues()
				}
				for i := range col.Len() {
					if h, ok := col.(*array.Float16); ok {
						// The bits: arrow-go's float16 reads half
						// subnormals wrong as float32.
						got = append(got, h.Value(i).Uint16())
						continue
					}
					got = append(got, col.GetOneForMarshal(i))
				}
			}
			r.Release()
			if len(got) != a.Len() {
				t.Fatalf("%v%v: %d values read, want %d", dt, shape, len(got), a.Len())
			}
			for i, v := range got {
				want := any(nil)
				switch dt {
				case tensor.Bool:
					want = a.Bools()[i]
				case tensor.Int32:
					want = a.Int32s()[i]
				case tensor.Int64:
					want = a.Int64s()[i]
				case tensor.Float32:
					want = a.Float32s()[i]
				case tensor.Float64:
					want = a.Float64s()[i]
				case tensor.Int8:
					want = a.Int8s()[i]
				case tensor.Int16:
					want = a.Int16s()[i]
				case tensor.Uint8:
					want = a.Uint8s()[i]
				case tensor.Uint16:
					want = a.Uint16s()[i]
				case tensor.Uint32:
					want = a.Uint32s()[i]
				case tensor.Uint64:
					want = a.Uint64s()[i]
				case tensor.Float16:
					want = uint16(a.Halves()[i])
				}
				if v != want && num(v) != num(want) {
					t.Fatalf("%v%v element %d: %v (%T), want %v (%T)", dt, shape, i, v, v, want, want)
				}
			}
		}
	}
}

// num is a numeric value as float64, for values Arrow marshals in another
// Go type than marsfs holds them (int8 as float64, say); NaN for others.
func num(v any) float64 {
	switch v := v.(type) {
	case int8:
		return float64(v)
	case int16:
		return float64(v)
	case int32:
		return float64(v)
	case int64:
		return float64(v)
	case uint8:
		return float64(v)
	case uint16:
		return float64(v)
	case uint32:
		return float64(v)
	case uint64:
		return float64(v)
	case float32:
		return float64(v)
	case float64:
		return v
	}
	return math.NaN()
}
