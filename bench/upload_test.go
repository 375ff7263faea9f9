package main

// BenchmarkUpload uploads a 1 GiB .npy through the FUSE mount and over 9P
// (unix socket and loopback TCP), the way `cp x.npy tensors/` and
// `marsfs write` do; run it beside BenchmarkRead:
//
//	go test -run NONE -bench 'Read|Upload' -benchtime 3x ./bench/

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"marsfs/fs"
	"marsfs/fs/fusefs"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// npyStream is an io.Reader of a .npy file of n float64 ones, made as it
// is read, so that the benchmark holds no copy of it.
type npyStream struct {
	head []byte
	left int64
	one  [8 << 10]byte
}

func newNPYStream(n int) *npyStream {
	s := &npyStream{head: codec.NPYHeader(tensor.Float64, []int{n}), left: int64(n) * 8}
	for i := 0; i < len(s.one); i += 8 {
		s.one[i+6], s.one[i+7] = 0xf0, 0x3f // 1.0
	}
	return s
}

func (s *npyStream) Read(p []byte) (int, error) {
	if len(s.head) > 0 {
		n := copy(p, s.head)
		s.head = s.head[n:]
		return n, nil
	}
	if s.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && s.left > 0 {
		k := copy(p[n:min(len(p), n+int(min(s.left, int64(len(s.one)))))], s.one[:])
		n += k
		s.left -= int64(k)
	}
	return n, nil
}

func BenchmarkUpload(b *testing.B) {
	sock, tcp := tree(b)
	const n = size / 8
	// The first uploads touch the pages the next ones reuse (the
	// in-process worker keeps chunks in its heap): fresh pages are slow
	// to touch here.
	c, err := fs.Dial(sock)
	if err != nil {
		b.Fatal(err)
	}
	for range 3 {
		upload(b, c, n)
	}
	c.Close()
	for _, tr := range []struct{ name, addr string }{{"9p-unix", sock}, {"9p-tcp", tcp}} {
		b.Run(tr.name, func(b *testing.B) {
			c, err := fs.Dial(tr.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(size)
			for range b.N {
				upload(b, c, n)
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
			f, err := os.Create(filepath.Join(dir, "sessions/1/tensors/u.npy"))
			if err != nil {
				b.Fatal(err)
			}
			// cp writes 128 KiB at a time.
			if _, err := io.CopyBuffer(struct{ io.Writer }{f}, newNPYStream(n), make([]byte, 128<<10)); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// upload uploads u, n float64 ones, as marsfs write does.
func upload(b *testing.B, c *fs.Client, n int) {
	f, err := c.Create("/sessions/1/tensors", "u.npy")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyBuffer(f, newNPYStream(n), make([]byte, fs.ClientMsize-64)); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
