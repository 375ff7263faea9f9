package sched

import (
	"net"
	"sync"
	"testing"
)

// mutePeer is a peer worker that accepts connections and never answers:
// fetches from it block until it closes.
type mutePeer struct {
	ln      net.Listener
	done    chan struct{}
	mu      sync.Mutex
	conns   []net.Conn
	changed chan struct{} // closed at the next accept (Changed), when taken
}

func newMutePeer(t *testing.T) *mutePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &mutePeer{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			if p.changed != nil {
				close(p.changed)
				p.changed = nil
			}
			p.mu.Unlock()
		}
	}()
	return p
}

// Addr is the address fetches are sent to.
func (p *mutePeer) Addr() string { return p.ln.Addr().String() }

// Accepted is the number of connections the peer holds open.
func (p *mutePeer) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Changed returns a channel closed at the peer's next accepted
// connection.
func (p *mutePeer) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.changed
}

// Close stops accepting, waits for the accepting goroutine, and drops every
// connection, so blocked fetches fail.
func (p *mutePeer) Close() {
	p.ln.Close()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}
