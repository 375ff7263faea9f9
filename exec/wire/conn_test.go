package wire

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestConnOrder queues reports now and soon, alternately: they arrive
// in the order queued, a soon one alone within soonWait (and well before
// a second), and a started report queued with its op's end is dropped.
func TestConnOrder(t *testing.T) {
	a, b := net.Pipe()
	cc := NewConn(a)
	defer cc.Close()
	got := make(chan Msg, 16)
	go func() {
		dec := NewDecoder(bufio.NewReader(b))
		for {
			var m Msg
			if dec.Next(&m) != nil {
				close(got)
				return
			}
			got <- m
		}
	}()
	report := func(kind uint8, key int) *Msg { return &Msg{Kind: kind, Job: 1, Key: key, Attempt: 1} }
	recv := func() Msg {
		t.Helper()
		select {
		case m := <-got:
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("no message")
		}
		return Msg{}
	}

	begin := time.Now()
	cc.SendSoon(report(MsgDone, 1))
	if m := recv(); m.Key != 1 {
		t.Fatalf("got %+v, want the report of op 1", m)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("a report queued soon took %v", d)
	}

	// Whatever frames these go in, the order holds.
	cc.SendAll([]*Msg{report(MsgDone, 2)})
	cc.SendSoon(report(MsgStarted, 3), report(MsgDone, 4))
	cc.SendAll([]*Msg{report(MsgDone, 5)})
	cc.SendSoon(report(MsgDone, 3), report(MsgStarted, 6))
	cc.SendAll([]*Msg{report(MsgDone, 7)})
	var keys []int
	for len(keys) < 6 {
		m := recv()
		if m.Kind == MsgStarted && m.Key == 3 {
			// Only when it went in a frame before op 3's end.
			continue
		}
		keys = append(keys, m.Key)
	}
	want := []int{2, 4, 5, 3, 6, 7}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("reports arrived in order %v, want %v", keys, want)
		}
	}
}
