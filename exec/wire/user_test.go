package wire

import (
	"net"
	"testing"
)

// A loopback connection between two ends of this process is of its own
// user, by the kernel's word; so is a pipe, which no other process holds.
func TestSameUser(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, conn := range []net.Conn{c, s} {
		if !SameUser(conn) || OtherUser(conn) {
			t.Errorf("%v → %v: SameUser %v, OtherUser %v", conn.LocalAddr(), conn.RemoteAddr(), SameUser(conn), OtherUser(conn))
		}
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if !SameUser(a) || OtherUser(a) {
		t.Error("a pipe is not of this user")
	}
}
