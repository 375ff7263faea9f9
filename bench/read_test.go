// Run with
//
//	go test -run NONE -bench . -benchtime 3x ./bench/
//
// BenchmarkRead reads a 1 GiB tensor's data file through the FUSE mount
// and over 9P (unix socket and loopback TCP), beside a plain copy of
// 1 GiB over loopback TCP, which bounds what any of them can do here.

package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/exec/sched"
	"marsfs/fs"
	"marsfs/fs/fusefs"
)

const size = 1 << 30

// tree serves an engine holding a 1 GiB tensor, x, in session 1.
func tree(b *testing.B) (sock, tcp string) {
	b.Helper()
	run := sched.NewLocal(0)
	b.Cleanup(func() { run.Close() })
	eng := engine.New(run)
	srv := fs.NewServer(eng, fs.Config{})
	sock = filepath.Join(b.TempDir(), "m.sock")
	ul, err := fs.Listen(sock)
	if err != nil {
		b.Fatal(err)
	}
	tl, err := fs.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ul)
	go srv.Serve(tl)
	b.Cleanup(func() { srv.Close(); eng.Close() })
	makeGiB(b, sock)
	return sock, tl.Addr().String()
}

// drain reads r to its end through a buffer of n bytes, hiding any
// WriterTo or ReaderFrom.
func drain(b *testing.B, r io.Reader, n int) {
	got, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{r}, make([]byte, n))
	if err != nil || got != size {
		b.Fatalf("read %d bytes: %v", got, err)
	}
}

func BenchmarkRead(b *testing.B) {
	sock, tcp := tree(b)
	for _, tr := range []struct{ name, addr string }{{"9p-unix", sock}, {"9p-tcp", tcp}} {
		b.Run(tr.name, func(b *testing.B) {
			c, err := fs.Dial(tr.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(size)
			for range b.N {
				f, err := c.Open("/sessions/1/tensors/x/data", p9.ReadOnly)
				if err != nil {
					b.Fatal(err)
				}
				drain(b, f, fs.ClientMsize)
				f.Close()
			}
		})
	}
	b.Run("fuse", func(b *testing.B) {
		if _, err := os.Stat("/dev/fuse"); err != nil {
			b.Skip("no /dev/fuse")
		}
		dir := filepath.Join(b.TempDir(), "mnt")
		os.Mkdir(dir, 0755)
		m, err := fusefs.New(dir, "unix:"+sock, fusefs.Options{})
		if err != nil {
			b.Skipf("cannot mount: %v", err)
		}
		defer func() {
			if m.Unmount() != nil {
				syscall.Unmount(dir, syscall.MNT_DETACH)
			}
		}()
		b.SetBytes(size)
		for range b.N {
			f, err := os.Open(filepath.Join(dir, "sessions/1/tensors/x/data"))
			if err != nil {
				b.Fatal(err)
			}
			drain(b, f, 1<<20)
			f.Close()
		}
	})
	b.Run("tcp-raw", func(b *testing.B) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		go func() {
			buf := make([]byte, 4<<20)
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				for sent := 0; sent < size; sent += len(buf) {
					if _, err := c.Write(buf); err != nil {
						break
					}
				}
				c.Close()
			}
		}()
		b.SetBytes(size)
		for range b.N {
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			drain(b, c, 4<<20)
			c.Close()
		}
	})
}

// makeGiB clones session 1 on the server at sock and makes in it x, 1 GiB
// of float64 ones in 8 chunks of 128 MiB, for the read benchmarks.
func makeGiB(b *testing.B, sock string) {
	b.Helper()
	c, err := fs.Dial(sock)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ReadFile("/sessions/clone"); err != nil {
		b.Fatal(err)
	}
	if err := c.WriteFile("/sessions/1/submit", []byte("x = ones(134217728, chunks=16777216)\n")); err != nil {
		b.Fatal(err)
	}
	st, err := c.ReadFile("/sessions/1/graphs/last/wait")
	if err != nil || !strings.HasPrefix(string(st), "SUCCEEDED") {
		b.Fatalf("wait: %s %v", st, err)
	}
}
