package fs

import (
	"bytes"
	"io"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// csvFile is the csv file of a 1-D or 2-D tensor: one value a line, or
// one row a line. It is rendered slab by slab as it is read, since a slab
// (see stream) is a run of whole rows.
func (s *Server) csvFile(parent string, t *engine.Tensor) *node {
	return &node{name: "csv", path: join(parent, "csv"), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			return &csvStream{st: newStream(c, t, t.Tiled(), nil)}, nil
		}}
}

// hasCSV reports whether a tensor has a csv file.
func hasCSV(tt *tensor.TiledTensor) bool { return len(tt.Shape) == 1 || len(tt.Shape) == 2 }

// csvStream renders CSV text a slab at a time. It holds the text of one
// slab: reading on from there renders the next ones, and reading back
// before it starts again from the first.
type csvStream struct {
	readOnly
	st *stream

	mu    sync.Mutex
	next  int    // the slab to render after win
	start int64  // offset of win in the text
	win   []byte // the text of slab next-1
	buf   []byte // a slab's bytes, reused
}

// Close releases the chunks the source holds.
func (r *csvStream) Close() error { return r.st.Close() }

func (r *csvStream) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if off < r.start {
		r.next, r.start, r.win = 0, 0, nil
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos < r.start+int64(len(r.win)) {
			n += copy(p[n:], r.win[pos-r.start:])
			continue
		}
		if r.next == r.st.count() {
			return n, io.EOF
		}
		text, err := r.render(r.next)
		if err != nil {
			return n, err
		}
		r.start += int64(len(r.win))
		r.win = text
		r.next++
	}
	return n, nil
}

// render returns the CSV text of slab i.
func (r *csvStream) render(i int) ([]byte, error) {
	st := r.st
	data, err := st.slab(i, &r.buf)
	if err != nil {
		return nil, err
	}
	tt := st.tt
	shape := append([]int{tt.Chunks[0][i]}, tt.Shape[1:]...)
	var b bytes.Buffer
	if err := codec.WriteCSV(&b, &tensor.Array{DType: tt.DType, Shape: shape, Data: data}); err != nil {
		return nil, linux.EIO
	}
	return b.Bytes(), nil
}
