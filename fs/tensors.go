package fs

import (
	"bytes"
	"io"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec"
	"marsfs/tensor"
)

// tensorsDir is /sessions/<N>/tensors: a directory a kept tensor; creating
// NAME.npy in it uploads a tensor.
func (s *Server) tensorsDir(parent string, sess *exec.Session) *node {
	dir := join(parent, "tensors")
	n := dirNode(parent, "tensors", func(c *conn) ([]*node, error) {
		var ents []*node
		for _, name := range sess.Tensors() {
			if t, ok := sess.Tensor(name); ok {
				ents = append(ents, tensorDir(dir, t))
			}
		}
		return ents, nil
	})
	n.lookup = func(c *conn, name string) (*node, error) {
		t, ok := sess.Tensor(name)
		if !ok {
			return nil, linux.ENOENT
		}
		return tensorDir(dir, t), nil
	}
	n.perm = 0755
	n.create = func(c *conn, name string) (*node, handle, error) {
		return s.upload(c, dir, sess, name)
	}
	return n
}

// tensorDir is /sessions/<N>/tensors/<name>. Its files fetch the tensor at
// open; reads then serve that copy.
func tensorDir(parent string, t *exec.Tensor) *node {
	dir := join(parent, t.Name())
	tt := t.Tiled()
	nbytes := uint64(t.NBytes())
	return dirNode(parent, t.Name(), func(c *conn) ([]*node, error) {
		header := tensor.NPYHeader(tt.DType, tt.Shape)
		return []*node{
			textFile(dir, "meta", func() (string, error) { return t.Meta(), nil }),
			arrayFile(dir, "data", t, nil, nbytes),
			arrayFile(dir, "npy", t, header, nbytes),
		}, nil
	})
}

// arrayFile serves a prefix followed by the tensor's bytes. Its size is
// known without fetching, so stat shows it.
func arrayFile(parent, name string, t *exec.Tensor, prefix []byte, nbytes uint64) *node {
	return &node{name: name, path: join(parent, name), perm: 0444,
		size: func() uint64 { return uint64(len(prefix)) + nbytes },
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			a, err := t.Fetch(c.ctx)
			if err != nil {
				return nil, linux.EIO
			}
			return &concat{parts: [][]byte{prefix, a.Data}}, nil
		}}
}

// concat reads parts one after the other, without copying them together.
type concat struct {
	readOnly
	parts [][]byte
}

func (r *concat) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for _, part := range r.parts {
		if n == len(p) {
			break
		}
		if off >= int64(len(part)) {
			off -= int64(len(part))
			continue
		}
		k := copy(p[n:], part[off:])
		n += k
		off = 0
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// upload returns the file made by creating NAME.npy in a session's tensors
// directory. The .npy stream written to it is decoded as it arrives, so
// a bad header fails the write that carries it; at the clunk the tensor is
// stored under NAME. What goes wrong is recorded in the session's error
// file, and then no tensor is made.
func (s *Server) upload(c *conn, dir string, sess *exec.Session, file string) (*node, handle, error) {
	if c.ident != sess.Owner() {
		return nil, nil, linux.EPERM
	}
	name, ok := bytes.CutSuffix([]byte(file), []byte(".npy"))
	if !ok || len(name) == 0 {
		sess.SetError("create " + file + ": only NAME.npy can be created in tensors/, to upload tensor NAME")
		return nil, nil, linux.EINVAL
	}
	pr, pw := io.Pipe()
	u := &uploader{c: c, sess: sess, name: string(name), pw: pw, done: make(chan struct{})}
	go u.decode(pr, s.cfg.MaxUpload)
	n := &node{name: file, path: join(dir, file), perm: 0200}
	return n, u, nil
}

type uploader struct {
	c    *conn
	sess *exec.Session
	name string
	pw   *io.PipeWriter

	mu     sync.Mutex
	off    int64 // the next offset expected: uploads are streams
	failed bool

	done chan struct{} // closed when decode has returned
	arr  *tensor.Array
	err  error
}

// decode reads the stream from pr; its error, if any, also fails the
// writes still to come.
func (u *uploader) decode(pr *io.PipeReader, limit int64) {
	defer close(u.done)
	defer func() {
		if r := recover(); r != nil {
			u.err = panicError{r}
			pr.CloseWithError(u.err)
		}
	}()
	// ReadNPY reads to the end of the stream, and refuses data past the
	// end the header gives.
	u.arr, u.err = tensor.ReadNPY(pr, limit)
	if u.err != nil {
		pr.CloseWithError(u.err)
	}
}

func (u *uploader) ReadAt(p []byte, off int64) (int, error) { return 0, linux.EBADF }

func (u *uploader) WriteAt(p []byte, off int64) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.failed {
		return 0, linux.EINVAL
	}
	if off != u.off {
		u.fail("upload " + u.name + ": writes must follow each other (a .npy is a stream)")
		return 0, linux.EINVAL
	}
	n, err := u.pw.Write(p)
	u.off += int64(n)
	if err != nil {
		u.fail("upload " + u.name + ": " + err.Error())
		return n, linux.EINVAL
	}
	return n, nil
}

// fail records msg and refuses the rest of the upload. u.mu must be held.
func (u *uploader) fail(msg string) {
	u.failed = true
	u.sess.SetError(msg)
	u.pw.CloseWithError(errAbandoned)
}

func (u *uploader) Close() error {
	u.mu.Lock()
	failed := u.failed
	u.pw.Close()
	u.mu.Unlock()
	<-u.done
	if failed {
		return nil
	}
	if u.err != nil {
		u.sess.SetError("upload " + u.name + ": " + u.err.Error())
		return u.err
	}
	if err := u.sess.Upload(u.c.ctx, u.name, u.arr); err != nil {
		u.sess.SetError("upload " + u.name + ": " + err.Error())
		return err
	}
	return nil
}
