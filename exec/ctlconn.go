package exec

import (
	"errors"
	"net"
	"slices"
	"sync"
)

// ctlConn is one end of a control connection. send queues messages; a
// goroutine of the connection's own encodes and writes them, so that the
// messages queued while a write is under way go out together in the next
// frame: under load many reports and submissions share one system call,
// and the sender never waits on the network or on encoding. A task's "started" report
// queued together with the report of its end is dropped: the op went by
// too fast for anyone to see it run. send is safe for concurrent use.
type ctlConn struct {
	c    net.Conn
	wake chan struct{} // a message waits
	done chan struct{} // closed by close
	once sync.Once

	mu   sync.Mutex
	pend []*ctlMsg
	err  error // the first write error
}

var errCtlClosed = errors.New("control connection closed")

func newCtlConn(c net.Conn) *ctlConn {
	cc := &ctlConn{c: c, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go cc.writer()
	return cc
}

func (cc *ctlConn) send(m *ctlMsg) error { return cc.sendAll([]*ctlMsg{m}) }

// sendAll queues ms for writing, in order. It fails if the connection
// failed or closed before; a failure later closes the connection, which its
// reader sees. The messages must not be modified afterwards.
func (cc *ctlConn) sendAll(ms []*ctlMsg) error {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return cc.err
	}
	cc.pend = append(cc.pend, ms...)
	cc.mu.Unlock()
	select {
	case cc.wake <- struct{}{}:
	default:
	}
	return nil
}

// writer writes what is queued until the connection fails or closes.
func (cc *ctlConn) writer() {
	enc := newCtlEncoder()
	var batch []*ctlMsg
	for {
		select {
		case <-cc.wake:
		case <-cc.done:
			return
		}
		cc.mu.Lock()
		batch, cc.pend = cc.pend, batch[:0]
		cc.mu.Unlock()
		frame, err := enc.frame(dropStarted(batch))
		if err == nil {
			_, err = cc.c.Write(frame)
		}
		clear(batch)
		if err != nil {
			cc.fail(err)
			cc.c.Close()
			return
		}
	}
}

// dropStarted removes from batch the "started" reports of the tasks whose
// end it reports too.
func dropStarted(batch []*ctlMsg) []*ctlMsg {
	if !slices.ContainsFunc(batch, func(m *ctlMsg) bool { return m.Kind == msgStarted }) {
		return batch
	}
	var ended map[taskKey]bool
	for _, m := range batch {
		if m.Kind == msgDone || m.Kind == msgFailed || m.Kind == msgCancelled {
			if ended == nil {
				ended = make(map[taskKey]bool)
			}
			ended[taskKey{m.Job, m.Key, m.Attempt}] = true
		}
	}
	if ended == nil {
		return batch
	}
	kept := batch[:0:0]
	for _, m := range batch {
		if m.Kind != msgStarted || !ended[taskKey{m.Job, m.Key, m.Attempt}] {
			kept = append(kept, m)
		}
	}
	return kept
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
