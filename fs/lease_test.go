package fs

import (
	"io"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"
)

// TestReaderHoldsLease opens a stream on tensor x, reads its first slab,
// rebinds x with a later graph, and reads the rest: the stream reads the x
// it opened, in full, and its chunks go when the stream closes.
func TestReaderHoldsLease(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	const n, chunk = 400000, 50000 // 8 slabs of 400 KB
	submit(t, c, s, "x = arange(400000, chunks=50000)\n")
	waitSucceeded(t, c, s, "last")
	f, err := c.Open(s+"/tensors/x/data", p9.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, n*8)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, chunk*8), data[:chunk*8]); err != nil {
		t.Fatalf("first slab: %v", err)
	}
	submit(t, c, s, "x = zeros(400000, chunks=50000)\n")
	waitSucceeded(t, c, s, "last")
	if _, err := io.ReadFull(io.NewSectionReader(f, chunk*8, int64(n-chunk)*8), data[chunk*8:]); err != nil {
		t.Fatalf("after x was rebound: %v", err)
	}
	for i, v := range int64s(data) {
		if v != int64(i) {
			t.Fatalf("element %d reads %d: not the x the stream opened", i, v)
		}
	}
	// Held: the old x's 8 chunks and the new x's.
	if held := ts.run.Len(); held != 16 {
		t.Errorf("while the stream is open the runner keeps %d chunks, want 16", held)
	}
	f.Close()
	// Clunks are answered before they are carried out: wait for it.
	waitFor(t, func() bool { return ts.run.Len() == 8 }, "the old x's chunks freed when the stream closed")
	// The new x reads as zeros.
	for i, v := range int64s([]byte(read(t, c, s+"/tensors/x/data"))) {
		if v != 0 {
			t.Fatalf("new x element %d is %d", i, v)
		}
	}
}

// waitFor polls cond for up to 5 seconds, failing the test with what if it
// never holds.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
	}
}
