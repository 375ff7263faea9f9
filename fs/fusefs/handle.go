package fusefs

import (
	"context"
	"errors"
	"io"
	"path"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hugelgupf/p9/p9"

	"marsfs/fs"
)

// A handle is one open file of the mount: a fid opened on the server.
type handle struct {
	m       *Mount
	path    string
	mode    p9.OpenFlags
	created bool // made by Create: it cannot be opened again by path

	mu     sync.Mutex
	own    *fs.Client // the connection of its own of a blocking file, or nil
	f      p9.File    // nil once committed by a flush, until the next write
	origin int64      // the file offset of f's offset 0
	dirty  bool       // written to since the open or the last commit
	done   bool       // released
	// cut: a read of the blocking file was interrupted, and its
	// connection closed to end the server's read; the next read opens
	// the file again, on a new connection, at the same origin.
	cut bool
}

var (
	_ gofs.FileReader   = (*handle)(nil)
	_ gofs.FileWriter   = (*handle)(nil)
	_ gofs.FileFlusher  = (*handle)(nil)
	_ gofs.FileReleaser = (*handle)(nil)
	_ gofs.FileFsyncer  = (*handle)(nil)
)

// blocks reports whether reads of the file at p may wait for events (a
// graph's wait and events files, and its plan until the graph starts).
func blocks(p string) bool {
	switch path.Base(p) {
	case "wait", "events", "plan":
		return true
	}
	return false
}

// open walks and opens the handle's path on its connection (h.mu held,
// or the handle not yet shared).
func (h *handle) open() (p9.File, error) {
	c := h.m.c
	if h.own != nil {
		c = h.own
	}
	f, err := c.Walk(h.path)
	if err != nil {
		return nil, err
	}
	if _, _, err := f.Open(h.mode); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// fid returns the open fid, or nil.
func (h *handle) fid() p9.File {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.f
}

// file returns the open fid, opening the path again after a commit: the
// new open starts at file offset at, as if the file began there.
//
// A blocking file whose read was interrupted is opened again on a new
// connection of its own, its origin kept: the reader that reads again
// after EINTR (as Go's os.File does, and a C program whose signal
// handler has SA_RESTART) reads on as if nothing had happened.
func (h *handle) file(at int64) (p9.File, *fs.Client, int64, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return nil, nil, 0, syscall.EBADF
	}
	if h.f != nil {
		return h.f, h.own, h.origin, 0
	}
	if h.cut {
		c, err := fs.DialKey(h.m.addr, h.m.key)
		if err != nil {
			return nil, nil, 0, errno(err)
		}
		h.own = c
		f, err := h.open()
		if err != nil {
			h.own = nil
			c.Close()
			return nil, nil, 0, errno(err)
		}
		h.f, h.cut = f, false
		return f, c, h.origin, 0
	}
	if h.created {
		// An upload is stored at its commit; there is no file left to
		// write more to.
		return nil, nil, 0, syscall.EBADF
	}
	f, err := h.open()
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	h.f, h.origin = f, at
	return f, h.own, at, 0
}

// Read implements gofs.FileReader.
func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	f, own, origin, e := h.file(off)
	if e != 0 {
		return nil, e
	}
	if off -= origin; off < 0 {
		return nil, syscall.EINVAL
	}
	if own == nil {
		n, err := f.ReadAt(dest, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, errno(err)
		}
		return fuse.ReadResultData(dest[:n]), 0
	}
	// A read that may wait: give it up when the reader is interrupted,
	// closing the connection so that the server ends it too. It reads
	// into a buffer of its own, as dest is reused once this returns.
	// The interruption ends this read, not the open file: any signal
	// the reading thread takes interrupts it, the Go runtime's own
	// (SIGURG, SIGCHLD) among them, and the reader may read again.
	type result struct {
		buf []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		buf := make([]byte, len(dest))
		n, err := f.ReadAt(buf, off)
		done <- result{buf[:n], err}
	}()
	select {
	case r := <-done:
		if r.err != nil && !errors.Is(r.err, io.EOF) {
			return nil, errno(r.err)
		}
		return fuse.ReadResultData(r.buf), 0
	case <-ctx.Done():
		h.mu.Lock()
		if h.own == own {
			// The fid goes with its connection.
			h.f, h.own = nil, nil
			h.cut = !h.done
		}
		h.mu.Unlock()
		own.Close()
		return nil, syscall.EINTR
	}
}

// Write implements gofs.FileWriter. The server's refusal of what was
// written (a bad spec, a bad upload) is the write's errno.
func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	f, _, origin, e := h.file(off)
	if e != 0 {
		return 0, e
	}
	if off -= origin; off < 0 {
		return 0, syscall.EINVAL
	}
	h.mu.Lock()
	h.dirty = true
	h.mu.Unlock()
	n, err := f.WriteAt(data, off)
	if err != nil {
		return uint32(n), errno(err)
	}
	return uint32(n), 0
}

// Flush implements gofs.FileFlusher: at a close(2) after writes, the fid
// is clunked, so that what the server does at the clunk (submit, upload)
// is done when close returns.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.dirty || h.f == nil {
		return 0
	}
	f := h.f
	h.f, h.dirty = nil, false
	return errno(f.Close())
}

// Fsync implements gofs.FileFsyncer: there is nothing to write back.
func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno { return 0 }

// Release implements gofs.FileReleaser: the last close clunks the fid.
func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	f, own := h.f, h.own
	h.f, h.own, h.done = nil, nil, true
	h.mu.Unlock()
	var err error
	if f != nil {
		err = f.Close()
	}
	if own != nil {
		own.Close()
	}
	return errno(err)
}
