package fs

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/hugelgupf/p9/linux"
)

// 9P message types the transport looks at (9P2000.L numbering).
const (
	msgRlerror   = 7
	msgTrename   = 20
	msgTlink     = 70
	msgTrenameat = 74
	msgTversion  = 100
	msgTauth     = 102
	msgTflush    = 108
)

// maxMessage bounds a message the transport discards by itself; the p9
// server refuses anything longer anyway.
const maxMessage = 4 << 20

// A conn is one client connection as the 9P server sees it. It answers a few
// requests itself before they reach the server:
//
//   - Tauth gets ENOENT, the answer of a server without authentication,
//     which every client (diod's included) takes as "attach without afid";
//     the p9 package would answer ENOSYS, which some clients treat as fatal.
//   - Trename, Trenameat and Tlink get EPERM: the tree has no renames, and
//     the p9 server would take a global lock for them that a blocked read
//     (a graph's wait file) holds off indefinitely.
//
// A Tflush interrupts the blocking reads of the connection (see waiters),
// so that an interrupted client is not kept waiting for a graph.
type conn struct {
	net.Conn
	ident string // who is at the other end (see identify)
	// forwarded: the connection is another scheduler's, carrying ident's
	// requests for the sessions of this one (see Peers). It sees only
	// this scheduler's sessions, so that nothing is forwarded twice.
	forwarded bool
	// peers holds the connection's own forwarded clients to the other
	// schedulers, by name, made as needed and closed with it.
	peersMu sync.Mutex
	peers   map[string]*Client

	ctx    context.Context // done when the connection or the server ends
	cancel context.CancelFunc

	// Read side, used by one goroutine at a time (the server's receiver).
	hdr     [7]byte
	hdrOff  int    // header bytes already handed to the server
	hdrLen  int    // header bytes buffered
	pending uint32 // body bytes of the current message still to pass on

	// Write side: wmu is held from the first byte of a server message to
	// its last, so that replies made here never interleave with it.
	wmu   sync.Mutex
	wleft int

	flushMu sync.Mutex
	flushed chan struct{} // closed and replaced at every Tflush

	fids atomic.Int64 // files (fids) open on the connection: see MaxFids

	budget   *msizeBudget  // shares out the server's buffers (nil: no bound)
	msize    atomic.Uint32 // granted at the connection's Tversion
	extra    []byte        // a rewritten message body, handed on after hdr
	extraOff int
}

// MaxFids bounds the fids one connection holds at once: a fid costs the
// server a kilobyte or so, and a client that walks without clunking must
// not exhaust its memory. A walk beyond it fails with EMFILE. The kernel's
// 9P client holds a fid per cached dentry and open file, far fewer.
const MaxFids = 1 << 16

// fidLimit is MaxFids, lowered by tests.
var fidLimit int64 = MaxFids

func newConn(parent context.Context, c net.Conn, ident string, budget *msizeBudget) *conn {
	ctx, cancel := context.WithCancel(parent)
	return &conn{Conn: c, ident: ident, ctx: ctx, cancel: cancel, flushed: make(chan struct{}), budget: budget}
}

// Read hands the server the connection's requests, minus those answered here.
func (c *conn) Read(p []byte) (int, error) {
	for {
		if c.hdrOff < c.hdrLen {
			n := copy(p, c.hdr[c.hdrOff:c.hdrLen])
			c.hdrOff += n
			return n, nil
		}
		if c.extraOff < len(c.extra) {
			n := copy(p, c.extra[c.extraOff:])
			c.extraOff += n
			return n, nil
		}
		if c.pending > 0 {
			if uint32(len(p)) > c.pending {
				p = p[:c.pending]
			}
			n, err := c.Conn.Read(p)
			c.pending -= uint32(n)
			return n, err
		}
		if _, err := io.ReadFull(c.Conn, c.hdr[:]); err != nil {
			c.cancel()
			return 0, err
		}
		size := binary.LittleEndian.Uint32(c.hdr[0:4])
		typ := c.hdr[4]
		tag := binary.LittleEndian.Uint16(c.hdr[5:7])
		c.hdrOff, c.hdrLen, c.pending = 0, len(c.hdr), 0
		if size < uint32(len(c.hdr)) || size > maxMessage {
			// Malformed: let the server see it and drop the connection.
			return c.Read(p)
		}
		body := size - uint32(len(c.hdr))
		var answer linux.Errno
		switch typ {
		case msgTauth:
			answer = linux.ENOENT
		case msgTrename, msgTrenameat, msgTlink:
			answer = linux.EPERM
		case msgTflush:
			c.interrupt()
		case msgTversion:
			// The msize is granted here, from the server's budget.
			if body > 1<<16 {
				answer = linux.EINVAL
				break
			}
			c.extra, c.extraOff = make([]byte, body), 0
			if _, err := io.ReadFull(c.Conn, c.extra); err != nil {
				c.cancel()
				return 0, err
			}
			c.rewriteVersion(c.extra)
			continue
		}
		if answer == 0 {
			c.pending = body
			continue
		}
		c.hdrLen = 0
		if _, err := io.CopyN(io.Discard, c.Conn, int64(body)); err != nil {
			c.cancel()
			return 0, err
		}
		if err := c.reply(tag, answer); err != nil {
			c.cancel()
			return 0, err
		}
	}
}

// reply sends Rlerror(errno) for tag.
func (c *conn) reply(tag uint16, errno linux.Errno) error {
	var m [11]byte
	binary.LittleEndian.PutUint32(m[0:4], uint32(len(m)))
	m[4] = msgRlerror
	binary.LittleEndian.PutUint16(m[5:7], tag)
	binary.LittleEndian.PutUint32(m[7:11], uint32(errno))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.Conn.Write(m[:])
	return err
}

// Write passes the server's replies on. The server writes one message as
// a few Writes (header, fixed part, payload), the first holding the header.
func (c *conn) Write(p []byte) (int, error) {
	if c.wleft == 0 {
		c.wmu.Lock()
		if len(p) < 4 {
			defer c.wmu.Unlock()
			return c.Conn.Write(p)
		}
		c.wleft = int(binary.LittleEndian.Uint32(p[0:4]))
	}
	n, err := c.Conn.Write(p)
	c.wleft -= n
	if c.wleft <= 0 || err != nil {
		c.wleft = 0
		c.wmu.Unlock()
	}
	return n, err
}

// Close closes the connection and ends its blocked reads.
func (c *conn) Close() error {
	c.cancel()
	return c.Conn.Close()
}

// releaseBudget gives back the connection's msize grant, once it ended.
func (c *conn) releaseBudget() {
	if m := c.msize.Swap(0); c.budget != nil && m != 0 {
		c.budget.release(m)
	}
}

// interrupt ends the blocking reads in progress on the connection with
// EINTR. A Tflush names a tag, and which read that tag belongs to is not
// known below the p9 server, so every blocked read of the connection ends,
// as they would at a signal; the client reads again if it still wants to.
func (c *conn) interrupt() {
	c.flushMu.Lock()
	close(c.flushed)
	c.flushed = make(chan struct{})
	c.flushMu.Unlock()
}

// flushes returns a channel closed at the next Tflush.
func (c *conn) flushes() <-chan struct{} {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	return c.flushed
}
