package fs

import (
	"encoding/binary"
	"sync"
)

// The p9 server spends buffers of the message size (msize) on every
// connection: a read buffer per request in flight, a buffer of zeros to
// clear them, the decoding of large writes. At the 4 MiB our client asks
// for, forty readers held a gigabyte of the server's heap. An msizeBudget
// shares out what those buffers may take together: a connection's
// Tversion is granted the msize it asks for while the budget has room for
// it, a smaller one when not, and never less than minMsize, so that every
// connection is served, slower.
type msizeBudget struct {
	mu    sync.Mutex
	limit int64 // bytes for all connections' buffers; 0 for no bound
	used  int64
}

const (
	maxMsize = 4 << 20  // the most the p9 server grants
	minMsize = 64 << 10 // the least a connection is granted
	// buffersPerConn is what a connection's buffers cost, in msizes.
	buffersPerConn = 4
)

// grant returns the msize of a connection asking for req whose earlier
// grant (0 for none) was prev, and counts it. A connection's msize only
// shrinks: a client that asks again at what it was granted (our own, which
// asks first and then speaks at the size granted) gets it again, whatever
// others took meanwhile.
func (b *msizeBudget) grant(req, prev uint32) uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= int64(prev) * buffersPerConn
	m := min(req, maxMsize)
	if prev != 0 {
		m = min(m, prev)
	} else if b.limit > 0 {
		for m > minMsize && b.used+int64(m)*buffersPerConn > b.limit {
			m /= 2
		}
		if m < minMsize && req >= minMsize {
			m = minMsize
		}
	}
	b.used += int64(m) * buffersPerConn
	return m
}

// release gives back the grant of a connection that ended.
func (b *msizeBudget) release(m uint32) {
	b.mu.Lock()
	b.used -= int64(m) * buffersPerConn
	b.mu.Unlock()
}

// rewriteVersion grants the msize of a Tversion body (msize[4]
// version[s]) in place.
func (c *conn) rewriteVersion(body []byte) {
	if len(body) < 4 || c.budget == nil {
		return
	}
	m := c.budget.grant(binary.LittleEndian.Uint32(body), c.msize.Load())
	c.msize.Store(m)
	binary.LittleEndian.PutUint32(body, m)
}
