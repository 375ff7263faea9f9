package fs

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/hugelgupf/p9/linux"
)

// fakePeers is a ring that sends every session to one home.
type fakePeers struct {
	self, home string
	mu         *sync.Mutex       // shared by the peers of one test
	addrs      map[string]string // every scheduler's, this one's included
}

func (p *fakePeers) Self() string      { return p.self }
func (p *fakePeers) Home(n int) string { return p.home }
func (p *fakePeers) Addrs() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for name, a := range p.addrs {
		if name != p.self {
			out[name] = a
		}
	}
	return out
}

// TestForwardingToTheHome: a session cloned on scheduler a is made on its
// home b; a lists it, serves its files (a spec submitted and a tensor
// read through a), its ctl says "home b", and another identity coming
// through a is refused by b.
func TestForwardingToTheHome(t *testing.T) {
	addrs, mu := map[string]string{}, new(sync.Mutex)
	pa := &fakePeers{self: "a", home: "b", addrs: addrs, mu: mu}
	pb := &fakePeers{self: "b", home: "b", addrs: addrs, mu: mu}
	// On a, TCP clients are "mallory"; unix ones are who the kernel says.
	a := startServer(t, Config{Peers: pa, Identify: func(c net.Conn) string {
		if _, ok := c.(*net.TCPConn); ok {
			return "mallory"
		}
		return Identify(c)
	}})
	b := startServer(t, Config{Peers: pb})
	b.eng.SetSpace(5)
	mu.Lock()
	addrs["a"], addrs["b"] = a.tcp, b.tcp
	mu.Unlock()

	c, err := Dial(a.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := c.ReadFile("/sessions/clone")
	if err != nil {
		t.Fatal(err)
	}
	n := strings.TrimSpace(string(id))
	if n != "1" || len(a.eng.Sessions()) != 0 || len(b.eng.Sessions()) != 1 || b.eng.Sessions()[0].ID() != 1 {
		t.Fatalf("clone on a gave %q; a holds %d sessions, b %d", n, len(a.eng.Sessions()), len(b.eng.Sessions()))
	}
	owner := b.eng.Sessions()[0].Owner()
	if owner != Identify(dialUnixPeer(t, a.sock)) {
		t.Errorf("the session made on b for a's client belongs to %q", owner)
	}
	ents, err := c.ReadDir("/sessions")
	if err != nil || len(ents) != 2 || ents[1].Name != "1" {
		t.Fatalf("/sessions on a: %v %v", ents, err)
	}
	ctl, err := c.ReadFile("/sessions/1/ctl")
	if err != nil || !strings.Contains(string(ctl), "home b\n") {
		t.Errorf("ctl through a: %q %v", ctl, err)
	}
	if err := c.WriteFile("/sessions/1/submit", []byte("x = arange(10).sum()\n")); err != nil {
		t.Fatal(err)
	}
	if st, err := c.ReadFile("/sessions/1/graphs/last/wait"); err != nil || !strings.HasPrefix(string(st), "SUCCEEDED") {
		t.Fatalf("wait through a: %s %v", st, err)
	}
	if x, err := c.ReadFile("/sessions/1/tensors/x/text"); err != nil || strings.TrimSpace(string(x)) != "45" {
		t.Errorf("x through a: %q %v", x, err)
	}
	// b's own listing shows only its own sessions to a forwarded
	// connection, and its session to its own clients.
	cb, err := Dial(b.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	if x, err := cb.ReadFile("/sessions/1/tensors/x/text"); err != nil || strings.TrimSpace(string(x)) != "45" {
		t.Errorf("x on b: %q %v", x, err)
	}
	// mallory, through a, is refused at b.
	m, err := Dial(a.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.ReadFile("/sessions/1/ctl"); !IsErrno(err, linux.EPERM) {
		t.Errorf("another identity through a: %v, want EPERM", err)
	}
	if _, err := m.ReadFile("/sessions/2/ctl"); !IsErrno(err, linux.ENOENT) {
		t.Errorf("a session nobody has: %v, want ENOENT", err)
	}
}

// dialUnixPeer returns this process's end of a connection to the unix
// socket at path: Identify of it names this process's user.
func dialUnixPeer(t *testing.T, path string) net.Conn {
	t.Helper()
	l, err := net.Listen("unix", path+".id")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("unix", path+".id")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
