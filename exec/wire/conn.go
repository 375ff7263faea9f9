package wire

import (
	"errors"
	"net"
	"sync"
	"time"
)

// Conn is one end of a control connection. send queues messages; a
// goroutine of the connection's own encodes and writes them, so that the
// messages queued while a write is under way go out together in the next
// frame: under load many reports and submissions share one system call,
// and the sender never waits on the network or on encoding. A task's
// "started" report queued together with the report of its end is dropped:
// the op went by too fast for anyone to see it run. send is safe for
// concurrent use.
//
// sendSoon queues messages that may wait up to soonWait for a frame to
// share, rather than cost a system call on each side of their own: a
// unit's "started" report, which then most often goes out with the reports
// of its ops or is dropped with the end of the op; the reports of ops that
// others wait for, and of a unit that yields its slot, which then most
// often go out with the end of the unit; a scheduler's frees. On loopback
// the writer of a frame pays the receiver's TCP path too, so a frame saved
// is some tens of microseconds of CPU. Messages go out in the order queued,
// whichever way: a report never overtakes one queued before it.
type Conn struct {
	c    net.Conn
	wake chan struct{} // a message waits
	done chan struct{} // closed by close
	once sync.Once

	mu     sync.Mutex
	pend   []*Msg      // in the order queued
	urgent bool        // pend holds messages of send or sendAll
	timer  *time.Timer // wakes the writer for the messages of sendSoon
	armed  bool        // the timer is set
	err    error       // the first write error
}

// soonWait bounds how long a message queued by sendSoon waits for a frame.
const soonWait = time.Millisecond

var ErrClosed = errors.New("control connection closed")

func NewConn(c net.Conn) *Conn {
	cc := &Conn{c: c, wake: make(chan struct{}, 1), done: make(chan struct{})}
	cc.timer = time.AfterFunc(time.Hour, cc.due)
	cc.timer.Stop()
	go cc.writer()
	return cc
}

// due wakes the writer for the messages of sendSoon.
func (cc *Conn) due() {
	cc.mu.Lock()
	cc.armed = false
	cc.mu.Unlock()
	cc.poke()
}

// poke wakes the writer.
func (cc *Conn) poke() {
	select {
	case cc.wake <- struct{}{}:
	default:
	}
}

func (cc *Conn) Send(m *Msg) error { return cc.SendAll([]*Msg{m}) }

// SendAll queues ms for writing, in order. It fails if the connection
// failed or closed before; a failure later closes the connection, which its
// reader sees. The messages must not be modified afterwards.
func (cc *Conn) SendAll(ms []*Msg) error {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return cc.err
	}
	cc.pend = append(cc.pend, ms...)
	cc.urgent = true
	cc.mu.Unlock()
	cc.poke()
	return nil
}

// SendSoon queues ms to go out in the next frame written, at the latest
// soonWait from now. Messages go out in the order queued, by send or
// sendSoon alike. It fails like sendAll.
func (cc *Conn) SendSoon(ms ...*Msg) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.err != nil {
		return cc.err
	}
	cc.pend = append(cc.pend, ms...)
	if !cc.armed {
		cc.armed = true
		cc.timer.Reset(soonWait)
	}
	return nil
}

// Flush writes what sendSoon queued now, without waiting.
func (cc *Conn) Flush() {
	cc.mu.Lock()
	due := len(cc.pend) > 0
	if due && cc.armed {
		cc.armed = false
		cc.timer.Stop()
	}
	cc.mu.Unlock()
	if due {
		cc.poke()
	}
}

// writer writes what is queued until the connection fails or closes.
func (cc *Conn) writer() {
	enc := NewEncoder()
	var batch []*Msg
	var drop dropSet
	for {
		select {
		case <-cc.wake:
		case <-cc.done:
			return
		}
		cc.mu.Lock()
		if !cc.urgent && cc.armed {
			cc.mu.Unlock()
			continue // only messages of sendSoon, not yet due
		}
		batch, cc.pend = cc.pend, batch[:0]
		cc.urgent = false
		if cc.armed {
			cc.armed = false
			cc.timer.Stop()
		}
		cc.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		frame, err := enc.frame(drop.filter(batch))
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

// A dropSet finds the "started" reports a batch may drop: those of the
// tasks whose end it reports too. Its map is reused from batch to batch.
type dropSet struct {
	started map[RunKey]bool // the tasks started in the batch; true: ended too
	kept    []*Msg
}

// filter returns batch without the "started" reports of the tasks whose
// end it reports too; the result is valid until the next call.
func (d *dropSet) filter(batch []*Msg) []*Msg {
	n := 0
	for _, m := range batch {
		if m.Kind == MsgStarted {
			if d.started == nil {
				d.started = make(map[RunKey]bool)
			}
			d.started[RunKey{m.Job, m.Key, m.Attempt}] = false
			n++
		}
	}
	if n == 0 {
		return batch
	}
	defer clear(d.started)
	ended := 0
	for _, m := range batch {
		if m.Kind == MsgDone || m.Kind == MsgFailed || m.Kind == MsgCancelled {
			k := RunKey{m.Job, m.Key, m.Attempt}
			if e, ok := d.started[k]; ok && !e {
				d.started[k] = true
				ended++
			}
		}
	}
	if ended == 0 {
		return batch
	}
	kept := d.kept[:cap(d.kept)]
	clear(kept) // what the last batch left
	kept = kept[:0]
	for _, m := range batch {
		if m.Kind != MsgStarted || !d.started[RunKey{m.Job, m.Key, m.Attempt}] {
			kept = append(kept, m)
		}
	}
	d.kept = kept
	return kept
}

func (cc *Conn) fail(err error) {
	cc.mu.Lock()
	if cc.err == nil {
		cc.err = err
	}
	cc.mu.Unlock()
}

// Close closes the connection and stops its writer; what was not written
// yet is dropped.
func (cc *Conn) Close() {
	cc.once.Do(func() {
		cc.fail(ErrClosed)
		cc.mu.Lock()
		cc.timer.Stop()
		cc.mu.Unlock()
		close(cc.done)
		cc.c.Close()
	})
}
