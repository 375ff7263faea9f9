package fs

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestForwardedFlushWait flushes a read of a graph's wait file blocked on
// scheduler a for a session homed on b: the read ends (EINTR) and the
// flush is answered, as for a local session, though the graph runs on.
func TestForwardedFlushWait(t *testing.T) {
	needParser(t)
	addrs, mu := map[string]string{}, new(sync.Mutex)
	a := startServer(t, Config{Peers: &fakePeers{self: "a", home: "b", addrs: addrs, mu: mu}})
	b := startServer(t, Config{Peers: &fakePeers{self: "b", home: "b", addrs: addrs, mu: mu}})
	b.eng.SetSpace(5)
	mu.Lock()
	addrs["a"], addrs["b"] = a.tcp, b.tcp
	mu.Unlock()
	c := dial(t, a.tcp)
	s := clone(t, c)
	if len(b.eng.Sessions()) != 1 {
		t.Fatalf("the session is not on its home")
	}
	submit(t, c, s, "x = rand(8000000000, chunks=1000000, seed=1)\ny = x.sum()\n")
	defer c.WriteFile(s+"/graphs/1/ctl", []byte("cancel"))

	nc := rawConn(t, a.tcp)
	nc.Write(message(100, 0xffff, u32(1<<16), str("9P2000.L")))
	readMessage(t, nc)
	nc.Write(message(104, 1, u32(1), u32(^uint32(0)), str("me"), str("/"), u32(0)))
	readMessage(t, nc)
	var walk []byte
	walk = append(walk, u32(1)...)
	walk = append(walk, u32(2)...)
	path := strings.Split(strings.TrimPrefix(s, "/")+"/graphs/1/wait", "/")
	walk = append(walk, byte(len(path)), 0)
	for _, name := range path {
		walk = append(walk, str(name)...)
	}
	nc.Write(message(110, 2, walk))                     // Twalk
	if typ, _, body := readMessage(t, nc); typ != 111 { // Rwalk
		t.Fatalf("walk to wait: type %d %x", typ, body)
	}
	nc.Write(message(12, 3, u32(2), u32(0))) // Tlopen, read-only
	if typ, _, body := readMessage(t, nc); typ != 13 {
		t.Fatalf("open wait: type %d %x", typ, body)
	}
	nc.Write(message(116, 4, u32(2), u32(0), u32(0), u32(4096))) // Tread
	time.Sleep(100 * time.Millisecond)
	nc.Write(message(msgTflush, 5, []byte{4, 0})) // Tflush of tag 4
	got := map[uint16]byte{}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for range 2 {
		typ, tag, _ := readMessage(t, nc)
		got[tag] = typ
	}
	if got[4] != msgRlerror || got[5] != 109 {
		t.Errorf("after a flush, tag 4 got type %d (want Rlerror), tag 5 type %d (want Rflush)", got[4], got[5])
	}
	if st := state(read(t, c, s+"/graphs/1/status")); st != "RUNNING" {
		t.Errorf("the graph is %s after a flushed wait", st)
	}
}
