package exec

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestCtlConnOrder queues reports now and soon, alternately: they arrive
// in the order queued, a soon one alone within soonWait (and well before
// a second), and a started report queued with its op's end is dropped.
func TestCtlConnOrder(t *testing.T) {
	a, b := net.Pipe()
	cc := newCtlConn(a)
	defer cc.close()
	got := make(chan ctlMsg, 16)
	go func() {
		dec := newCtlDecoder(bufio.NewReader(b))
		for {
			var m ctlMsg
			if dec.next(&m) != nil {
				close(got)
				return
			}
			got <- m
		}
	}()
	report := func(kind uint8, key int) *ctlMsg { return &ctlMsg{Kind: kind, Job: 1, Key: key, Attempt: 1} }
	recv := func() ctlMsg {
		t.Helper()
		select {
		case m := <-got:
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("no message")
		}
		return ctlMsg{}
	}

	begin := time.Now()
	cc.sendSoon(report(msgDone, 1))
	if m := recv(); m.Key != 1 {
		t.Fatalf("got %+v, want the report of op 1", m)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("a report queued soon took %v", d)
	}

	// Whatever frames these go in, the order holds.
	cc.sendAll([]*ctlMsg{report(msgDone, 2)})
	cc.sendSoon(report(msgStarted, 3), report(msgDone, 4))
	cc.sendAll([]*ctlMsg{report(msgDone, 5)})
	cc.sendSoon(report(msgDone, 3), report(msgStarted, 6))
	cc.sendAll([]*ctlMsg{report(msgDone, 7)})
	var keys []int
	for len(keys) < 6 {
		m := recv()
		if m.Kind == msgStarted && m.Key == 3 {
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
