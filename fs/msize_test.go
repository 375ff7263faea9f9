package fs

import (
	"bytes"
	"testing"
)

func TestMsizeBudget(t *testing.T) {
	b := &msizeBudget{limit: 64 << 20}
	// Four connections at 4 MiB fill the budget (4 buffers each).
	var grants []uint32
	for range 4 {
		grants = append(grants, b.grant(maxMsize, 0))
	}
	for _, g := range grants {
		if g != maxMsize {
			t.Fatalf("grants %v within the budget, want 4 MiB each", grants)
		}
	}
	// The next get the floor.
	if g := b.grant(maxMsize, 0); g != minMsize {
		t.Errorf("grant past the budget: %d, want %d", g, minMsize)
	}
	// A connection asking again keeps its size, never more.
	if g := b.grant(maxMsize, maxMsize); g != maxMsize {
		t.Errorf("a connection asking again at its size got %d", g)
	}
	if g := b.grant(maxMsize, minMsize); g != minMsize {
		t.Errorf("a connection asking again for more got %d", g)
	}
	// A client asking for little gets what it asked.
	if g := b.grant(8192, 0); g != 8192 {
		t.Errorf("a client asking for 8 KiB got %d", g)
	}
	b.release(8192)
	b.release(minMsize)
	for _, g := range grants {
		b.release(g)
	}
	if b.used != 0 {
		t.Errorf("%d bytes counted after every connection ended", b.used)
	}
}

// TestConnMemory serves with room for two full-size connections: the
// third is granted less, the clients of all three read a tensor whole at
// their sizes, and the budget is whole again once they close.
func TestConnMemory(t *testing.T) {
	ts := startServer(t, Config{ConnMemory: 2 * buffersPerConn * maxMsize})
	var clients []*Client
	for range 3 {
		c, err := Dial(ts.sock)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	s := clone(t, clients[0])
	submit(t, clients[0], s, "x = arange(2000000, chunks=300000)\n")
	waitSucceeded(t, clients[0], s, "last")
	want := read(t, clients[0], s+"/tensors/x/npy")
	for i, c := range clients {
		if got := read(t, c, s+"/tensors/x/npy"); !bytes.Equal([]byte(got), []byte(want)) {
			t.Errorf("client %d read %d bytes, want %d", i, len(got), len(want))
		}
	}
	ts.srv.mu.Lock()
	var sizes []uint32
	for c := range ts.srv.conns {
		sizes = append(sizes, c.msize.Load())
	}
	ts.srv.mu.Unlock()
	small := 0
	for _, m := range sizes {
		if m < maxMsize {
			small++
		}
	}
	if small != 1 {
		t.Errorf("msizes %v: want one connection granted less than %d", sizes, maxMsize)
	}
	for _, c := range clients {
		c.Close()
	}
	waitFor(t, func() bool {
		ts.srv.msizes.mu.Lock()
		defer ts.srv.msizes.mu.Unlock()
		return ts.srv.msizes.used == 0
	}, "the budget to be whole again")
}
