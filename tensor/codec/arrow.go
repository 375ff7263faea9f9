package codec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"marsfs/tensor"
)

// A tensor as Apache Arrow: one column named after the tensor. A 0-d or
// 1-D tensor is a column of its dtype, a row an element; an N-D tensor is a
// column of fixed-size lists, a row an index along the first axis holding
// the rest of the tensor in C order (a 2-D tensor's row is its row). The
// schema's metadata give the shape ("shape": "(4, 6)") and dtype. A
// reader of a large tensor writes it a record batch at a time (ArrowBatch),
// so that it is never gathered whole.

// ArrowType is the Arrow type of a dtype's elements.
func ArrowType(d tensor.DType) arrow.DataType {
	switch d {
	case tensor.Bool:
		return arrow.FixedWidthTypes.Boolean
	case tensor.Int8:
		return arrow.PrimitiveTypes.Int8
	case tensor.Int16:
		return arrow.PrimitiveTypes.Int16
	case tensor.Int32:
		return arrow.PrimitiveTypes.Int32
	case tensor.Int64:
		return arrow.PrimitiveTypes.Int64
	case tensor.Uint8:
		return arrow.PrimitiveTypes.Uint8
	case tensor.Uint16:
		return arrow.PrimitiveTypes.Uint16
	case tensor.Uint32:
		return arrow.PrimitiveTypes.Uint32
	case tensor.Uint64:
		return arrow.PrimitiveTypes.Uint64
	case tensor.Float16:
		return arrow.FixedWidthTypes.Float16
	case tensor.Float32:
		return arrow.PrimitiveTypes.Float32
	}
	return arrow.PrimitiveTypes.Float64
}

// ArrowSchema is the schema of tensor name of the given dtype and shape,
// and the number of elements in a row.
func ArrowSchema(name string, dt tensor.DType, shape []int) (*arrow.Schema, int) {
	meta := arrow.NewMetadata([]string{"shape", "dtype"}, []string{tensor.FormatShape(shape), dt.String()})
	typ, inner := ArrowType(dt), 1
	if len(shape) > 1 {
		inner = tensor.NumElements(shape[1:])
		typ = arrow.FixedSizeListOfNonNullable(int32(inner), typ)
	}
	return arrow.NewSchema([]arrow.Field{{Name: name, Type: typ}}, &meta), inner
}

// ArrowBatch makes the record batch of rows rows of a tensor of dtype dt
// whose schema and row size ArrowSchema gave, from their C-order bytes.
// It shares data, but for booleans (a byte each in marsfs), which Arrow
// packs into bits. The caller releases the batch.
func ArrowBatch(schema *arrow.Schema, inner int, dt tensor.DType, data []byte, rows int) arrow.RecordBatch {
	n := rows * inner
	var values *memory.Buffer
	if dt == tensor.Bool {
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		for i, b := range data[:n] {
			if b != 0 {
				bitutil.SetBit(bits, i)
			}
		}
		values = memory.NewBufferBytes(bits)
	} else {
		values = memory.NewBufferBytes(data)
	}
	var col arrow.ArrayData = array.NewData(ArrowType(dt), n, []*memory.Buffer{nil, values}, nil, 0, 0)
	if _, list := schema.Field(0).Type.(*arrow.FixedSizeListType); list {
		child := col
		col = array.NewData(schema.Field(0).Type, rows, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
		child.Release()
	}
	arr := array.MakeFromData(col)
	col.Release()
	defer arr.Release()
	return array.NewRecordBatch(schema, []arrow.Array{arr}, int64(rows))
}
