package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"sync"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// Pool keeps idle fetch connections to workers' chunk services, so that
// moving many small chunks does not pay a TCP handshake each.
type Pool struct {
	limit int64 // largest chunk accepted
	conns *idleConns
}

type dataConn struct {
	net.Conn
	br *bufio.Reader
}

// maxIdle bounds the idle connections kept to one address.
const maxIdle = 4

func NewPool(limit int64, key []byte) *Pool {
	return &Pool{limit: limit, conns: newIdleConns(ConnFetch, key, 0)}
}

func (p *Pool) get(ctx context.Context, addr string) (*dataConn, error) {
	c, _, err := p.conns.get(ctx, addr)
	return c, err
}

func (p *Pool) put(addr string, c *dataConn) { p.conns.put(addr, c) }

// idleConns keeps connections of one kind (ConnFetch, ConnLocate) whose
// last exchange ended cleanly, by address, for the next request: up to
// maxIdle an address and, when total is not 0, total in all (those to
// workers gone are dropped only when tried again).
type idleConns struct {
	kind  byte
	key   []byte // the cluster key
	total int

	mu     sync.Mutex
	idle   map[string][]*dataConn
	count  int
	closed bool
}

func newIdleConns(kind byte, key []byte, total int) *idleConns {
	return &idleConns{kind: kind, key: key, total: total, idle: make(map[string][]*dataConn)}
}

// get returns an idle connection to addr, or a new one; reused says which.
func (ic *idleConns) get(ctx context.Context, addr string) (c *dataConn, reused bool, err error) {
	ic.mu.Lock()
	if cs := ic.idle[addr]; len(cs) > 0 {
		c = cs[len(cs)-1]
		ic.idle[addr] = cs[:len(cs)-1]
		ic.count--
		ic.mu.Unlock()
		return c, true, nil
	}
	ic.mu.Unlock()
	nc, err := Dial(ctx, addr, ic.kind, ic.key)
	if err != nil {
		return nil, false, err
	}
	return &dataConn{Conn: nc, br: bufio.NewReader(nc)}, false, nil
}

func (ic *idleConns) put(addr string, c *dataConn) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.closed || len(ic.idle[addr]) >= maxIdle || ic.total > 0 && ic.count >= ic.total {
		c.Close()
		return
	}
	ic.idle[addr] = append(ic.idle[addr], c)
	ic.count++
}

// idleTo is the number of idle connections kept to addr.
func (ic *idleConns) idleTo(addr string) int {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return len(ic.idle[addr])
}

// close closes the idle connections; later puts close theirs.
func (ic *idleConns) close() {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	ic.closed = true
	for _, cs := range ic.idle {
		for _, c := range cs {
			c.Close()
		}
	}
	ic.idle, ic.count = nil, 0
}

// Fetch reads chunk id from the worker serving at addr. A connection that
// answered cleanly, even with an error reply, goes back to the pool.
func (p *Pool) Fetch(ctx context.Context, addr string, id uint64) (*tensor.Array, error) {
	c, err := p.get(ctx, addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	a, err := p.exchange(c, id)
	if !stop() {
		// ctx ended during the exchange and closed the connection.
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		if _, remote := err.(remoteError); !remote {
			c.Close()
			return nil, err
		}
	}
	p.put(addr, c)
	return a, err
}

// FetchRange reads the part r of chunk id (see chunk.Range) from the
// worker serving at addr: only its bytes travel.
func (p *Pool) FetchRange(ctx context.Context, addr string, id uint64, r chunk.Range) (*tensor.Array, error) {
	c, err := p.get(ctx, addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	req := make([]byte, 0, 32)
	req = binary.BigEndian.AppendUint64(req, RangeRequest)
	req = binary.BigEndian.AppendUint64(req, id)
	req = binary.BigEndian.AppendUint64(req, uint64(r.Off))
	req = binary.BigEndian.AppendUint64(req, uint64(r.Len()))
	var a *tensor.Array
	if _, err = c.Write(req); err == nil {
		a, err = ReadChunk(c.br, p.limit)
	}
	if !stop() {
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		if _, remote := err.(remoteError); !remote {
			c.Close()
			return nil, err
		}
		p.put(addr, c)
		return nil, err
	}
	p.put(addr, c)
	if a.Len() != r.Len() || a.DType != r.DType {
		return nil, fmt.Errorf("asked %d elements of %v of chunk %d, got %d of %v", r.Len(), r.DType, id, a.Len(), a.DType)
	}
	a.Shape = slices.Clone(r.Shape)
	return a, nil
}

// RangeRequest, in place of a chunk ID on a fetch connection (no chunk has
// ID 0), asks for part of a chunk: the ID, the offset and the number of
// elements follow, 8 bytes each, big-endian. The answer is a chunk of
// that many elements, one-dimensional.
const RangeRequest = 0

func (p *Pool) exchange(c *dataConn, id uint64) (*tensor.Array, error) {
	if _, err := c.Write(putID(id)); err != nil {
		return nil, err
	}
	return ReadChunk(c.br, p.limit)
}

// FetchAll reads chunks ids from the worker serving at addr into out, in
// order, in one exchange: the IDs go out in one write, and the worker
// answers them one after the other, flushing once it has answered all it
// read. Small chunks read from one peer then cost one round trip, not one
// each. On error, out holds the chunks read before it.
func (p *Pool) FetchAll(ctx context.Context, addr string, ids []uint64, out []*tensor.Array) error {
	c, err := p.get(ctx, addr)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	req := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		req = binary.BigEndian.AppendUint64(req, id)
	}
	_, err = c.Write(req)
	i := 0
	for ; err == nil && i < len(ids); i++ {
		out[i], err = ReadChunk(c.br, p.limit)
	}
	if !stop() {
		if err == nil {
			err = ctx.Err()
		}
		return err
	}
	if err != nil {
		// An error reply leaves the connection in step only once every
		// reply has been read.
		c.Close()
		return err
	}
	p.put(addr, c)
	return nil
}

// Close closes the idle connections; later puts close theirs.
func (p *Pool) Close() { p.conns.close() }
