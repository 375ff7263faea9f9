package sched

import (
	"bytes"
	"context"
	"testing"

	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// uploadID is the chunk ID of keepAndUpload's upload.
const uploadID = 99_999

// A keptSet is what the orphan, restart and claim tests leave on their
// workers before the scheduler goes without a word: the outputs of a small
// graph, kept, and an upload.
type keptSet struct {
	kept   []core.Location // the kept outputs: ID and size
	upload *tensor.Array   // chunk uploadID, 1000 float64s 0, 1, 2, ...
	first  []byte          // the bytes of kept[0]
}

// keepAndUpload runs y = ones((400, 400), chunks=100) * 3 on s, keeping
// y's 16 chunks under IDs from base on, and uploads chunk uploadID.
func keepAndUpload(ctx context.Context, t *testing.T, s *Scheduler, base uint64) keptSet {
	t.Helper()
	g, err := lang.Parse("x = ones((400, 400), chunks=100)\ny = x * 3\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, len(cg.Ops))
	for k := range ids {
		ids[k] = base + uint64(k)
	}
	var ks keptSet
	keep := map[uint64]bool{}
	for _, k := range cg.Outputs[0].Keys {
		keep[ids[k]] = true
		ks.kept = append(ks.kept, core.Location{ID: ids[k], NBytes: 100 * 100 * 8})
	}
	if err := s.Run(ctx, &core.Job{Graph: cg, IDs: ids, Keep: keep}); err != nil {
		t.Fatal(err)
	}
	ks.upload = tensor.NewArray(tensor.Float64, []int{1000})
	for i := range ks.upload.Float64s() {
		ks.upload.Float64s()[i] = float64(i)
	}
	if err := s.Put(ctx, uploadID, ks.upload); err != nil {
		t.Fatal(err)
	}
	a, release, err := s.Fetch(ctx, ks.kept[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	ks.first = bytes.Clone(a.Data)
	release()
	return ks
}
