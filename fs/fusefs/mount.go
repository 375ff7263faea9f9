// Package fusefs mounts a marsfs tree in the local file system with FUSE,
// as a 9P2000.L client of the marsfs server.
//
// Every FUSE operation becomes 9P requests on a path walked from the root
// of the tree: lookups and getattr walk and stat, readdir lists, opens walk
// and open a fid that the file handle keeps. Nothing is cached in the
// kernel: entries and attributes expire at once, and files are opened with
// direct I/O, so that every open of a synthetic file reads a fresh
// snapshot and a size of 0 does not cut its reads short.
//
// # Writes and closes
//
// A write's 9P error is the write's errno, so a spec refused at a write
// fails `echo` in the shell. What marsfs does at the clunk of a fid (submit
// a spec, store an upload) is done at the flush that follows writes, that
// is at the close(2) of the descriptor written to, so that it is done when
// close returns; further writes to the same open file start a new open of
// it on the server. A flush with nothing written does nothing, as a shell
// closes the descriptor of a redirection once before writing to it.
//
// # Blocking reads
//
// A read of a graph's wait, events or plan file can wait for a long time. Such
// files are opened on a connection of their own, which is closed when the
// reader is interrupted (Ctrl-C on `cat wait`): that ends the read on the
// server, and the interrupted read returns EINTR. A read after it opens
// the file again on a new connection: a signal the reader handles and
// reads on after (the Go runtime's own, SIGURG and SIGCHLD) interrupts
// no more than the one read.
package fusefs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"marsfs/fs"
)

// Options tunes a mount. The zero value is usable.
type Options struct {
	// Debug logs every FUSE request.
	Debug bool
	// AllowOther lets users other than the one mounting use the mount
	// (they are then all the mounting user to the server).
	AllowOther bool
	// Key is the cluster key the mount proves to a server beyond
	// loopback (fs.DialKey); nil for none.
	Key []byte
}

// A Mount is a marsfs tree mounted at a directory.
type Mount struct {
	dir  string
	addr string
	key  []byte
	c    *fs.Client
	srv  *fuse.Server
}

// maxIO is the largest read and write FUSE passes in one request.
const maxIO = 1 << 20

// New mounts the tree of the marsfs server at addr (as fs.Dial takes it)
// on directory dir. It mounts with mount(2) when it can (as root), else
// with fusermount3.
func New(dir, addr string, opt Options) (*Mount, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("mount %s: not a directory", dir)
	}
	c, err := fs.DialKey(addr, opt.Key)
	if err != nil {
		return nil, err
	}
	m := &Mount{dir: dir, addr: addr, key: opt.Key, c: c}
	zero := time.Duration(0)
	o := &gofs.Options{
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			FsName:        "marsfs",
			Name:          "marsfs",
			DirectMount:   true,
			MaxWrite:      maxIO,
			MaxReadAhead:  maxIO,
			DisableXAttrs: true,
			DisableSplice: true, // replies are bytes, never file descriptors
			AllowOther:    opt.AllowOther,
			Debug:         opt.Debug,
		},
	}
	srv, err := gofs.Mount(dir, &node{m: m, path: "/"}, o)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	m.srv = srv
	return m, nil
}

// Dir returns the mount point.
func (m *Mount) Dir() string { return m.dir }

// Wait returns when the file system is unmounted.
func (m *Mount) Wait() { m.srv.Wait() }

// Unmount unmounts the tree and closes the connection to the server. When
// the mount is busy (a process has a file or directory of it open) it is
// detached lazily: it leaves the name space at once, and goes when the
// last user does.
func (m *Mount) Unmount() error {
	err := m.srv.Unmount()
	if err != nil {
		if lerr := syscall.Unmount(m.dir, syscall.MNT_DETACH); lerr == nil {
			err = nil
		} else {
			err = errors.Join(err, lerr)
		}
	}
	m.c.Close()
	return err
}
