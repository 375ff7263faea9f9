package exec

import (
	"bytes"
	"encoding/gob"
	"errors"
	"net"
	"sync"
)

// ctlConn is one end of a control connection. Messages are gob-encoded
// into a buffer and written by a goroutine of the connection's own, so
// that the messages sent while a write is under way go out together in
// the next: under load many reports and submissions share one system call.
// send is safe for concurrent use.
type ctlConn struct {
	c    net.Conn
	wake chan struct{} // a message waits
	done chan struct{} // closed by close
	once sync.Once

	mu   sync.Mutex
	enc  *gob.Encoder // writes into pend
	pend *bytes.Buffer
	err  error // the first write error
}

var errCtlClosed = errors.New("control connection closed")

func newCtlConn(c net.Conn) *ctlConn {
	cc := &ctlConn{c: c, wake: make(chan struct{}, 1), done: make(chan struct{}), pend: new(bytes.Buffer)}
	cc.enc = gob.NewEncoder(pendWriter{cc})
	go cc.writer()
	return cc
}

// pendWriter appends to the connection's pending buffer; cc.mu is held.
type pendWriter struct{ cc *ctlConn }

func (w pendWriter) Write(p []byte) (int, error) { return w.cc.pend.Write(p) }

func (cc *ctlConn) send(m *ctlMsg) error { return cc.sendAll([]*ctlMsg{m}) }

// sendAll queues ms for writing, in order. It fails if the connection
// failed or closed before; a failure later closes the connection, which its
// reader sees.
func (cc *ctlConn) sendAll(ms []*ctlMsg) error {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return cc.err
	}
	for _, m := range ms {
		if err := cc.enc.Encode(m); err != nil {
			cc.mu.Unlock()
			return err
		}
	}
	cc.mu.Unlock()
	select {
	case cc.wake <- struct{}{}:
	default:
	}
	return nil
}

// writer writes what is pending until the connection fails or closes.
func (cc *ctlConn) writer() {
	spare := new(bytes.Buffer)
	for {
		select {
		case <-cc.wake:
		case <-cc.done:
			return
		}
		cc.mu.Lock()
		out := cc.pend
		cc.pend, spare = spare, nil
		cc.mu.Unlock()
		_, err := cc.c.Write(out.Bytes())
		out.Reset()
		spare = out
		if err != nil {
			cc.fail(err)
			cc.c.Close()
			return
		}
	}
}

func (cc *ctlConn) fail(err error) {
	cc.mu.Lock()
	if cc.err == nil {
		cc.err = err
	}
	cc.mu.Unlock()
}

// close closes the connection and stops its writer; what was not written
// yet is dropped.
func (cc *ctlConn) close() {
	cc.once.Do(func() {
		cc.fail(errCtlClosed)
		close(cc.done)
		cc.c.Close()
	})
}
