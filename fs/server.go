package fs

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/cluster/keytls"
	"marsfs/exec/engine"
	"marsfs/exec/wire"
	"marsfs/fs/prom"
)

// A Cluster reports what /cluster shows. Its methods render text and may be
// called at any time from any goroutine.
type Cluster interface {
	// Members is the text of /cluster/members: one line a member, "name
	// addr role state".
	Members() string
	// Workers names the workers, in listing order.
	Workers() []string
	// WorkerStatus is the text of /cluster/workers/<name>/status, or false
	// if there is no such worker.
	WorkerStatus(name string) (string, bool)
}

// Config tunes a Server. The zero value is usable.
type Config struct {
	// Cluster, if not nil, is shown under /cluster.
	Cluster Cluster
	// Identify names the user at the other end of a connection; Identify
	// (the function of this package) when nil.
	Identify func(net.Conn) string
	// MaxSpec bounds the text written to one open of submit (1 MiB when 0).
	MaxSpec int
	// MaxUpload bounds the data of one uploaded .npy (4 GiB when 0).
	MaxUpload int64
	// IdleTimeout, when positive, closes a session (freeing its chunks)
	// that nobody has used for that long and whose graphs have all ended.
	IdleTimeout time.Duration
	// Peers, if not nil, are the other schedulers of the cluster, whose
	// sessions the tree shows and serves too (see peers.go); its Self
	// names this scheduler in ctl's "home" line ("scheduler" without).
	Peers Peers
	// Key, when set (the cluster key, see wire.DeriveKey), lets the
	// server listen beyond loopback (ListenKey): a TCP client must then
	// open with TLS and prove the key (package cluster/keytls) before a
	// byte of 9P moves, and all its traffic is encrypted. Its sessions
	// belong to KeyIdentity. Clients on loopback may still speak plain
	// 9P, as the unix socket does, identified by the kernel.
	Key []byte
	// ConnMemory bounds what the connections' 9P buffers take together,
	// 0 for no bound: past it, new connections are granted smaller
	// message sizes (see msizeBudget).
	ConnMemory int64
	// Metrics, if not nil, adds the process's own families to
	// /cluster/metrics (up's worker restarts, takeovers of schedulers).
	Metrics func() []prom.Family
}

// A Server serves an Engine's sessions as a 9P2000.L tree. Each connection
// gets its own p9 server, attached as the identity its peer has, so that a
// client stuck in one (a blocked read of a graph's wait file) holds no lock
// any other connection needs.
type Server struct {
	eng *engine.Engine
	cfg Config

	ctx    context.Context // ends blocked reads when the server closes
	cancel context.CancelFunc

	idle idle

	// uploading counts the uploads under way by session and file name, so
	// that NAME.npy can be walked while it is written (cp -p sets its
	// times by path before the close that makes tensor NAME).
	uploading sync.Map // uploadKey -> *atomic.Int32

	msizes msizeBudget

	// homes remembers the home of sessions of other schedulers, by
	// number (see peers.go).
	homes sync.Map // int -> string

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[*conn]bool
	admitting map[net.Conn]bool // accepted, not yet admitted (a TLS handshake)
	wg        sync.WaitGroup
}

// NewServer returns a server of eng's tree.
func NewServer(eng *engine.Engine, cfg Config) *Server {
	if cfg.Identify == nil {
		cfg.Identify = Identify
	}
	if cfg.MaxSpec <= 0 {
		cfg.MaxSpec = 1 << 20
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = 4 << 30
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{eng: eng, cfg: cfg, ctx: ctx, cancel: cancel, msizes: msizeBudget{limit: cfg.ConnMemory},
		idle:      idle{timeout: cfg.IdleTimeout, last: make(map[int]time.Time)},
		listeners: make(map[net.Listener]bool), conns: make(map[*conn]bool), admitting: make(map[net.Conn]bool)}
	if cfg.IdleTimeout > 0 {
		go s.reap()
	}
	return s
}

// ErrNotLoopback is returned by Listen for a TCP address beyond loopback
// without a key: such a listener needs authentication.
var ErrNotLoopback = errors.New("a TCP listener beyond loopback needs the cluster key, which authenticates its clients and encrypts their traffic: give --key-file (or $MARSFS_KEY), or listen on a loopback address or a unix socket")

// KeyIdentity owns the sessions of clients that proved the cluster key:
// every holder of the key is the same user to the tree.
const KeyIdentity = "key"

// Listen opens a listener for the server: addr is a unix socket path when
// it starts with "/" or "unix:", else a loopback TCP host:port. A stale
// socket file (nobody listening) is replaced.
func Listen(addr string) (net.Listener, error) { return ListenKey(addr, nil) }

// ListenKey is Listen, for a server of Config.Key key: with a key, addr
// may be any TCP address.
func ListenKey(addr string, key []byte) (net.Listener, error) {
	if path, ok := SocketPath(addr); ok {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("listen %s: a server is already listening there", path)
		}
		os.Remove(path)
		return net.Listen("unix", path)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	if host == "" {
		ips = []net.IP{net.IPv4zero}
	}
	for _, ip := range ips {
		if !ip.IsLoopback() && len(key) == 0 {
			return nil, fmt.Errorf("listen %s: %w", addr, ErrNotLoopback)
		}
	}
	return net.Listen("tcp", addr)
}

// SocketPath reports whether addr names a unix socket, and its path.
func SocketPath(addr string) (string, bool) {
	if len(addr) > 5 && addr[:5] == "unix:" {
		return addr[5:], true
	}
	if len(addr) > 0 && addr[0] == '/' {
		return addr, true
	}
	return "", false
}

// Serve accepts connections on l and serves them until Close. It returns
// nil after Close, or the error that stopped accepting.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.listeners[l] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.wg.Add(1)
		s.admitting[nc] = true
		s.mu.Unlock()
		// The TLS handshake, if any, runs on the connection's own
		// goroutine: a slow client holds up no other.
		go func() {
			defer s.wg.Done()
			raw := nc
			nc, ident, forwarded, err := s.admit(nc)
			s.mu.Lock()
			delete(s.admitting, raw)
			s.mu.Unlock()
			// A connection closed before its first byte is a probe (a
			// port check, a load balancer's health check, marsfs
			// ready's dial): nothing was refused, and nothing is logged.
			if err != nil && !errors.Is(err, io.EOF) {
				log.Printf("marsfs: connection from %s refused: %v", nc.RemoteAddr(), err)
			}
			if err != nil {
				nc.Close()
				return
			}
			c := newConn(s.ctx, nc, ident, &s.msizes)
			c.forwarded = forwarded
			s.mu.Lock()
			if s.ctx.Err() != nil {
				s.mu.Unlock()
				nc.Close()
				return
			}
			s.conns[c] = true
			s.wg.Add(1)
			s.mu.Unlock()
			s.handle(c)
		}()
	}
}

// admitTimeout bounds a client's TLS handshake.
const admitTimeout = 10 * time.Second

// admit decides what a new connection is: with a key, a TCP client that
// opens with TLS must prove the key, and is served over the TLS
// connection as KeyIdentity; one that speaks plain 9P is served only from
// loopback, identified by the kernel. Without a key every connection is
// plain (Listen keeps the listener on loopback).
//
// A connection of either kind may open with forwardMagic: a scheduler
// forwarding a client's requests to this one, the home of its session,
// names the client's identity; it is believed of a peer that proved the
// key, or of a process of this server's user on loopback (see
// admitForward).
func (s *Server) admit(nc net.Conn) (net.Conn, string, bool, error) {
	c, ident, keyed, err := s.admitTLS(nc)
	if err != nil {
		return c, ident, false, err
	}
	if _, tcp := nc.(*net.TCPConn); !tcp {
		return c, ident, false, nil
	}
	return s.admitForward(nc, c, ident, keyed)
}

// admitForward reads a forwarded connection's preamble, if c has one.
func (s *Server) admitForward(raw, c net.Conn, ident string, keyed bool) (net.Conn, string, bool, error) {
	br := bufio.NewReaderSize(c, 64)
	c.SetReadDeadline(time.Now().Add(admitTimeout))
	defer c.SetReadDeadline(time.Time{})
	head, err := br.Peek(4)
	if err != nil {
		return c, "", false, err
	}
	pc := &peekedConn{Conn: c, r: br}
	if string(head) != forwardMagic[:4] {
		return pc, ident, false, nil
	}
	pre := make([]byte, len(forwardMagic)+2)
	if _, err := io.ReadFull(br, pre); err != nil || string(pre[:len(forwardMagic)]) != forwardMagic {
		return c, "", false, errors.New("malformed forwarding preamble")
	}
	name := make([]byte, int(pre[len(pre)-2])<<8|int(pre[len(pre)-1]))
	if _, err := io.ReadFull(br, name); err != nil || len(name) == 0 {
		return c, "", false, errors.New("malformed forwarding preamble")
	}
	if !keyed && !wire.SameUser(raw) {
		return c, "", false, fmt.Errorf("a connection forwarding for %q is neither keyed nor of this server's user", name)
	}
	return pc, string(name), true, nil
}

// admitTLS runs the TLS handshake of a keyed client (see Config.Key).
func (s *Server) admitTLS(nc net.Conn) (net.Conn, string, bool, error) {
	if _, tcp := nc.(*net.TCPConn); !tcp || len(s.cfg.Key) == 0 {
		return nc, s.cfg.Identify(nc), false, nil
	}
	br := bufio.NewReaderSize(nc, 1)
	nc.SetReadDeadline(time.Now().Add(admitTimeout))
	first, err := br.Peek(1)
	nc.SetReadDeadline(time.Time{})
	if err != nil {
		return nc, "", false, err
	}
	pc := &peekedConn{Conn: nc, r: br}
	if !keytls.LooksLikeTLS(first[0]) {
		if remote, ok := nc.RemoteAddr().(*net.TCPAddr); !ok || !remote.IP.IsLoopback() {
			refusePlain(pc)
			return nc, "", false, errors.New("plain 9P from beyond loopback: this server needs the cluster key (TLS)")
		}
		return pc, s.cfg.Identify(nc), false, nil
	}
	p, err := keytls.For(s.cfg.Key)
	if err != nil {
		return nc, "", false, err
	}
	tc, err := p.Server(pc, time.Now().Add(admitTimeout))
	if err != nil {
		return nc, "", false, err
	}
	return tc, KeyIdentity, true, nil
}

// refusePlain answers the Tversion of a plain 9P client beyond loopback
// with an Rlerror of EACCES, so that the client can tell this refusal
// from a server that hangs up because it is going (see hungUp). The
// Tversion is read whole first: closing a socket with bytes unread
// resets it, and the reset could discard the answer at the client.
func refusePlain(c net.Conn) {
	c.SetDeadline(time.Now().Add(time.Second))
	defer c.SetDeadline(time.Time{})
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return
	}
	if n := binary.LittleEndian.Uint32(size[:]); n > 4 && n <= 1<<16 {
		if _, err := io.CopyN(io.Discard, c, int64(n-4)); err != nil {
			return
		}
	}
	m := binary.LittleEndian.AppendUint32(nil, 4+1+2+4)
	m = append(m, msgRlerror)
	m = binary.LittleEndian.AppendUint16(m, 0xffff) // NOTAG, as the Tversion's
	m = binary.LittleEndian.AppendUint32(m, uint32(linux.EACCES))
	c.Write(m)
}

// A peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

func (s *Server) handle(c *conn) {
	defer s.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			log.Printf("marsfs: connection from %s (%s) ended by a panic: %v", c.RemoteAddr(), c.ident, r)
		}
		c.Close()
		c.closePeers()
		c.releaseBudget()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	p9.NewServer(attacher{s: s, c: c}).Handle(c, c)
}

// Close stops accepting, ends every connection and its blocked reads, and
// waits for their handlers. It does not close the Engine.
func (s *Server) Close() error {
	s.mu.Lock()
	s.cancel()
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	for c := range s.admitting {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}
