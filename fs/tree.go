package fs

import (
	"bytes"
	"hash/fnv"
	"io"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// A node is one file or directory of the tree, bound to the objects its path
// names (a session, a graph, a tensor). Nodes are made afresh at every walk
// step, so a path always reaches the current state of what it names; the
// tree itself is the set of functions that make them (root, sessionDir, ...),
// each a table of entries in the manner of a Plan 9 device.
type node struct {
	name  string
	path  string // canonical path; the QID is a hash of it
	dir   bool
	perm  p9.FileMode // permission bits
	owner string      // identity owning the node ("" for the server)
	size  func() uint64

	// Directories: list returns the entries in listing order; lookup, if
	// set, finds one by name faster than list; create makes a new file.
	list   func(c *conn) ([]*node, error)
	lookup func(c *conn, name string) (*node, error)
	create func(c *conn, name string) (*node, handle, error)
	// unlink, if set, removes the entry called name (a directory when dir).
	unlink func(c *conn, name string, dir bool) error

	// home, when set, names the scheduler a session directory lives on:
	// a walk into it goes there (see peers.go).
	home string

	// Files: open returns a handle for one open fid.
	open func(c *conn, mode p9.OpenFlags) (handle, error)
}

// A handle is one open file: what reads, writes and the final clunk act on.
// Its methods may be called concurrently.
type handle interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	// Close is called at the clunk. Its error cannot reach the client
	// (9P's clunk cannot fail); handles record it where it can be read.
	Close() error
}

func (n *node) qid() p9.QID {
	h := fnv.New64a()
	io.WriteString(h, n.path)
	q := p9.QID{Path: h.Sum64()}
	if n.dir {
		q.Type = p9.TypeDir
	}
	return q
}

// walk returns the entry called name of directory n.
func (n *node) walk(c *conn, name string) (*node, error) {
	if !n.dir {
		return nil, linux.ENOTDIR
	}
	if n.lookup != nil {
		return n.lookup(c, name)
	}
	ents, err := n.list(c)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.name == name {
			return e, nil
		}
	}
	return nil, linux.ENOENT
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// dirNode returns a directory whose entries list makes.
func dirNode(parent, name string, list func(c *conn) ([]*node, error)) *node {
	return &node{name: name, path: join(parent, name), dir: true, perm: 0555, list: list}
}

// textFile returns a read-only file whose content render makes at every
// open: each open reads one snapshot, so `cat` twice shows fresh content.
func textFile(parent, name string, render func() (string, error)) *node {
	return &node{name: name, path: join(parent, name), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			s, err := render()
			if err != nil {
				return nil, err
			}
			return &snapshot{r: bytes.NewReader([]byte(s))}, nil
		}}
}

// snapshot serves reads of content rendered at open.
type snapshot struct {
	readOnly
	r       io.ReaderAt
	keep    any    // what r's bytes need alive: a chunk mapped from a worker's shared memory
	release func() // gives keep back at the clunk; nil for none
}

func (s *snapshot) ReadAt(p []byte, off int64) (int, error) { return s.r.ReadAt(p, off) }

func (s *snapshot) Close() error {
	if s.release != nil {
		s.release()
	}
	return nil
}

// readOnly refuses writes and does nothing at the clunk.
type readOnly struct{}

func (readOnly) WriteAt(p []byte, off int64) (int, error) { return 0, linux.EBADF }
func (readOnly) Close() error                             { return nil }

// ctlFile returns a control file: reading shows render's text, and every
// line written is a message for ctl. A refused message fails its write
// with EINVAL; ctl records the message text where the client can read it.
func ctlFile(parent, name string, render func() (string, error), ctl func(msg string) error) *node {
	return &node{name: name, path: join(parent, name), perm: 0644,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			h := &ctlHandle{ctl: ctl}
			if mode.Mode() != p9.WriteOnly {
				s, err := render()
				if err != nil {
					return nil, err
				}
				h.r = bytes.NewReader([]byte(s))
			}
			return h, nil
		}}
}

type ctlHandle struct {
	r   *bytes.Reader
	ctl func(msg string) error
}

func (h *ctlHandle) ReadAt(p []byte, off int64) (int, error) {
	if h.r == nil {
		return 0, linux.EBADF
	}
	return h.r.ReadAt(p, off)
}

func (h *ctlHandle) WriteAt(p []byte, off int64) (int, error) {
	for _, line := range bytes.Split(p, []byte("\n")) {
		msg := string(bytes.TrimSpace(line))
		if msg == "" {
			continue
		}
		if err := h.ctl(msg); err != nil {
			return 0, refusal(err, linux.EINVAL)
		}
	}
	return len(p), nil
}

func (h *ctlHandle) Close() error { return nil }

// blockingFile returns a read-only file whose first read waits for ready
// (until then the reader is blocked), then serves render's text. The wait
// ends early, with EINTR, when the connection closes or the client flushes.
func blockingFile(parent, name string, ready <-chan struct{}, render func() (string, error)) *node {
	return &node{name: name, path: join(parent, name), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			return &blocking{c: c, ready: ready, render: render}, nil
		}}
}

type blocking struct {
	readOnly
	c      *conn
	ready  <-chan struct{}
	render func() (string, error)
	once   sync.Once // renders text at the first read after ready
	text   []byte
	err    error
}

func (b *blocking) ReadAt(p []byte, off int64) (int, error) {
	select {
	case <-b.ready:
	case <-b.c.flushes():
		return 0, linux.EINTR
	case <-b.c.ctx.Done():
		return 0, linux.EINTR
	}
	b.once.Do(func() {
		s, err := b.render()
		b.text, b.err = []byte(s), err
	})
	if b.err != nil {
		return 0, b.err
	}
	return bytes.NewReader(b.text).ReadAt(p, off)
}
