package sched

import (
	"bytes"
	"context"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/worker"
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
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
	g, err := spec.Parse("x = ones((400, 400), chunks=100)\ny = x * 3\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, len(cg.Ops))
	keep := map[uint64]bool{}
	for k := range ids {
		ids[k] = uint64(7_000 + k)
	}
	var expect []core.Location
	for _, k := range cg.Outputs[0].Keys {
		keep[ids[k]] = true
		expect = append(expect, core.Location{ID: ids[k], NBytes: 100 * 100 * 8})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tc.s.Run(ctx, &core.Job{Graph: cg, IDs: ids, Keep: keep}); err != nil {
		t.Fatal(err)
	}
	up := tensor.NewArray(tensor.Float64, []int{1000})
	for i := range up.Float64s() {
		up.Float64s()[i] = float64(i)
	}
	if err := tc.s.Put(ctx, 99_999, up); err != nil {
		t.Fatal(err)
	}
	expect = append(expect, core.Location{ID: 99_999, NBytes: 8000})
	want, release, err := tc.s.Fetch(ctx, expect[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	wantBytes := bytes.Clone(want.Data)
	release()

	for i := range expect {
		expect[i].Worker = tc.s.Where(expect[i].ID)
	}
	gossip := tc.s.GossipAddr()
	tc.s.Close()
	s2, err := New(ctx, Config{Fast: true, Gossip: gossip, Expect: expect, ExpectUploads: []uint64{99_999}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() }) // before the cluster's: cleanups run last first
	adopted, missing := s2.WaitExpected(ctx, 20*time.Second)
	if missing != 0 || adopted != len(keep)+2 {
		t.Fatalf("took back %d chunks, %d missing; want the %d kept and the upload's two copies", adopted, missing, len(keep))
	}
	got, release, err := s2.Fetch(ctx, expect[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !bytes.Equal(got.Data, wantBytes) {
		t.Error("a chunk taken back does not hold its bytes")
	}
}
