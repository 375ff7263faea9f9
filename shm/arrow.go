package shm

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"marsfs/tensor"
)

// arrowType is the Arrow type of each dtype's elements.
func arrowType(dt tensor.DType) (arrow.DataType, error) {
	switch dt {
	case tensor.Bool:
		return arrow.FixedWidthTypes.Boolean, nil
	case tensor.Int32:
		return arrow.PrimitiveTypes.Int32, nil
	case tensor.Int64:
		return arrow.PrimitiveTypes.Int64, nil
	case tensor.Float32:
		return arrow.PrimitiveTypes.Float32, nil
	case tensor.Float64:
		return arrow.PrimitiveTypes.Float64, nil
	}
	return nil, fmt.Errorf("shm: no arrow type for dtype %v", dt)
}

// ArrowArray returns a's elements, flattened in C order, as an Arrow array
// without nulls. Numeric data are not copied: the array's values buffer is
// a.Data (64-byte aligned, as Arrow asks, when a is a chunk of a Store), so
// the array is valid as long as a's data are. Bools, one byte each in
// marsfs, are packed into Arrow's bitmap: a copy of one bit an element.
func ArrowArray(a *tensor.Array) (arrow.Array, error) {
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	typ, err := arrowType(a.DType)
	if err != nil {
		return nil, err
	}
	n := a.Len()
	values := a.Data
	if a.DType == tensor.Bool {
		values = make([]byte, bitutil.CeilByte(n)/8)
		for i, b := range a.Data {
			if b != 0 {
				bitutil.SetBit(values, i)
			}
		}
	}
	data := array.NewData(typ, n, []*memory.Buffer{nil, memory.NewBufferBytes(values)}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// WriteArrowIPC writes a as an Arrow IPC stream: one record batch of one
// column, named name, holding a's elements in C order. The schema's metadata
// keep what a flat column loses: "dtype" (NumPy's name) and "shape" (the
// dimensions, comma-separated; empty for a 0-d array).
func WriteArrowIPC(w io.Writer, name string, a *tensor.Array) error {
	col, err := ArrowArray(a)
	if err != nil {
		return err
	}
	defer col.Release()
	dims := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		dims[i] = strconv.Itoa(d)
	}
	md := arrow.NewMetadata([]string{"dtype", "shape"}, []string{a.DType.String(), strings.Join(dims, ",")})
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: col.DataType()}}, &md)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	iw := ipc.NewWriter(w, ipc.WithSchema(schema))
	if err := iw.Write(rec); err != nil {
		iw.Close()
		return fmt.Errorf("shm: arrow ipc: %w", err)
	}
	if err := iw.Close(); err != nil {
		return fmt.Errorf("shm: arrow ipc: %w", err)
	}
	return nil
}
