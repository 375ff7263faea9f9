package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hugelgupf/p9/linux"

	"marsfs/exec/engine"
	"marsfs/tensor"
	"marsfs/tensor/codec"
	"marsfs/tensor/spec"
)

// upload returns the file made by creating NAME.npy in a session's tensors
// directory. A name that cannot name a tensor is refused here, at the
// create. The .npy stream written to the file is decoded as it arrives:
// its header fixes the tensor's shape, dtype and chunks, and each chunk
// goes on to a worker as soon as its bytes are in, so the server holds a
// chunk or two of it whatever its size. At the clunk the tensor is named;
// a bad stream, or one abandoned before its end, frees every chunk put.
// What goes wrong is recorded in the session's error file, and no tensor
// is made.
func (s *Server) upload(c *conn, dir string, sess *engine.Session, file string) (*node, handle, error) {
	if c.ident != sess.Owner() {
		return nil, nil, linux.EPERM
	}
	name, ok := bytes.CutSuffix([]byte(file), []byte(".npy"))
	if !ok || len(name) == 0 {
		sess.SetError("create " + file + ": only NAME.npy can be created in tensors/, to upload tensor NAME")
		return nil, nil, linux.EINVAL
	}
	if err := engine.CheckName(string(name)); err != nil {
		sess.SetError("create " + file + ": " + err.Error())
		return nil, nil, linux.EINVAL
	}
	pr, pw := io.Pipe()
	u := &uploader{c: c, sess: sess, name: string(name), pw: pw, done: make(chan struct{})}
	key := uploadKey{sess.ID(), file}
	v, _ := s.uploading.LoadOrStore(key, new(atomic.Int32))
	v.(*atomic.Int32).Add(1)
	u.ended = func() { v.(*atomic.Int32).Add(-1) }
	go u.decode(pr, s.cfg.MaxUpload)
	n := &node{name: file, path: join(dir, file), perm: 0200}
	return n, u, nil
}

// uploadKey names an upload under way.
type uploadKey struct {
	session int
	file    string
}

// isUploading reports whether file is being uploaded in session sess.
func (s *Server) isUploading(sess int, file string) bool {
	v, ok := s.uploading.Load(uploadKey{sess, file})
	return ok && v.(*atomic.Int32).Load() > 0
}

type uploader struct {
	c     *conn
	sess  *engine.Session
	name  string
	pw    *io.PipeWriter
	ended func() // the upload is no longer under way

	mu     sync.Mutex
	off    int64 // the next offset expected: uploads are streams
	failed bool

	done chan struct{} // closed when decode has returned
	up   *engine.Upload
	err  error
}

// decode reads the stream from pr; its error, if any, also fails the
// writes still to come.
func (u *uploader) decode(pr *io.PipeReader, limit int64) {
	defer close(u.done)
	defer func() {
		if r := recover(); r != nil {
			u.err = panicError{r}
		}
		if u.err != nil {
			pr.CloseWithError(u.err)
			if u.up != nil {
				u.up.Abort()
			}
		}
	}()
	u.err = u.stream(u.c.ctx, pr, limit)
}

// stream reads a .npy stream from r and puts its chunks as they come.
func (u *uploader) stream(ctx context.Context, r io.Reader, limit int64) error {
	l, err := codec.ReadNPYHeader(r)
	if err != nil {
		return err
	}
	if size := l.DataSize(); limit > 0 && size > limit {
		return fmt.Errorf("npy: data of %d bytes exceeds the limit of %d", size, limit)
	}
	chunks := uploadChunks(l)
	up, err := u.sess.BeginUpload(u.name, l.DType, l.Shape, chunks)
	if err != nil {
		return err
	}
	u.up = up
	s := newChunkSender(ctx, up)
	defer s.stop()
	grid := tensor.GridShape(chunks)
	var raw, tmp []byte // reused: fresh pages are slow to touch
	var done int64
	for i := range tensor.NumElements(grid) {
		k := i
		if l.Fortran {
			k = fortranIndex(i, grid)
		}
		shape := tensor.ChunkShape(chunks, grid, k)
		a := s.buffer(l.DType, shape)
		n := tensor.NumElements(shape)
		if !l.Fortran && !l.Big && l.Kind != 'b' {
			// Written as held: read straight into the chunk.
			if err := readData(r, a.Data, done, l.DataSize()); err != nil {
				return err
			}
		} else {
			raw = grow(raw, n*l.Size)
			if err := readData(r, raw, done, l.DataSize()); err != nil {
				return err
			}
			if l.Fortran {
				tmp = grow(tmp, len(a.Data))
				l.Convert(tmp, raw)
				codec.FortranToC(a, tmp)
			} else {
				l.Convert(a.Data, raw)
			}
		}
		done += int64(n * l.Size)
		if err := s.send(k, a); err != nil {
			return err
		}
	}
	// The stream must end where the data end.
	var one [1]byte
	if n, _ := io.ReadFull(r, one[:]); n > 0 {
		extra, _ := io.Copy(io.Discard, r)
		return fmt.Errorf("npy: data is %d bytes, header says %d", l.DataSize()+1+extra, l.DataSize())
	}
	return s.wait()
}

// readData fills p from r, the data having done bytes of total read.
func readData(r io.Reader, p []byte, done, total int64) error {
	n, err := io.ReadFull(r, p)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("npy: data is %d bytes, header says %d", done+int64(n), total)
	}
	if err != nil {
		return fmt.Errorf("npy: reading data: %w", err)
	}
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// uploadChunks is the chunking of an uploaded tensor: the default one,
// whose chunks each hold a contiguous run of a C-order stream (its leading
// axes cut in ones, one axis cut in pieces, the axes after it whole), so
// that a chunk can go on as soon as its bytes are in. For a Fortran-order
// stream the same holds with the axes taken the other way round.
func uploadChunks(l *codec.NPYLayout) [][]int {
	if !l.Fortran {
		return spec.DefaultChunks(l.Shape, l.DType)
	}
	rev := make([]int, len(l.Shape))
	for i, s := range l.Shape {
		rev[len(rev)-1-i] = s
	}
	c := spec.DefaultChunks(rev, l.DType)
	out := make([][]int, len(c))
	for i := range c {
		out[len(c)-1-i] = c[i]
	}
	return out
}

// fortranIndex is the C-order grid index of the i-th chunk in Fortran
// order (the first axis fastest).
func fortranIndex(i int, grid []int) int {
	k, stride := 0, 1
	idx := make([]int, len(grid))
	for ax := range grid {
		idx[ax] = i % grid[ax]
		i /= grid[ax]
	}
	for ax := len(grid) - 1; ax >= 0; ax-- {
		k += idx[ax] * stride
		stride *= grid[ax]
	}
	return k
}

// A chunkSender puts an upload's chunks from a goroutine of its own, so
// that the next chunk is read while one is on its way, and hands their
// arrays back for reuse: two in all.
type chunkSender struct {
	up   *engine.Upload
	work chan sent
	free chan *tensor.Array
	errc chan error
	err  error
	n    int // arrays made
}

type sent struct {
	k int
	a *tensor.Array
}

func newChunkSender(ctx context.Context, up *engine.Upload) *chunkSender {
	work := make(chan sent, 1)
	s := &chunkSender{up: up, work: work, free: make(chan *tensor.Array, 2), errc: make(chan error, 1)}
	go func() {
		var err error
		for c := range work {
			if err == nil {
				err = up.Put(ctx, c.k, c.a)
			}
			s.free <- c.a
		}
		s.errc <- err
	}()
	return s
}

// buffer returns an array of dtype dt and the given shape to fill: a spare
// one, or the one the sender returns next.
func (s *chunkSender) buffer(dt tensor.DType, shape []int) *tensor.Array {
	var a *tensor.Array
	if s.n < 2 {
		s.n++
	} else {
		a = <-s.free
	}
	need := tensor.NumElements(shape) * dt.Size()
	if a == nil || cap(a.Data) < need {
		a = &tensor.Array{Data: make([]byte, need)}
	}
	a.DType, a.Shape, a.Data = dt, append(a.Shape[:0], shape...), a.Data[:need]
	return a
}

// send queues chunk k; it fails once a put has failed.
func (s *chunkSender) send(k int, a *tensor.Array) error {
	select {
	case err := <-s.errc:
		s.err = err
		s.errc <- err
	default:
	}
	if s.err != nil {
		return s.err
	}
	s.work <- sent{k, a}
	return nil
}

// wait waits for the puts queued and returns the first error.
func (s *chunkSender) wait() error {
	if s.work != nil {
		close(s.work)
		s.work = nil
		s.err = <-s.errc
		s.errc <- s.err
	}
	return s.err
}

// stop ends the sender, whatever happened.
func (s *chunkSender) stop() { s.wait() }

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

// Close ends the stream: with all of it in, the tensor is named.
func (u *uploader) Close() error {
	u.mu.Lock()
	failed := u.failed
	u.pw.Close()
	u.mu.Unlock()
	<-u.done
	defer u.ended()
	if failed {
		return linux.EINVAL // refused at a write, which said why
	}
	if u.err != nil {
		u.sess.SetError("upload " + u.name + ": " + strings.TrimPrefix(u.err.Error(), "upload "+u.name+": "))
		return linux.EINVAL
	}
	if err := u.up.Commit(); err != nil {
		u.sess.SetError(err.Error())
		return refusal(err, linux.EIO)
	}
	return nil
}

var errAbandoned = errors.New("upload abandoned")
