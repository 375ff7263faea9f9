package fs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/cluster/keytls"
)

// ClientMsize is the message size clients ask for: the most the p9 server
// grants. A marsfs server may grant less (see Config.ConnMemory).
const ClientMsize = 4 << 20

// A Client speaks 9P2000.L to a marsfs server: the client verbs of the
// marsfs command, and tests, use it. Paths are slash-separated from the
// root of the tree.
type Client struct {
	c    *p9.Client
	root p9.File
}

// Dial connects to a marsfs server: addr is a unix socket path when it
// starts with "/" or "unix:", else a TCP host:port.
func Dial(addr string) (*Client, error) { return DialKey(addr, nil) }

// DialKey is Dial with the cluster key: over TCP, when key is not empty,
// the client opens with TLS and proves the key (see Config.Key), and the
// server must prove it too. A unix socket ignores the key: the kernel
// names its peers.
func DialKey(addr string, key []byte) (*Client, error) { return dialAs(addr, key, "") }

// DialAs is DialKey for a scheduler forwarding a client's requests to the
// home of its session (see Peers): the connection says, before 9P, whose
// requests it carries, and the home serves them as that identity's. A
// server believes it only of a peer that proved the key, or, without a
// key, of a process of its own user on loopback.
func DialAs(addr string, key []byte, ident string) (*Client, error) {
	if ident == "" {
		return nil, errors.New("fs: DialAs with no identity")
	}
	return dialAs(addr, key, ident)
}

// peerTimeout bounds the connection to another scheduler, TLS included.
const peerTimeout = 3 * time.Second

// forwardMagic opens a forwarded connection: a 9P message of size 0,
// which no 9P client sends, then "MFSF" and the identity.
const forwardMagic = "\x00\x00\x00\x00MFSF"

func dialAs(addr string, key []byte, ident string) (*Client, error) {
	network, a := "tcp", addr
	if path, ok := SocketPath(addr); ok {
		network, a = "unix", path
	}
	// A scheduler forwarding a client's request waits less for a peer
	// than a user waits for a server: a listing asks every scheduler.
	wait := 10 * time.Second
	if ident != "" {
		wait = peerTimeout
	}
	nc, err := net.DialTimeout(network, a, wait)
	if err != nil {
		// A unix socket's file is gone with its server (or was never
		// made): the same news as a refused TCP connection.
		if errors.Is(err, syscall.ECONNREFUSED) || network == "unix" && errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("%s: connection refused: no marsfs server listens there (not started, stopped, or restarting)", addr)
		}
		return nil, err
	}
	if network == "tcp" && len(key) > 0 {
		p, err := keytls.For(key)
		if err == nil {
			nc, err = p.Client(nc, time.Now().Add(wait))
		}
		if err != nil {
			nc.Close()
			return nil, keyError(addr, err)
		}
	}
	if ident != "" {
		pre := append([]byte(forwardMagic), byte(len(ident)>>8), byte(len(ident)))
		if _, err := nc.Write(append(pre, ident...)); err != nil {
			nc.Close()
			return nil, err
		}
	}
	// The p9 client speaks at the size it asked for, whatever the server
	// granted: ask first, then have it ask for what was granted.
	msize, err := negotiate(nc, ClientMsize)
	if err != nil {
		remote := nc.RemoteAddr()
		nc.Close()
		return nil, hungUp(addr, network, remote, key, err)
	}
	c, err := p9.NewClient(nc, p9.WithMessageSize(msize))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("9P version with %s: %w", addr, err)
	}
	root, err := c.Attach("/")
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("attach to %s: %w", addr, err)
	}
	return &Client{c: c, root: root}, nil
}

// errPlainRefused is a server's answer to the Tversion of a plain 9P
// client beyond loopback (an Rlerror of EACCES): it serves only clients
// that prove its key.
var errPlainRefused = errors.New("plain 9P refused")

// hungUp says why the server at addr ended the connection before
// answering its Tversion. A server refusing plain 9P from beyond loopback
// says so (errPlainRefused; one built before it did just hung up, which
// is still read so from an address beyond loopback). On loopback or a
// unix socket, a server that hangs up at once is one that is going
// (stopping, or restarting: a listener's last accepted connections are
// closed with it).
func hungUp(addr, network string, remote net.Addr, key []byte, err error) error {
	if errors.Is(err, errPlainRefused) {
		return fmt.Errorf("%s refused plain 9P: a server beyond loopback serves only clients with its key (give --key-file or $MARSFS_KEY)", addr)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("9P version with %s: %w", addr, err)
	}
	if tcp, ok := remote.(*net.TCPAddr); ok && network == "tcp" && len(key) == 0 && !tcp.IP.IsLoopback() {
		return fmt.Errorf("%s hung up on plain 9P: a server beyond loopback serves only clients with its key (give --key-file or $MARSFS_KEY)", addr)
	}
	return fmt.Errorf("%s hung up before 9P began: the server is restarting or stopping (try again): %w", addr, err)
}

// keyError says why a TLS handshake with the server at addr failed.
func keyError(addr string, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, keytls.ErrPeerKey):
		return fmt.Errorf("authentication with %s failed: the server holds another key than this one (--key-file, $MARSFS_KEY)", addr)
	case strings.Contains(msg, "bad certificate") || strings.Contains(msg, "certificate required"):
		return fmt.Errorf("authentication with %s failed: the server refused this key (--key-file, $MARSFS_KEY): %w", addr, err)
	case errors.Is(err, io.EOF) || strings.Contains(msg, "first record does not look like a TLS handshake") || strings.Contains(msg, "connection reset"):
		return fmt.Errorf("authentication with %s failed: the server does not speak TLS (does it have a key?): %w", addr, err)
	}
	return fmt.Errorf("authentication with %s failed: %w", addr, err)
}

// Close ends the connection.
func (c *Client) Close() error {
	c.root.Close()
	return c.c.Close()
}

func split(path string) []string {
	var names []string
	for _, s := range strings.Split(path, "/") {
		if s != "" && s != "." {
			names = append(names, s)
		}
	}
	return names
}

// Walk returns a fid for path; the caller closes it.
func (c *Client) Walk(path string) (p9.File, error) {
	_, f, err := c.root.Walk(split(path))
	if err != nil {
		return nil, &PathError{"walk", path, err}
	}
	return f, nil
}

// Open opens path with the given mode (p9.ReadOnly, p9.WriteOnly, ...).
func (c *Client) Open(path string, mode p9.OpenFlags) (*File, error) {
	f, err := c.Walk(path)
	if err != nil {
		return nil, err
	}
	if _, _, err := f.Open(mode); err != nil {
		f.Close()
		return nil, &PathError{"open", path, err}
	}
	return &File{f: f, path: path}, nil
}

// Create creates and opens file name in directory dir for writing.
func (c *Client) Create(dir, name string) (*File, error) {
	d, err := c.Walk(dir)
	if err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(dir, "/") + "/" + name
	// On the client, the created file takes over the directory's fid.
	if _, _, _, err := d.Create(name, p9.WriteOnly, 0644, p9.NoUID, p9.NoGID); err != nil {
		d.Close()
		return nil, &PathError{"create", path, err}
	}
	return &File{f: d, path: path}, nil
}

// ReadFile returns the content of path.
func (c *Client) ReadFile(path string) ([]byte, error) {
	f, err := c.Open(path, p9.ReadOnly)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// WriteFile opens path for writing, writes data in one write (the client
// splits it into messages as needed), and closes it.
func (c *Client) WriteFile(path string, data []byte) error {
	f, err := c.Open(path, p9.WriteOnly)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadDir lists directory path.
func (c *Client) ReadDir(path string) ([]p9.Dirent, error) {
	f, err := c.Open(path, p9.ReadOnly)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []p9.Dirent
	var off uint64
	for {
		ents, err := f.f.Readdir(off, 64<<10)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, &PathError{"readdir", path, err}
		}
		if len(ents) == 0 {
			return out, nil
		}
		out = append(out, ents...)
		off = ents[len(ents)-1].Offset
	}
}

// A File is an open file of a Client: an io.Reader and io.Writer at a
// running offset, and an io.ReaderAt.
type File struct {
	f    p9.File
	path string
	off  int64
}

func (f *File) Read(p []byte) (int, error) {
	n, err := f.f.ReadAt(p, f.off)
	f.off += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &PathError{"read", f.path, err}
	}
	return n, err
}

// ReadAt reads at off.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &PathError{"read", f.path, err}
	}
	return n, err
}

func (f *File) Write(p []byte) (int, error) {
	n, err := f.f.WriteAt(p, f.off)
	f.off += int64(n)
	if err != nil {
		return n, &PathError{"write", f.path, err}
	}
	if n < len(p) {
		return n, &PathError{"write", f.path, io.ErrShortWrite}
	}
	return n, nil
}

// Close clunks the file; for submit and uploads, that is when the server
// acts on what was written.
func (f *File) Close() error { return f.f.Close() }

// A PathError records an operation of a Client that failed, the path and
// the error (a linux.Errno for errors from the server).
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// IsErrno reports whether err is the server's errno want.
func IsErrno(err error, want linux.Errno) bool {
	var e linux.Errno
	return errors.As(err, &e) && e == want
}

// negotiate sends a Tversion of 9P2000.L asking for msize and returns the
// msize the server granted.
func negotiate(nc net.Conn, msize uint32) (uint32, error) {
	const version = "9P2000.L"
	m := binary.LittleEndian.AppendUint32(nil, uint32(4+1+2+4+2+len(version)))
	m = append(m, msgTversion)
	m = binary.LittleEndian.AppendUint16(m, 0xffff) // NOTAG
	m = binary.LittleEndian.AppendUint32(m, msize)
	m = binary.LittleEndian.AppendUint16(m, uint16(len(version)))
	m = append(m, version...)
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	defer nc.SetDeadline(time.Time{})
	if _, err := nc.Write(m); err != nil {
		return 0, err
	}
	var hdr [7]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		return 0, err
	}
	size := binary.LittleEndian.Uint32(hdr[:4])
	if hdr[4] == msgRlerror && size == 7+4 {
		var code [4]byte
		if _, err := io.ReadFull(nc, code[:]); err != nil {
			return 0, err
		}
		if e := linux.Errno(binary.LittleEndian.Uint32(code[:])); e != linux.EACCES {
			return 0, fmt.Errorf("Tversion refused: %w", e)
		}
		return 0, errPlainRefused
	}
	if size < 7+4+2 || size > 1<<16 {
		return 0, fmt.Errorf("bad Rversion of %d bytes", size)
	}
	body := make([]byte, size-7)
	if _, err := io.ReadFull(nc, body); err != nil {
		return 0, err
	}
	if hdr[4] != msgTversion+1 {
		return 0, fmt.Errorf("Tversion answered with message type %d", hdr[4])
	}
	granted := binary.LittleEndian.Uint32(body)
	if granted < 8192 || granted > msize {
		return 0, fmt.Errorf("server granted an msize of %d", granted)
	}
	return granted, nil
}
