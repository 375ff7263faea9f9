package fs

import (
	"io"
	"testing"

	"github.com/hugelgupf/p9/p9"
)

// BenchmarkReadData reads a 64 MiB tensor's data file over 9P, over TCP
// and the unix socket.
func BenchmarkReadData(b *testing.B) {
	needParser(b)
	ts := startServer(b, Config{})
	for _, tr := range []struct{ name, addr string }{{"tcp", ts.tcp}, {"unix", ts.sock}} {
		b.Run(tr.name, func(b *testing.B) {
			c := dial(b, tr.addr)
			s := clone(b, c)
			submit(b, c, s, "x = ones(8388608, chunks=1048576)\n")
			if st := read(b, c, s+"/graphs/last/wait"); state(st) != "SUCCEEDED" {
				b.Fatal(st)
			}
			buf := make([]byte, ClientMsize)
			b.SetBytes(8 << 23)
			b.ResetTimer()
			for range b.N {
				f, err := c.Open(s+"/tensors/x/data", p9.ReadOnly)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{f}, buf)
				f.Close()
				if err != nil || n != 8<<23 {
					b.Fatalf("read %d bytes: %v", n, err)
				}
			}
		})
	}
}
