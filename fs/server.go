package fs

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
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
	// ConnMemory bounds what the connections' 9P buffers take together,
	// 0 for no bound: past it, new connections are granted smaller
	// message sizes (see msizeBudget).
	ConnMemory int64
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

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[*conn]bool
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
		listeners: make(map[net.Listener]bool), conns: make(map[*conn]bool)}
	if cfg.IdleTimeout > 0 {
		go s.reap()
	}
	return s
}

// ErrNotLoopback is returned by Listen for a TCP address beyond loopback:
// such a listener needs authentication, which this server does not offer.
var ErrNotLoopback = errors.New("a TCP listener beyond loopback needs authentication, which marsfs does not offer yet; listen on a loopback address or a unix socket")

// Listen opens a listener for the server: addr is a unix socket path when
// it starts with "/" or "unix:", else a loopback TCP host:port. A stale
// socket file (nobody listening) is replaced.
func Listen(addr string) (net.Listener, error) {
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
	for _, ip := range ips {
		if !ip.IsLoopback() {
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
		c := newConn(s.ctx, nc, s.cfg.Identify(nc), &s.msizes)
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(c)
	}
}

func (s *Server) handle(c *conn) {
	defer s.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			log.Printf("marsfs: connection from %s (%s) ended by a panic: %v", c.RemoteAddr(), c.ident, r)
		}
		c.Close()
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
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}
