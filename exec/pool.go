package exec

import (
	"bufio"
	"context"
	"net"
	"sync"

	"marsfs/tensor"
)

// dataPool keeps idle fetch connections to workers' chunk services, so that
// moving many small chunks does not pay a TCP handshake each.
type dataPool struct {
	limit int64  // largest chunk accepted
	key   []byte // the cluster key

	mu     sync.Mutex
	idle   map[string][]*dataConn
	closed bool
}

type dataConn struct {
	net.Conn
	br *bufio.Reader
}

// maxIdle bounds the idle connections kept to one address.
const maxIdle = 4

func newDataPool(limit int64, key []byte) *dataPool {
	return &dataPool{limit: limit, key: key, idle: make(map[string][]*dataConn)}
}

func (p *dataPool) get(ctx context.Context, addr string) (*dataConn, error) {
	p.mu.Lock()
	if cs := p.idle[addr]; len(cs) > 0 {
		c := cs[len(cs)-1]
		p.idle[addr] = cs[:len(cs)-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := dialData(ctx, addr, connFetch, p.key)
	if err != nil {
		return nil, err
	}
	return &dataConn{Conn: c, br: bufio.NewReader(c)}, nil
}

func (p *dataPool) put(addr string, c *dataConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle[addr]) >= maxIdle {
		c.Close()
		return
	}
	p.idle[addr] = append(p.idle[addr], c)
}

// fetch reads chunk id from the worker serving at addr. A connection that
// answered cleanly, even with an error reply, goes back to the pool.
func (p *dataPool) fetch(ctx context.Context, addr string, id uint64) (*tensor.Array, error) {
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

func (p *dataPool) exchange(c *dataConn, id uint64) (*tensor.Array, error) {
	if _, err := c.Write(putID(id)); err != nil {
		return nil, err
	}
	return readChunk(c.br, p.limit)
}

// close closes the idle connections; later puts close theirs.
func (p *dataPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, cs := range p.idle {
		for _, c := range cs {
			c.Close()
		}
	}
	p.idle = nil
}
