package fs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/exec/sched"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

type testServer struct {
	srv  *Server
	eng  *engine.Engine
	run  *sched.Scheduler
	tcp  string // 127.0.0.1:port
	sock string // unix socket path
}

// startServer serves a fresh engine over TCP and a unix socket.
func startServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	run := sched.NewLocal(2)
	t.Cleanup(func() { run.Close() })
	ts := startServerOn(t, cfg, run)
	ts.run = run
	return ts
}

// startServerOn serves a fresh engine running on r.
func startServerOn(t testing.TB, cfg Config, r engine.Runner) *testServer {
	t.Helper()
	eng := engine.New(r)
	srv := NewServer(eng, cfg)
	tl, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "marsfs.sock")
	ul, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- srv.Serve(tl) }()
	go func() { done <- srv.Serve(ul) }()
	t.Cleanup(func() {
		srv.Close()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		}
		eng.Close()
	})
	return &testServer{srv: srv, eng: eng, tcp: tl.Addr().String(), sock: sock}
}

func dial(t testing.TB, addr string) *Client {
	t.Helper()
	c, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func read(t testing.TB, c *Client, path string) string {
	t.Helper()
	b, err := c.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func names(t *testing.T, c *Client, path string) []string {
	t.Helper()
	ents, err := c.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range ents {
		out = append(out, e.Name)
	}
	return out
}

func clone(t testing.TB, c *Client) string {
	t.Helper()
	return "/sessions/" + strings.TrimSpace(read(t, c, "/sessions/clone"))
}

func TestListings(t *testing.T) {
	ts := startServer(t, Config{})
	for _, addr := range []string{ts.tcp, ts.sock} {
		c := dial(t, addr)
		if got := names(t, c, "/"); !reflect.DeepEqual(got, []string{"README", "sessions"}) {
			t.Errorf("ls / = %v", got)
		}
		if got := read(t, c, "/README"); !strings.Contains(got, "/sessions/clone") {
			t.Errorf("README does not describe the tree:\n%s", got)
		}
	}
	c := dial(t, ts.tcp)
	s1, s2 := clone(t, c), clone(t, c)
	if s1 != "/sessions/1" || s2 != "/sessions/2" {
		t.Fatalf("clones made %s and %s, want /sessions/1 and /sessions/2", s1, s2)
	}
	for range 2 { // listings are stable
		if got, want := names(t, c, "/sessions"), []string{"clone", "1", "2"}; !reflect.DeepEqual(got, want) {
			t.Errorf("ls /sessions = %v, want %v", got, want)
		}
		if got, want := names(t, c, s1), []string{"ctl", "submit", "error", "graphs", "history", "tensors"}; !reflect.DeepEqual(got, want) {
			t.Errorf("ls %s = %v, want %v", s1, got, want)
		}
		if got := names(t, c, s1+"/graphs"); len(got) != 0 {
			t.Errorf("ls graphs of a new session = %v, want nothing", got)
		}
		if got := names(t, c, s1+"/tensors"); len(got) != 0 {
			t.Errorf("ls tensors of a new session = %v, want nothing", got)
		}
	}
	for _, p := range []string{"/nope", "/sessions/99", s1 + "/graphs/1", s1 + "/graphs/last", s1 + "/tensors/x"} {
		if _, err := c.ReadFile(p); !IsErrno(err, linux.ENOENT) && !IsErrno(err, linux.ENOTDIR) {
			t.Errorf("read %s: %v, want ENOENT", p, err)
		}
	}
	if _, err := c.ReadFile("/README/x"); err == nil {
		t.Errorf("walk through a file succeeded")
	}
	if _, err := c.ReadFile("/sessions"); !IsErrno(err, linux.EISDIR) {
		t.Errorf("read of a directory: %v, want EISDIR", err)
	}
	if _, err := c.ReadDir("/README"); !IsErrno(err, linux.EINVAL) { // the p9 server's answer
		t.Errorf("readdir of a file: %v, want EINVAL", err)
	}
	for _, p := range []string{"/README", "/sessions/clone"} {
		if err := c.WriteFile(p, []byte("x")); !IsErrno(err, linux.EACCES) {
			t.Errorf("write of %s: %v, want EACCES", p, err)
		}
	}
	if got := names(t, c, "/sessions"); len(got) != 3 {
		t.Errorf("a write to clone made a session: %v", got)
	}
}

func TestSessionCtl(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	sum := read(t, c, s+"/ctl")
	if !strings.HasPrefix(sum, "session 1\n") || !strings.Contains(sum, "graphs 0\n") {
		t.Errorf("ctl reads\n%s", sum)
	}
	if got := read(t, c, s+"/error"); got != "" {
		t.Errorf("error of a new session = %q", got)
	}
	err := c.WriteFile(s+"/ctl", []byte("frobnicate\n"))
	if !IsErrno(err, linux.EINVAL) {
		t.Errorf("write frobnicate to ctl: %v, want EINVAL", err)
	}
	if got := read(t, c, s+"/error"); !strings.Contains(got, `unknown control message "frobnicate"`) {
		t.Errorf("error after a bad ctl message = %q", got)
	}
	if _, err := c.ReadFile(s + "/submit"); !IsErrno(err, linux.EACCES) {
		t.Errorf("read submit: %v, want EACCES", err)
	}
	if err := c.WriteFile(s+"/ctl", []byte("close\n")); err != nil {
		t.Fatalf("close the session: %v", err)
	}
	if _, err := c.ReadFile(s + "/ctl"); !IsErrno(err, linux.ENOENT) {
		t.Errorf("read ctl of a closed session: %v, want ENOENT", err)
	}
	if got := names(t, c, "/sessions"); !reflect.DeepEqual(got, []string{"clone"}) {
		t.Errorf("ls /sessions after close = %v", got)
	}
}

func TestOwner(t *testing.T) {
	// The unix socket is alice, TCP is bob.
	ts := startServer(t, Config{Identify: func(c net.Conn) string {
		if _, ok := c.(*net.UnixConn); ok {
			return "alice"
		}
		return "bob"
	}})
	alice, bob := dial(t, ts.sock), dial(t, ts.tcp)
	s := clone(t, alice)
	if !strings.Contains(read(t, alice, s+"/ctl"), "owner alice\n") {
		t.Errorf("session ctl does not name its owner")
	}
	for _, p := range []string{s + "/ctl", s + "/error", s + "/graphs"} {
		if _, err := bob.ReadFile(p); !IsErrno(err, linux.EPERM) {
			t.Errorf("bob reads alice's %s: %v, want EPERM", p, err)
		}
	}
	if err := bob.WriteFile(s+"/ctl", []byte("close")); !IsErrno(err, linux.EPERM) {
		t.Errorf("bob closes alice's session: %v, want EPERM", err)
	}
	if !strings.Contains(read(t, alice, s+"/ctl"), "session 1") {
		t.Errorf("alice's session is gone")
	}
}

func TestIdentify(t *testing.T) {
	ts := startServer(t, Config{})
	me := userName(uint32(os.Getuid()))
	addrs := []string{ts.tcp, ts.sock}
	if l6, err := Listen("[::1]:0"); err == nil { // IPv6 loopback, where there is one
		go ts.srv.Serve(l6)
		addrs = append(addrs, l6.Addr().String())
	}
	for _, addr := range addrs {
		c := dial(t, addr)
		s := clone(t, c)
		if got := read(t, c, s+"/ctl"); !strings.Contains(got, "owner "+me+"\n") {
			t.Errorf("over %s, a session is owned by\n%s\nwant %s", addr, got, me)
		}
	}
}

// rawConn speaks 9P by hand, for what the p9 client does not send.
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return nc
}

func message(typ byte, tag uint16, body ...[]byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0)
	b = append(b, typ)
	b = binary.LittleEndian.AppendUint16(b, tag)
	for _, x := range body {
		b = append(b, x...)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func str(s string) []byte {
	return append(binary.LittleEndian.AppendUint16(nil, uint16(len(s))), s...)
}

func readMessage(t *testing.T, r io.Reader) (typ byte, tag uint16, body []byte) {
	t.Helper()
	var hdr [7]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		t.Fatal(err)
	}
	body = make([]byte, binary.LittleEndian.Uint32(hdr[:4])-7)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	return hdr[4], binary.LittleEndian.Uint16(hdr[5:]), body
}

// TestAuthAndRename checks the requests the transport answers itself:
// Tauth gets ENOENT (so diod's clients attach without auth) and renames get
// EPERM; the connection carries on.
func TestAuthAndRename(t *testing.T) {
	ts := startServer(t, Config{})
	nc := rawConn(t, ts.tcp)
	nc.Write(message(100, 0xffff, u32(8192), str("9P2000.L")))
	if typ, _, _ := readMessage(t, nc); typ != 101 {
		t.Fatalf("Tversion answered with type %d", typ)
	}
	for _, m := range []struct {
		name string
		msg  []byte
		want linux.Errno
	}{
		{"Tauth", message(msgTauth, 7, u32(1), str("me"), str("/"), u32(0)), linux.ENOENT},
		{"Trenameat", message(msgTrenameat, 8, u32(1), str("a"), u32(1), str("b")), linux.EPERM},
	} {
		nc.Write(m.msg)
		typ, tag, body := readMessage(t, nc)
		if typ != msgRlerror || tag != binary.LittleEndian.Uint16(m.msg[5:]) || linux.Errno(binary.LittleEndian.Uint32(body)) != m.want {
			t.Errorf("%s answered with type %d tag %d body %x, want Rlerror %v", m.name, typ, tag, body, m.want)
		}
	}
	// Attach without auth still works on the same connection.
	nc.Write(message(104, 9, u32(1), u32(^uint32(0)), str("me"), str("/"), u32(0)))
	if typ, _, body := readMessage(t, nc); typ != 105 {
		t.Errorf("Tattach answered with type %d body %x", typ, body)
	}
}

// TestBadRequests sends malformed 9P: the server drops that connection and
// serves the others.
func TestBadRequests(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	for _, junk := range [][]byte{
		{1, 0, 0, 0, 100, 0, 0},                       // shorter than a header
		{0xff, 0xff, 0xff, 0x7f, 116, 1, 0},           // huge
		message(116, 1, u32(77), u32(0)),              // Tread of no fid, truncated
		message(200, 1, []byte("nonsense")),           // unknown type
		message(110, 2, u32(5), u32(6), []byte{3, 0}), // Twalk, truncated
	} {
		nc := rawConn(t, ts.tcp)
		nc.Write(message(100, 0xffff, u32(8192), str("9P2000.L")))
		readMessage(t, nc)
		nc.Write(junk)
		nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		io.Copy(io.Discard, nc) // an error reply or a closed connection
	}
	if got := read(t, c, s+"/ctl"); !strings.HasPrefix(got, "session 1\n") {
		t.Errorf("after bad requests, ctl reads %q", got)
	}
}

func TestRenameAndRemoveRefused(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.tcp)
	s := clone(t, c)
	dir, err := c.Walk(s)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if err := dir.RenameAt("ctl", dir, "ctl2"); !errors.Is(err, linux.EPERM) {
		t.Errorf("rename: %v, want EPERM", err)
	}
	if err := dir.UnlinkAt("ctl", 0); !errors.Is(err, linux.EPERM) {
		t.Errorf("remove: %v, want EPERM", err)
	}
	if _, err := dir.Mkdir("d", 0755, p9.NoUID, p9.NoGID); !errors.Is(err, linux.EPERM) {
		t.Errorf("mkdir: %v, want EPERM", err)
	}
	if _, err := c.Create(s, "x"); !IsErrno(err, linux.EPERM) {
		t.Errorf("create in a session directory: %v, want EPERM", err)
	}
}

func TestUploadRefused(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.tcp)
	s := clone(t, c)
	good := new(bytes.Buffer)
	a := &tensor.Array{DType: tensor.Float64, Shape: []int{2, 3}, Data: make([]byte, 48)}
	if err := codec.WriteNPY(good, a); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		file     string
		data     []byte
		writeErr bool // the write itself fails
		msg      string
	}{
		{"bad magic", "x.npy", []byte("this is not a numpy file at all"), true, "npy"},
		{"truncated", "x.npy", good.Bytes()[:good.Len()-5], false, "npy"},
		{"trailing", "x.npy", append(append([]byte{}, good.Bytes()...), 1, 2, 3), false, "header says"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := c.Create(s+"/tensors", tt.file)
			if err != nil {
				t.Fatal(err)
			}
			_, werr := f.Write(tt.data)
			f.Close()
			if tt.writeErr && !IsErrno(werr, linux.EINVAL) {
				t.Errorf("write: %v, want EINVAL", werr)
			}
			if !tt.writeErr && werr != nil {
				t.Errorf("write: %v", werr)
			}
			if got := read(t, c, s+"/error"); !strings.Contains(got, tt.msg) {
				t.Errorf("error = %q, want it to mention %q", got, tt.msg)
			}
			if got := names(t, c, s+"/tensors"); len(got) != 0 {
				t.Errorf("tensors after a refused upload: %v", got)
			}
		})
	}
	if _, err := c.Create(s+"/tensors", "x.csv"); !IsErrno(err, linux.EINVAL) {
		t.Errorf("create x.csv: %v, want EINVAL", err)
	}
	// A name that cannot be a tensor's is refused at the create, before
	// any of the stream is sent.
	if _, err := c.Create(s+"/tensors", "2020-data.npy"); !IsErrno(err, linux.EINVAL) {
		t.Errorf("create 2020-data.npy: %v, want EINVAL", err)
	}
	if got := read(t, c, s+"/error"); !strings.Contains(got, "bad tensor name") {
		t.Errorf("error after a bad name = %q", got)
	}
}

func TestIdleTimeout(t *testing.T) {
	// The used session is read every 50 ms until the idle one goes: a
	// timeout ten times the gap leaves room for a loaded machine's late
	// wake-ups (300 ms against 100 ms failed at load 20).
	const timeout = 500 * time.Millisecond
	ts := startServer(t, Config{IdleTimeout: timeout})
	c := dial(t, ts.tcp)
	begin := time.Now()
	idle, used := clone(t, c), clone(t, c)
	for {
		read(t, c, used+"/ctl")
		// Listing /sessions uses none of them.
		if !slices.Contains(names(t, c, "/sessions"), strings.TrimPrefix(idle, "/sessions/")) {
			break
		}
		if time.Since(begin) > 20*timeout {
			t.Fatalf("a session idle for %v with a %v timeout is still there", time.Since(begin), timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d := time.Since(begin); d < timeout {
		t.Errorf("a session closed after %v idle, before its %v timeout", d, timeout)
	}
	if _, err := c.ReadFile(idle + "/ctl"); !IsErrno(err, linux.ENOENT) {
		t.Errorf("a session closed as idle: its ctl reads with %v, want ENOENT", err)
	}
	if got := names(t, c, "/sessions"); !reflect.DeepEqual(got, []string{"clone", strings.TrimPrefix(used, "/sessions/")}) {
		t.Errorf("ls /sessions = %v", got)
	}
}

// TestJunkMessages sends well-framed messages of every type with random
// bodies, after a version and an attach: whatever they do to their own
// connection, the server goes on serving the others.
func TestJunkMessages(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 40 {
		nc := rawConn(t, ts.tcp)
		nc.Write(message(100, 0xffff, u32(1<<16), str("9P2000.L")))
		readMessage(t, nc)
		nc.Write(message(104, 1, u32(1), u32(^uint32(0)), str("me"), str("/"), u32(0)))
		readMessage(t, nc)
		for range 50 {
			body := make([]byte, r.IntN(40))
			for i := range body {
				body[i] = byte(r.IntN(4)) // small numbers: fids and lengths that exist
			}
			typ := byte(r.IntN(256))
			if typ == 100 { // a second Tversion resets the connection; fine, but dull
				typ = 101
			}
			nc.Write(message(typ, uint16(2+round), body))
		}
		nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		io.Copy(io.Discard, nc)
		nc.Close()
	}
	if got := read(t, c, s+"/ctl"); !strings.HasPrefix(got, "session 1\n") {
		t.Errorf("after junk, ctl reads %q", got)
	}
}

// TestFidLimit walks without clunking until the connection's fids run out:
// the next walk fails with EMFILE, another connection is served as ever,
// and a clunk makes room again.
func TestFidLimit(t *testing.T) {
	defer func(n int64) { fidLimit = n }(fidLimit)
	fidLimit = 200
	ts := startServer(t, Config{})
	greedy := dial(t, ts.sock)
	var fids []p9.File
	for {
		f, err := greedy.Walk("/sessions")
		if err != nil {
			if !errors.Is(err, linux.EMFILE) {
				t.Fatalf("walk %d: %v, want EMFILE", len(fids), err)
			}
			break
		}
		fids = append(fids, f)
		if len(fids) > int(fidLimit)+10 {
			t.Fatal("no limit on fids")
		}
	}
	// The root's fid is the 200th.
	if len(fids) != int(fidLimit)-1 {
		t.Errorf("%d walks before EMFILE, want 199", len(fids))
	}
	other := dial(t, ts.sock)
	if got := strings.TrimSpace(read(t, other, "/sessions/clone")); got == "" {
		t.Error("another connection read nothing")
	}
	if err := fids[0].Close(); err != nil {
		t.Fatal(err)
	}
	f, err := greedy.Walk("/sessions")
	if err != nil {
		t.Fatalf("walk after a clunk: %v", err)
	}
	f.Close()
}

// TestReadBeyondMsize negotiates a small msize, then asks to read far more
// than it in one Tread: the server refuses it (or reads no more than the
// msize allows), and serves on.
func TestReadBeyondMsize(t *testing.T) {
	ts := startServer(t, Config{})
	nc := rawConn(t, ts.tcp)
	nc.Write(message(100, 0xffff, u32(8192), str("9P2000.L")))
	if typ, _, body := readMessage(t, nc); typ != 101 || binary.LittleEndian.Uint32(body) != 8192 {
		t.Fatalf("Tversion answered with type %d body %x", typ, body)
	}
	nc.Write(message(104, 1, u32(1), u32(^uint32(0)), str("me"), str("/"), u32(0)))
	readMessage(t, nc)
	// Twalk fid 1 to newfid 2, "README"; Tlopen it; Tread 4 MiB.
	nc.Write(message(110, 2, u32(1), u32(2), []byte{1, 0}, str("README")))
	if typ, _, body := readMessage(t, nc); typ != 111 {
		t.Fatalf("Twalk answered with type %d body %x", typ, body)
	}
	nc.Write(message(12, 3, u32(2), u32(0)))
	if typ, _, body := readMessage(t, nc); typ != 13 {
		t.Fatalf("Tlopen answered with type %d body %x", typ, body)
	}
	nc.Write(message(116, 4, u32(2), make([]byte, 8), u32(4<<20)))
	switch typ, _, body := readMessage(t, nc); typ {
	case msgRlerror:
		t.Logf("refused: %v", linux.Errno(binary.LittleEndian.Uint32(body)))
	case 117:
		if n := binary.LittleEndian.Uint32(body); n > 8192 {
			t.Errorf("Rread of %d bytes on an msize of 8192", n)
		}
	default:
		t.Fatalf("Tread answered with type %d body %x", typ, body)
	}
	c := dial(t, ts.sock)
	if got := read(t, c, "/sessions/clone"); got == "" {
		t.Error("the server serves no more")
	}
}
