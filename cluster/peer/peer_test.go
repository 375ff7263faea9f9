package peer

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// Both ends of a unix socket and of a loopback TCP connection made by
// this process are this process's user.
func TestUIDOfOwnConnections(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = filepath.Join(t.TempDir(), "s")
		}
		l, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial(network, l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		for _, conn := range []net.Conn{c, s} {
			if uid, ok := UID(conn); !ok || uid != uint32(os.Getuid()) {
				t.Errorf("%s: UID = %d, %v; want %d", network, uid, ok, os.Getuid())
			}
		}
		c.Close()
		s.Close()
		l.Close()
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, ok := UID(a); ok {
		t.Error("a pipe has a peer uid")
	}
}

// BenchmarkTCPOwner finds the uid of a loopback connection's client end
// in /proc/net/tcp, as a worker does for each connection it accepts.
func BenchmarkTCPOwner(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for b.Loop() {
		if _, ok := tcpOwner(c.LocalAddr().(*net.TCPAddr), c.RemoteAddr().(*net.TCPAddr)); !ok {
			b.Fatal("no uid")
		}
	}
}
