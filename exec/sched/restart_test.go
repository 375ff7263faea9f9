package sched

import (
	"bytes"
	"context"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/worker"
)

// TestRestartTakesBackExpected takes a scheduler away without a word, as
// a crash would, and starts another at the same gossip address told (as
// by a journal) of the chunks the first kept: the workers, which kept
// them as orphans, join that address again, connect, offer them, and the
// new scheduler takes every one back, bytes unchanged, before
// WaitExpected returns.
func TestRestartTakesBackExpected(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2, OrphanGrace: time.Minute},
		worker.Config{Name: "w2", Slots: 2, OrphanGrace: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ks := keepAndUpload(ctx, t, tc.s, 7_000)
	expect := append(ks.kept, core.Location{ID: uploadID, NBytes: 8000})

	for i := range expect {
		expect[i].Worker = tc.s.Where(expect[i].ID)
	}
	gossip := tc.s.GossipAddr()
	tc.s.Close()
	s2, err := New(ctx, Config{Fast: true, Gossip: gossip, Expect: expect, ExpectUploads: []uint64{uploadID}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() }) // before the cluster's: cleanups run last first
	adopted, missing := s2.WaitExpected(ctx, 20*time.Second)
	if missing != 0 || adopted != len(ks.kept)+2 {
		t.Fatalf("took back %d chunks, %d missing; want the %d kept and the upload's two copies", adopted, missing, len(ks.kept))
	}
	got, release, err := s2.Fetch(ctx, expect[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !bytes.Equal(got.Data, ks.first) {
		t.Error("a chunk taken back does not hold its bytes")
	}
}
