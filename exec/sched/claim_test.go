package sched

import (
	"bytes"
	"context"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/worker"
)

// TestClaimFromDeadScheduler: two schedulers share two workers; the first
// keeps a graph's chunks and an upload, then goes without a word. The
// workers offer the orphans to the second at once, which refuses them
// (they are not its) but remembers; told then (as by the replica of the
// first's journal) which chunks the first's sessions held, it claims
// every one from the workers, bytes unchanged, and the upload's two
// copies where the journal says they are (a worker keeps an upload
// whichever connection breaks: it is not offered).
func TestClaimFromDeadScheduler(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2, OrphanGrace: time.Minute},
		worker.Config{Name: "w2", Slots: 2, OrphanGrace: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s2, err := New(ctx, Config{Fast: true, Join: []string{tc.s.GossipAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	if err := s2.WaitWorkers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	ks := keepAndUpload(ctx, t, tc.s, 7_000)
	expect := ks.kept
	if !waitChange(tc.s, 10*time.Second, func() bool { return tc.s.Copies() >= 1 }) {
		t.Fatal("the upload has no second copy after 10 s")
	}
	tc.s.mu.Lock()
	var uploads []core.Location
	up, _ := tc.s.dir.Chunk(uploadID)
	for _, w := range up.Workers {
		uploads = append(uploads, core.Location{ID: uploadID, Worker: w, NBytes: up.NBytes})
	}
	tc.s.mu.Unlock()
	tc.s.Close()

	// The offers come on the workers' connections to s2 as theirs to the
	// first break: wait for every one.
	heard := func() int {
		s2.mu.Lock()
		defer s2.mu.Unlock()
		n := 0
		for _, loc := range expect {
			n += len(s2.dir.Offers(loc.ID))
		}
		return n
	}
	if !waitChange(s2, 10*time.Second, func() bool { return heard() == len(expect) }) {
		s2.mu.Lock()
		for _, loc := range expect {
			t.Logf("chunk %d: offered by %v", loc.ID, s2.dir.Offers(loc.ID))
		}
		s2.mu.Unlock()
		t.Fatalf("s2 heard %d offers of the %d", heard(), len(expect))
	}
	adopted, lost := s2.Claim(1, 1, expect, uploads)
	if adopted != len(expect)+1 || lost != 0 {
		t.Fatalf("claimed %d, %d lost; want %d, none lost", adopted, lost, len(expect)+1)
	}
	s2.mu.Lock()
	where, _ := s2.dir.Where(uploadID)
	s2.mu.Unlock()
	if len(where) != 2 || where[0] == where[1] {
		t.Errorf("the upload's copies are on %v", where)
	}
	got, release, err := s2.Fetch(ctx, expect[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !bytes.Equal(got.Data, ks.first) {
		t.Error("a chunk claimed does not hold its bytes")
	}
	gotUp, release2, err := s2.Fetch(ctx, uploadID)
	if err != nil {
		t.Fatal(err)
	}
	defer release2()
	if !bytes.Equal(gotUp.Data, ks.upload.Data) {
		t.Error("the upload claimed does not hold its bytes")
	}
}
