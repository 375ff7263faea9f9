package fs

import (
	"bytes"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/tensor"
)

// arrowFile is a tensor's arrow file: an Apache Arrow IPC stream of one
// column named after the tensor. A 0-d or 1-D tensor is a column of its
// dtype, a row an element; an N-D tensor is a column of fixed-size lists,
// a row an index along the first axis holding the rest of the tensor in C
// order (a 2-D tensor's row is its row). The schema's metadata gives the
// shape ("shape": "(4, 6)") and dtype. Each record batch is one chunk-row
// (the chunks sharing their index along the first axis), made as it is
// read, so that a large tensor is never gathered whole.
func (s *Server) arrowFile(parent string, tt *tensor.TiledTensor) *node {
	return &node{name: "arrow", path: join(parent, "arrow"), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			return newArrowStream(newStream(c, s.eng.Runner(), tt, nil)), nil
		}}
}

// arrowType is the Arrow type of a dtype's elements.
func arrowType(d tensor.DType) arrow.DataType {
	switch d {
	case tensor.Bool:
		return arrow.FixedWidthTypes.Boolean
	case tensor.Int32:
		return arrow.PrimitiveTypes.Int32
	case tensor.Int64:
		return arrow.PrimitiveTypes.Int64
	case tensor.Float32:
		return arrow.PrimitiveTypes.Float32
	}
	return arrow.PrimitiveTypes.Float64
}

// arrowSchema is the schema of tt's arrow file, and the number of elements
// a row.
func arrowSchema(tt *tensor.TiledTensor) (*arrow.Schema, int) {
	meta := arrow.NewMetadata([]string{"shape", "dtype"}, []string{tensor.FormatShape(tt.Shape), tt.DType.String()})
	typ, inner := arrowType(tt.DType), 1
	if len(tt.Shape) > 1 {
		inner = tensor.NumElements(tt.Shape[1:])
		typ = arrow.FixedSizeListOfNonNullable(int32(inner), typ)
	}
	return arrow.NewSchema([]arrow.Field{{Name: tt.Name, Type: typ}}, &meta), inner
}

// An arrowStream serves reads of an IPC stream written as it is read. It
// holds the bytes of the record batch being read; a read before them
// starts the stream again.
type arrowStream struct {
	readOnly
	src    *stream
	schema *arrow.Schema
	inner  int

	mu   sync.Mutex
	out  bytes.Buffer // the stream's bytes from base on
	base int64
	w    *ipc.Writer // nil before the first write and after the end
	next int         // the next chunk-row to write
	end  bool        // the end-of-stream marker is written
}

func newArrowStream(src *stream) *arrowStream {
	schema, inner := arrowSchema(src.tt)
	return &arrowStream{src: src, schema: schema, inner: inner}
}

func (a *arrowStream) ReadAt(p []byte, off int64) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if off < a.base {
		a.restart()
	}
	for off >= a.base+int64(a.out.Len()) {
		if a.end {
			return 0, io.EOF
		}
		// Keep only what is left to read of the bytes made so far.
		if skip := off - a.base; skip > 0 {
			a.out.Next(int(skip))
			a.base = off
		}
		if err := a.more(); err != nil {
			a.restart()
			return 0, err
		}
	}
	return copy(p, a.out.Bytes()[off-a.base:]), nil
}

// restart forgets the stream made so far.
func (a *arrowStream) restart() {
	a.out.Reset()
	a.base, a.next, a.end, a.w = 0, 0, false, nil
}

// more appends the next record batch, or the end of the stream.
func (a *arrowStream) more() error {
	if a.w == nil {
		a.w = ipc.NewWriter(&a.out, ipc.WithSchema(a.schema))
	}
	if a.next == len(a.src.ends) {
		a.end = true
		// Close writes the end-of-stream marker (and the schema first
		// if no batch was written).
		if err := a.w.Close(); err != nil {
			return linux.EIO
		}
		return nil
	}
	a.src.mu.Lock()
	err := a.src.load(a.next)
	data := a.src.data
	a.src.mu.Unlock()
	if err != nil {
		return err
	}
	rows := 1
	if len(a.src.tt.Shape) > 0 {
		rows = a.src.tt.Chunks[0][a.next]
	}
	rec := a.batch(data, rows)
	defer rec.Release()
	a.next++
	if err := a.w.Write(rec); err != nil {
		return linux.EIO
	}
	return nil
}

// batch makes the record batch of rows rows from their C-order bytes,
// sharing them but for booleans, which Arrow packs into bits.
func (a *arrowStream) batch(data []byte, rows int) arrow.RecordBatch {
	n := rows * a.inner
	typ := arrowType(a.src.tt.DType)
	var values *memory.Buffer
	if a.src.tt.DType == tensor.Bool {
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
	var col arrow.ArrayData = array.NewData(typ, n, []*memory.Buffer{nil, values}, nil, 0, 0)
	if len(a.src.tt.Shape) > 1 {
		child := col
		col = array.NewData(a.schema.Field(0).Type, rows, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
		child.Release()
	}
	arr := array.MakeFromData(col)
	col.Release()
	defer arr.Release()
	return array.NewRecordBatch(a.schema, []arrow.Array{arr}, int64(rows))
}
