package fs

import (
	"bytes"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/tensor/codec"
)

// arrowFile is a tensor's arrow file: an Apache Arrow IPC stream of the
// tensor as codec/arrow.go lays it out. Each record batch is one chunk-row
// (the chunks sharing their index along the first axis), made as it is
// read, so that a large tensor is never gathered whole.
func (s *Server) arrowFile(parent string, t *engine.Tensor) *node {
	return &node{name: "arrow", path: join(parent, "arrow"), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			return newArrowStream(newStream(c, t, t.Tiled(), nil)), nil
		}}
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
	buf  []byte      // a slab's bytes, reused
}

// Close releases the chunks the source holds.
func (a *arrowStream) Close() error { return a.src.Close() }

func newArrowStream(src *stream) *arrowStream {
	schema, inner := codec.ArrowSchema(src.tt.Name, src.tt.DType, src.tt.Shape)
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
	if a.next == a.src.count() {
		a.end = true
		// Close writes the end-of-stream marker (and the schema first
		// if no batch was written).
		if err := a.w.Close(); err != nil {
			return linux.EIO
		}
		return nil
	}
	data, err := a.src.slab(a.next, &a.buf)
	if err != nil {
		return err
	}
	rows := 1
	if len(a.src.tt.Shape) > 0 {
		rows = a.src.tt.Chunks[0][a.next]
	}
	rec := codec.ArrowBatch(a.schema, a.inner, a.src.tt.DType, data, rows)
	defer rec.Release()
	a.next++
	if err := a.w.Write(rec); err != nil {
		return linux.EIO
	}
	return nil
}
