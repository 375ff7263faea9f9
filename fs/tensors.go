package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
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
		names := sess.Tensors()
		for _, name := range names {
			if t, ok := sess.Tensor(name); ok {
				ents = append(ents, s.tensorDir(dir, t))
			}
		}
		for name, g := range sess.Pending() {
			if !slices.Contains(names, name) {
				ents = append(ents, s.pendingTensorDir(dir, sess, name, g))
			}
		}
		slices.SortFunc(ents, func(a, b *node) int { return strings.Compare(a.name, b.name) })
		return ents, nil
	})
	n.lookup = func(c *conn, name string) (*node, error) {
		if t, ok := sess.Tensor(name); ok {
			return s.tensorDir(dir, t), nil
		}
		if g, ok := sess.Pending()[name]; ok {
			return s.pendingTensorDir(dir, sess, name, g), nil
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
			if errors.Is(err, engine.ErrNoTensor) {
				return linux.ENOENT
			}
			sess.SetError(err.Error())
			return refusal(err, linux.EIO)
		}
		return nil
	}
	return n
}

// pendingTensorDir is tensors/NAME for an output of graph g, which has not
// ended: its meta says so, and it is the tensor once g succeeds (or gone,
// if g fails), so that a script may look for NAME right after its submit.
// The node itself becomes the tensor's directory once the tensor is kept:
// a FUSE kernel, or a 9P client holding a fid, keeps the directory it
// walked to while the graph ran and looks up data or text in it after.
func (s *Server) pendingTensorDir(parent string, sess *engine.Session, name string, g *engine.Graph) *node {
	dir := join(parent, name)
	n := dirNode(parent, name, func(c *conn) ([]*node, error) {
		if t, ok := sess.Tensor(name); ok {
			return s.tensorDir(parent, t).list(c)
		}
		return []*node{textFile(dir, "meta", func() (string, error) {
			if t, ok := sess.Tensor(name); ok {
				return metaText(t), nil
			}
			return fmt.Sprintf("pending graph %d\n", g.ID()), nil
		})}, nil
	})
	n.unlink = func(c *conn, name string, isDir bool) error { return nil }
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
			s.arrayFile(dir, "data", t, nil),
			s.arrayFile(dir, "npy", t, codec.NPYHeader(tt.DType, tt.Shape)),
			textTensorFile(dir, t),
			s.arrowFile(dir, t),
		}
		if hasCSV(tt) {
			ents = append(ents, s.csvFile(dir, t))
		}
		ents = append(ents, s.chunksDir(dir, t))
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
			// Chunks lost with their workers are made again first, from
			// the tensor's lineage: the open waits for them.
			if err := t.Restore(c.ctx); err != nil {
				l.Release()
				return nil, linux.EIO
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
func (s *Server) arrayFile(parent, name string, t *engine.Tensor, prefix []byte) *node {
	tt := t.Tiled()
	nbytes := uint64(tensor.NumElements(tt.Shape) * tt.DType.Size())
	return &node{name: name, path: join(parent, name), perm: 0444,
		size: func() uint64 { return uint64(len(prefix)) + nbytes },
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			return newStream(c, t, tt, prefix), nil
		}}
}

// A chunkSource gives a tensor's chunks by their index in its chunk grid
// (C order), each with release as engine.Runner.Fetch has it: an
// engine.Tensor.
type chunkSource interface {
	Chunk(ctx context.Context, i int) (*tensor.Array, func(), error)
}

// A stream serves reads of a tensor's bytes without gathering them: it
// goes one slab at a time (tensor.Slabs: the chunks that share their index
// along the first axis, whose bytes are a contiguous range of the C-order
// tensor). A read copies from the slab's chunks themselves, each run of
// bytes contiguous in both, so a reader holds no copy of a slab: only the
// chunks of the slab it reads, fetched as reads reach them (mapped from
// the workers' shared memory on this host) and released when it moves on
// or closes.
type stream struct {
	c      *conn
	src    chunkSource
	tt     *tensor.TiledTensor
	prefix []byte
	slabs  *tensor.Slabs

	mu       sync.Mutex
	cur      int             // slab whose chunks are held, -1 for none
	parts    []*tensor.Array // its chunks, nil until a read reaches them
	releases []func()
}

func newStream(c *conn, src chunkSource, tt *tensor.TiledTensor, prefix []byte) *stream {
	return &stream{c: c, src: src, tt: tt, prefix: prefix, cur: -1, slabs: tensor.NewSlabs(tt.Shape, tt.Chunks)}
}

// count is the number of slabs.
func (st *stream) count() int { return len(st.slabs.Ends) }

func (st *stream) WriteAt(p []byte, off int64) (int, error) { return 0, linux.EBADF }

// Close releases the chunks held.
func (st *stream) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.drop()
	return nil
}

func (st *stream) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < int64(len(st.prefix)) {
		n = copy(p, st.prefix[off:])
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	size := int64(st.tt.DType.Size())
	for n < len(p) {
		pos := off + int64(n) - int64(len(st.prefix))
		e := int(pos / size)
		i := st.slabs.Find(e)
		if i == st.count() {
			return n, io.EOF
		}
		if st.cur != i {
			st.drop()
			st.cur, st.parts = i, make([]*tensor.Array, st.slabs.Inner)
		}
		part, at, run := st.slabs.Locate(i, e-st.slabs.Start(i))
		if st.parts[part] == nil {
			a, release, err := st.src.Chunk(st.c.ctx, i*st.slabs.Inner+part)
			if err != nil {
				return n, linux.EIO
			}
			st.parts[part] = a
			st.releases = append(st.releases, release)
		}
		from := int64(at)*size + pos%size
		n += copy(p[n:], st.parts[part].Data[from:int64(at+run)*size])
	}
	return n, nil
}

// slab returns the C-order bytes of slab i: its chunk's own when it has
// one (held until the stream moves on or closes), else copied into buf,
// grown as needed, for a caller that renders whole slabs (CSV, Arrow).
func (st *stream) slab(i int, buf *[]byte) ([]byte, error) {
	size := int64(st.tt.DType.Size())
	start := int64(st.slabs.Start(i)) * size
	n := int64(st.slabs.Ends[i])*size - start
	if st.slabs.Inner == 1 {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.cur != i {
			st.drop()
			st.cur, st.parts = i, make([]*tensor.Array, 1)
		}
		if st.parts[0] == nil {
			a, release, err := st.src.Chunk(st.c.ctx, i)
			if err != nil {
				return nil, linux.EIO
			}
			st.parts[0] = a
			st.releases = append(st.releases, release)
		}
		return st.parts[0].Data, nil
	}
	if int64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := st.ReadAt(b, int64(len(st.prefix))+start); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

// drop releases the chunks of the slab held. st.mu must be held.
func (st *stream) drop() {
	for _, r := range st.releases {
		r()
	}
	st.cur, st.parts, st.releases = -1, nil, nil
}
