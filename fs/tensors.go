package fs

import (
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// tensorsDir is /sessions/<N>/tensors: a directory a kept tensor; creating
// NAME.npy in it uploads a tensor.
func (s *Server) tensorsDir(parent string, sess *engine.Session) *node {
	dir := join(parent, "tensors")
	n := dirNode(parent, "tensors", func(c *conn) ([]*node, error) {
		var ents []*node
		for _, name := range sess.Tensors() {
			if t, ok := sess.Tensor(name); ok {
				ents = append(ents, s.tensorDir(dir, t))
			}
		}
		return ents, nil
	})
	n.lookup = func(c *conn, name string) (*node, error) {
		if t, ok := sess.Tensor(name); ok {
			return s.tensorDir(dir, t), nil
		}
		// NAME.npy, while NAME is uploaded and once it is, is the file
		// it is uploaded through: cp -p and shutil.copy2 set its times
		// and mode (accepted, and ignored), and writing it again uploads
		// anew. It is not listed.
		if base, ok := strings.CutSuffix(name, ".npy"); ok {
			if _, ok := sess.Tensor(base); ok || s.isUploading(sess.ID(), name) {
				return s.uploadFile(dir, sess, name), nil
			}
		}
		return nil, linux.ENOENT
	}
	n.perm = 0755
	n.create = func(c *conn, name string) (*node, handle, error) {
		return s.upload(c, dir, sess, name)
	}
	// Removing a tensor's directory drops the tensor (its chunks go once
	// no graph or reader holds them): rm -r tensors/NAME.
	n.unlink = func(c *conn, name string, isDir bool) error {
		if c.ident != sess.Owner() {
			return linux.EPERM
		}
		if err := sess.Drop(name); err != nil {
			return linux.ENOENT
		}
		return nil
	}
	return n
}

// uploadFile is tensors/NAME.npy for a tensor NAME already made: opened
// for writing, it uploads NAME again.
func (s *Server) uploadFile(dir string, sess *engine.Session, file string) *node {
	return &node{name: file, path: join(dir, file), perm: 0200,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() == p9.ReadOnly {
				return nil, linux.EACCES
			}
			_, h, err := s.upload(c, dir, sess, file)
			return h, err
		}}
}

// tensorDir is /sessions/<N>/tensors/<name>.
func (s *Server) tensorDir(parent string, t *engine.Tensor) *node {
	dir := join(parent, t.Name())
	tt := t.Tiled()
	n := dirNode(parent, t.Name(), func(c *conn) ([]*node, error) {
		ents := []*node{
			textFile(dir, "meta", func() (string, error) { return metaText(t), nil }),
			s.arrayFile(dir, "data", tt, nil),
			s.arrayFile(dir, "npy", tt, codec.NPYHeader(tt.DType, tt.Shape)),
			textTensorFile(dir, t),
			s.arrowFile(dir, tt),
		}
		if hasCSV(tt) {
			ents = append(ents, s.csvFile(dir, tt))
		}
		ents = append(ents, s.chunksDir(dir, tt))
		for _, e := range ents[1:] {
			leased(e, t)
		}
		return ents, nil
	})
	return letRemove(n)
}

// letRemove lets the entries of directory n, and of the directories below
// it, be removed, doing nothing: rm -r removes a directory's files before
// the directory, and a tensor's files stay as every file of the tree does,
// but their removal must pass for the tensor directory's, which drops the
// tensor, to come.
func letRemove(n *node) *node {
	if !n.dir {
		return n
	}
	n.unlink = func(c *conn, name string, isDir bool) error { return nil }
	if list := n.list; list != nil {
		n.list = func(c *conn) ([]*node, error) {
			ents, err := list(c)
			for _, e := range ents {
				letRemove(e)
			}
			return ents, err
		}
	}
	if lookup := n.lookup; lookup != nil {
		n.lookup = func(c *conn, name string) (*node, error) {
			e, err := lookup(c, name)
			if e != nil {
				letRemove(e)
			}
			return e, err
		}
	}
	return n
}

// leased makes every open of n, and of the files below it, hold a lease on
// t's chunks until its clunk: a reader reads the tensor it opened to the
// end, even when a later graph binds the name to another tensor.
func leased(n *node, t *engine.Tensor) *node {
	if open := n.open; open != nil {
		n.open = func(c *conn, mode p9.OpenFlags) (handle, error) {
			l, err := t.Lease()
			if err != nil {
				return nil, linux.ENOENT // replaced, and nobody held it
			}
			h, err := open(c, mode)
			if err != nil {
				l.Release()
				return nil, err
			}
			return &leasedHandle{handle: h, lease: l}, nil
		}
	}
	if list := n.list; list != nil {
		n.list = func(c *conn) ([]*node, error) {
			ents, err := list(c)
			for _, e := range ents {
				leased(e, t)
			}
			return ents, err
		}
	}
	if lookup := n.lookup; lookup != nil {
		n.lookup = func(c *conn, name string) (*node, error) {
			e, err := lookup(c, name)
			if e != nil {
				leased(e, t)
			}
			return e, err
		}
	}
	return n
}

// A leasedHandle releases its lease when closed.
type leasedHandle struct {
	handle
	lease *engine.Lease
}

func (h *leasedHandle) Close() error {
	err := h.handle.Close()
	h.lease.Release()
	return err
}

// arrayFile serves a prefix followed by the tensor's bytes in C order. Its
// size is known without fetching, so stat shows it.
func (s *Server) arrayFile(parent, name string, tt *tensor.TiledTensor, prefix []byte) *node {
	nbytes := uint64(tensor.NumElements(tt.Shape) * tt.DType.Size())
	return &node{name: name, path: join(parent, name), perm: 0444,
		size: func() uint64 { return uint64(len(prefix)) + nbytes },
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			return newStream(c, s.eng.Runner(), tt, prefix), nil
		}}
}

// A stream serves reads of a tensor's bytes without gathering the whole
// tensor: it goes one slab at a time, a slab being the chunks that share
// their index along the first axis, whose bytes are a contiguous range of
// the C-order tensor. Only the slab being read is held; a slab of a single
// chunk is served straight from that chunk.
type stream struct {
	readOnly
	c      *conn
	run    engine.Runner
	tt     *tensor.TiledTensor
	prefix []byte
	ends   []int64 // ends[i]: byte offset (after prefix) where slab i ends
	inner  int     // chunks a slab

	mu   sync.Mutex
	cur  int // slab held in data, -1 for none
	data []byte
	arr  *tensor.Array // the chunk data aliases, kept: its pages may be mapped
}

func newStream(c *conn, run engine.Runner, tt *tensor.TiledTensor, prefix []byte) *stream {
	st := &stream{c: c, run: run, tt: tt, prefix: prefix, cur: -1, inner: 1}
	if len(tt.Shape) == 0 {
		st.ends = []int64{int64(tt.DType.Size())}
		return st
	}
	for _, cs := range tt.Chunks[1:] {
		st.inner *= len(cs)
	}
	row := int64(tensor.NumElements(tt.Shape[1:]) * tt.DType.Size())
	var end int64
	for _, rows := range tt.Chunks[0] {
		end += int64(rows) * row
		st.ends = append(st.ends, end)
	}
	return st
}

func (st *stream) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < int64(len(st.prefix)) {
		n = copy(p, st.prefix[off:])
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for n < len(p) {
		pos := off + int64(n) - int64(len(st.prefix))
		i := sort.Search(len(st.ends), func(i int) bool { return st.ends[i] > pos })
		if i == len(st.ends) {
			return n, io.EOF
		}
		if err := st.load(i); err != nil {
			return n, err
		}
		start := int64(0)
		if i > 0 {
			start = st.ends[i-1]
		}
		n += copy(p[n:], st.data[pos-start:])
	}
	return n, nil
}

// load makes slab i the one held. st.mu must be held.
func (st *stream) load(i int) error {
	if st.cur == i {
		return nil
	}
	keys := st.tt.Keys[i*st.inner : (i+1)*st.inner]
	parts := make([]*tensor.Array, len(keys))
	for k, id := range keys {
		a, err := st.run.Fetch(st.c.ctx, id)
		if err != nil {
			return linux.EIO
		}
		parts[k] = a
	}
	if len(parts) == 1 {
		st.cur, st.data, st.arr = i, parts[0].Data, parts[0]
		return nil
	}
	slab := tensor.TiledTensor{Name: st.tt.Name, DType: st.tt.DType, Keys: keys,
		Shape:  append([]int{st.tt.Chunks[0][i]}, st.tt.Shape[1:]...),
		Chunks: append([][]int{{st.tt.Chunks[0][i]}}, st.tt.Chunks[1:]...)}
	a, err := tensor.Gather(&slab, parts)
	if err != nil {
		return linux.EIO
	}
	st.cur, st.data, st.arr = i, a.Data, a
	return nil
}
