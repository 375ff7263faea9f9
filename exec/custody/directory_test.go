package custody

import (
	"fmt"
	"slices"
	"testing"
)

// TestDirectory walks the directory through what exec/sched tells it —
// an upload put, its worker gone and its copy made, a graph's chunk lost
// and offered back, a leaving worker's chunk moved, a takeover's claim
// and recall, a recall's unwanted answer — checking its instructions and
// its invariants after each.
func TestDirectory(t *testing.T) {
	var out Output
	d := NewDirectory(&out)
	step := func(what string, f func()) Output {
		t.Helper()
		out = Output{}
		f()
		if err := d.Check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return out
	}
	for _, w := range []string{"w1", "w2", "w3"} {
		d.WorkerUp(w)
	}

	// An upload on one worker gets a second copy, asked for once.
	o := step("put", func() { d.Place(0, Chunk{ID: 1, NBytes: 100, Workers: []string{"w1"}, Upload: true}) })
	if len(o.Copy) != 1 || o.Copy[0].From != "w1" {
		t.Fatalf("put with one copy: %+v, want one copy from w1", o.Copy)
	}
	to := o.Copy[0].To
	if o := step("another worker", func() { d.WorkerUp("w4") }); len(o.Copy) != 0 {
		t.Errorf("a copy asked for twice: %+v", o.Copy)
	}
	step("copied", func() { d.Copied(Copy{ID: 1, To: to}, 100) })
	if ws, _ := d.Where(1); !slices.Equal(ws, []string{"w1", to}) || d.Copies() != 1 {
		t.Fatalf("upload on %v, %d with two copies", ws, d.Copies())
	}
	// A third copy is not kept.
	other := "w4"
	if to == "w4" {
		other = "w3"
	}
	if o := step("copied again", func() { d.Copied(Copy{ID: 1, To: other}, 100) }); len(o.Free) != 1 {
		t.Errorf("a third copy: frees %+v, want it freed", o.Free)
	}

	// Its first worker goes: the copy is read, and another is asked for.
	o = step("w1 down", func() { d.WorkerDown("w1") })
	if ws, _ := d.Where(1); !slices.Equal(ws, []string{to}) || len(o.Copy) != 1 || o.Copy[0].From != to {
		t.Fatalf("after w1: upload on %v, copies %+v", ws, o.Copy)
	}

	// A graph's chunk, lost with its worker, comes back when offered.
	step("kept", func() { d.Place(0, Chunk{ID: 2, NBytes: 8, Workers: []string{"w2"}}) })
	o = step("w2 down", func() { d.WorkerDown("w2") })
	if !d.IsLost(2) || !slices.Contains(o.Lost, 2) {
		t.Fatalf("chunk 2 not lost with w2: %+v", o.Lost)
	}
	step("w2 back", func() { d.WorkerUp("w2") })
	o = step("offered", func() { d.Offered("w2", []Chunk{{ID: 2, NBytes: 8}}, 10, 0, 0) })
	if ws, _ := d.Where(2); !slices.Equal(ws, []string{"w2"}) || fmt.Sprint(o.Claim) != "[{w2 0 0 [2]}]" || d.Adopted() != 1 {
		t.Fatalf("offer: chunk 2 on %v, claims %+v, %d adopted", ws, o.Claim, d.Adopted())
	}
	step("offered by w4", func() { d.Offered("w4", []Chunk{{ID: 9, NBytes: 5}}, 10, 0, 0) })
	if !slices.Equal(d.Offers(9), []string{"w4"}) {
		t.Errorf("chunk 9, not lost here, is not remembered: %v", d.Offers(9))
	}

	// A leaving worker's chunk moves; nothing is put on it meanwhile.
	step("w2 leaving", func() { d.WorkerLeaving("w2") })
	if slices.Contains(d.Targets(4, ""), "w2") {
		t.Errorf("a leaving worker among the targets: %v", d.Targets(4, ""))
	}
	if !d.Moved(2, "w2", "w3") {
		t.Fatal("the move of chunk 2 was refused")
	}
	if ws, _ := d.Where(2); !slices.Equal(ws, []string{"w3"}) {
		t.Errorf("chunk 2 moved to %v", ws)
	}
	if o := step("moved, freed", func() { d.Moved(77, "w2", "w3") }); len(o.Free) != 1 || o.Free[0].Worker != "w3" {
		t.Errorf("a move of a chunk freed meanwhile: frees %+v, want the copy on w3 freed", o.Free)
	}

	// A takeover claims chunk 9 from the offer, recalls 10, which no one
	// offered, and places its upload where the journal says.
	o = step("claim", func() {
		taken, lost := d.ClaimSession(5, 2, 20, []Chunk{{ID: 9, NBytes: 5}, {ID: 10, NBytes: 5}},
			[]Chunk{{ID: 11, NBytes: 7, Workers: []string{"w3", "gone"}}})
		if taken != 2 || lost != 1 {
			t.Errorf("claimed %d, %d lost; want 2 and 1", taken, lost)
		}
	})
	if ws, _ := d.Where(9); !slices.Equal(ws, []string{"w4"}) {
		t.Errorf("chunk 9 claimed on %v", ws)
	}
	if len(o.Recall) == 0 || !slices.Equal(o.Recall[0].IDs, []uint64{10}) || o.Recall[0].Epoch != 2 {
		t.Errorf("recall %+v, want chunk 10 at epoch 2", o.Recall)
	}
	// A recall's answer of a chunk held already is kept as another copy,
	// not freed: a job of the session may have made it again there.
	o = step("recalled", func() { d.Offered("w3", []Chunk{{ID: 9, NBytes: 5}}, 30, 5, 2) })
	if ws, _ := d.Where(9); len(o.Free) != 0 || !slices.Equal(ws, []string{"w4", "w3"}) {
		t.Errorf("a recall's answer of a chunk held: frees %+v, chunk 9 on %v", o.Free, ws)
	}
	// The job's keep of it on w3 keeps the copy on w4 too.
	step("kept again", func() { d.Place(5, Chunk{ID: 9, NBytes: 5, Workers: []string{"w3"}}) })
	if ws, _ := d.Where(9); !slices.Equal(ws, []string{"w3", "w4"}) {
		t.Errorf("chunk 9 kept again on w3: on %v, want w3 then w4", ws)
	}
	// One of a chunk no longer kept is freed, at the recall's epoch.
	o = step("recalled, dropped", func() { d.Offered("w3", []Chunk{{ID: 12, NBytes: 5}}, 30, 5, 2) })
	if fmt.Sprint(o.Free) != "[{w3 5 2 [12]}]" {
		t.Errorf("a recall's answer of a chunk not kept: frees %+v", o.Free)
	}

	// A session's free of a chunk of no known session goes through; a
	// job's free of a chunk the directory holds is not to be sent.
	if !d.Holds(2, "w3") || d.Holds(2, "w2") {
		t.Error("Holds does not say where chunk 2 is")
	}
	o = step("drop", func() { d.Drop(5, 2, []uint64{2, 11}) })
	if ws, lost := d.Where(2); ws != nil || lost || len(o.Free) != 1 || !slices.Equal(o.Free[0].IDs, []uint64{2, 11}) {
		t.Errorf("after the drop: chunk 2 on %v (lost %v), frees %+v", ws, lost, o.Free)
	}
}

// TestUploadRecalled: an upload the directory counts lost while a worker
// still holds a copy (the directory dropped the worker, or was made again
// from the journal before any worker connected; seed 1 of TestSeeds) is
// asked of each worker that comes up, and the answer brings it back. The
// worker does not offer an upload's copy on connecting, so no other
// input would.
func TestUploadRecalled(t *testing.T) {
	var out Output
	d := NewDirectory(&out)
	d.Epoch = func(sess int) (Epoch, bool) { return 3, sess == 1 }
	// Made again from the journal: the upload's workers are not live yet.
	d.Place(1, Chunk{ID: 7, NBytes: 64, Workers: []string{"w1", "w2"}, Upload: true})
	d.Place(2, Chunk{ID: 8, NBytes: 64, Workers: []string{"w1"}, Upload: true})
	if !d.IsLost(7) {
		t.Fatal("the upload is not lost with no live worker")
	}
	out = Output{}
	d.WorkerUp("w1")
	if fmt.Sprint(out.Recall) != "[{w1 1 3 [7]}]" {
		t.Fatalf("w1 up: recalls %+v, want upload 7 of session 1 at epoch 3 (not 8: session 2 is not served here)", out.Recall)
	}
	out = Output{}
	if n := d.Offered("w1", []Chunk{{ID: 7, NBytes: 64}}, 10, 1, 3); n != 1 {
		t.Fatalf("the recall's answer took %d chunks, want 1", n)
	}
	if ws, lost := d.Where(7); lost || !slices.Equal(ws, []string{"w1"}) {
		t.Fatalf("upload 7 on %v (lost %v), want on w1", ws, lost)
	}
	if fmt.Sprint(out.Claim) != "[{w1 1 3 [7]}]" {
		t.Errorf("claims %+v, want upload 7 claimed on w1 at epoch 3", out.Claim)
	}
	// The second copy the journal names answers too: kept, not freed.
	out = Output{}
	d.WorkerUp("w2")
	if len(out.Recall) != 0 {
		t.Errorf("w2 up: recalls %+v, nothing is lost", out.Recall)
	}
	d.Offered("w2", []Chunk{{ID: 7, NBytes: 64}}, 10, 1, 3)
	if ws, _ := d.Where(7); !slices.Equal(ws, []string{"w1", "w2"}) || len(out.Free) != 0 {
		t.Errorf("upload 7 on %v, frees %+v; want on w1 and w2, nothing freed", ws, out.Free)
	}
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestTakeoverTakesOfferedUpload: a takeover places an upload on the
// workers its journal names and on the live workers that offered it (a
// copy made after the journal was last written, orphaned since; seed 40
// of TestSeeds), and asks every live worker for one it still counts
// lost.
func TestTakeoverTakesOfferedUpload(t *testing.T) {
	var out Output
	d := NewDirectory(&out)
	for _, w := range []string{"w1", "w2", "w3"} {
		d.WorkerUp(w)
	}
	d.Offered("w3", []Chunk{{ID: 7, NBytes: 64}}, 5, 0, 0)
	out = Output{}
	taken, lost := d.ClaimSession(1, 4, 10, nil, []Chunk{
		{ID: 7, NBytes: 64, Workers: []string{"gone1", "gone2"}},
		{ID: 8, NBytes: 64, Workers: []string{"gone1"}},
	})
	if taken != 1 || lost != 1 {
		t.Errorf("taken %d, lost %d; want 1 and 1", taken, lost)
	}
	if ws, lost := d.Where(7); lost || !slices.Equal(ws, []string{"w3"}) {
		t.Fatalf("upload 7 on %v (lost %v), want on w3, which offered it", ws, lost)
	}
	if fmt.Sprint(out.Claim) != "[{w3 1 4 [7]}]" {
		t.Errorf("claims %+v, want upload 7 on w3 at epoch 4", out.Claim)
	}
	if fmt.Sprint(out.Recall) != "[{w1 1 4 [8]} {w2 1 4 [8]} {w3 1 4 [8]}]" {
		t.Errorf("recalls %+v, want upload 8 asked of every live worker at epoch 4", out.Recall)
	}
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
}
