package sched

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/exec/worker"
	"marsfs/tensor"
)

// holders counts the chunks of tensor name each worker holds.
func holders(t *testing.T, s *engine.Session, r *Scheduler, name string) map[string]int {
	t.Helper()
	tt, ok := s.Tensor(name)
	if !ok {
		t.Fatalf("no tensor %s", name)
	}
	out := map[string]int{}
	for _, id := range tt.Tiled().Keys {
		out[r.Where(id)]++
	}
	return out
}

// TestLineageAcrossGraphs loses every chunk of a kept tensor after its
// graph ended, its input tensor rebound and freed meanwhile: the tensor
// says it is recomputing, comes back bit-identical from the lineage of
// both graphs, and a later graph reading it succeeds.
func TestLineageAcrossGraphs(t *testing.T) {
	cfgs := []worker.Config{{Name: "w1", Slots: 2}, {Name: "w2", Slots: 2}, {Name: "w3", Slots: 2}}
	tc := startTestCluster(t, cfgs...)
	e, s := engineSession(t, tc.s)
	waitDone(t, mustSubmit(t, s, "x = rand(96, 64, chunks=(16, 32), seed=7)"))
	waitDone(t, mustSubmit(t, s, "y = (x * 2 + 1).cumsum(axis=0)"))
	// x is rebound: its chunks go, and y's lineage alone knows them.
	waitDone(t, mustSubmit(t, s, "x = ones(3)"))
	want := fetchNamed(t, s, "y").Data
	yt, _ := s.Tensor("y")
	if n := yt.Lineage().Ops(); n == 0 || n > 60 {
		t.Errorf("y's lineage holds %d ops", n)
	}
	// Every worker holding a chunk of y leaves but one, which holds none.
	held := holders(t, s, tc.s, "y")
	var keep *worker.Worker
	for _, w := range tc.workers {
		if held[w.Name()] == 0 {
			keep = w
		}
	}
	if keep == nil {
		// y is on all three: close two, and keep the third's chunks.
		keep = tc.workers[2]
	}
	for _, w := range tc.workers {
		if w != keep {
			w.Close()
		}
	}
	if !waitChange(tc.s, 10*time.Second, func() bool { return !(connected(tc.s) > 1) }) {
		t.Fatal("the scheduler did not see the workers go")
	}
	if lost := holders(t, s, tc.s, "y")[""]; lost == 0 {
		t.Fatal("no chunk of y lost")
	}
	if st := yt.State(); st != engine.Recomputing {
		t.Errorf("state of y with chunks lost: %v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := yt.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if st := yt.State(); st != engine.Stored {
		t.Errorf("state of y restored: %v", st)
	}
	if got := fetchNamed(t, s, "y").Data; !bytes.Equal(got, want) {
		t.Error("y made again differs")
	}
	// A later graph reads it; its events say nothing was lost this time.
	g := mustSubmit(t, s, "z = y.sum()")
	waitDone(t, g)
	if got := fetchNamed(t, s, "z").Data; len(got) != 8 {
		t.Errorf("z: %v", got)
	}
	if e.Restores() == 0 {
		t.Error("no restore ran")
	}
}

// TestLineageLaterGraph loses the chunks of a kept tensor and submits a
// graph reading it without reading it first: the graph makes them again
// before it runs, says so in its events, and succeeds with the result it
// had before the loss.
func TestLineageLaterGraph(t *testing.T) {
	cfgs := []worker.Config{{Name: "w1", Slots: 2}, {Name: "w2", Slots: 2}}
	tc := startTestCluster(t, cfgs...)
	_, s := engineSession(t, tc.s)
	waitDone(t, mustSubmit(t, s, "x = randn(4000, chunks=500, seed=3)\ny = x[::2] * 3"))
	waitDone(t, mustSubmit(t, s, "z = (y * y).sum()"))
	want := fetchNamed(t, s, "z").Data
	held := holders(t, s, tc.s, "y")
	victim := tc.workers[0]
	if held["w2"] > held["w1"] {
		victim = tc.workers[1]
	}
	victim.Close()
	if !waitChange(tc.s, 10*time.Second, func() bool { return !(holders(t, s, tc.s, "y")[""] == 0) }) {
		t.Fatal("no chunk of y lost")
	}
	g := mustSubmit(t, s, "z = (y * y).sum()")
	waitDone(t, g)
	if got := fetchNamed(t, s, "z").Data; !bytes.Equal(got, want) {
		t.Error("z from y made again differs")
	}
	evs, _, _ := g.Events(0)
	var notes []string
	for _, ev := range evs {
		if ev.Key < 0 {
			notes = append(notes, ev.Err)
		}
	}
	if all := strings.Join(notes, "\n"); !strings.Contains(all, "recomputing") || !strings.Contains(all, "recomputed") {
		t.Errorf("graph's notes:\n%s", all)
	}
}

// engineSession returns an engine on r, closed when the test ends, and a
// session of it.
func engineSession(t *testing.T, r engine.Runner) (*engine.Engine, *engine.Session) {
	t.Helper()
	e := engine.New(r)
	t.Cleanup(e.Close)
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

// connected counts the workers connected to r.
func connected(r *Scheduler) int {
	n := 0
	for _, w := range r.Workers() {
		if w.Connected {
			n++
		}
	}
	return n
}

func mustSubmit(t *testing.T, s *engine.Session, spec string) *engine.Graph {
	t.Helper()
	g, err := s.Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLineageCompact checks that a kept tensor's lineage holds the ops of
// its own graph that its chunks need, and names the chunks of earlier
// tensors it read rather than holding their graphs' ops: y, the sum of a
// slice of a tensor of 2,000 chunks, holds a few ops, and the 2,000 are
// x's lineage's, shared.
func TestLineageCompact(t *testing.T) {
	_, s := engineSession(t, newLocal(t, 2))
	waitDone(t, mustSubmit(t, s, "x = rand(20000, chunks=10, seed=1)"))
	g := mustSubmit(t, s, "y = x[:25].sum()\nz = (x * 2).sum()\nfetch y")
	waitDone(t, g)
	xt, _ := s.Tensor("x")
	yt, _ := s.Tensor("y")
	t.Logf("x's lineage %d ops; graph 2 %d ops, y's lineage %d", xt.Lineage().Ops(), len(g.Chunks().Ops), yt.Lineage().Ops())
	if n := xt.Lineage().Ops(); n != 2000 {
		t.Errorf("x's lineage holds %d ops, want its 2000 chunks' ops", n)
	}
	if n := yt.Lineage().Ops(); n > 12 {
		t.Errorf("y's lineage holds %d ops", n)
	}
}

// TestUploadFirstCopiesSpread puts an upload of eight chunks on two
// workers: each holds every chunk, and the first copies, which the graphs
// reading the upload read, are four on each, so those graphs run on both.
func TestUploadFirstCopiesSpread(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 1}, worker.Config{Name: "w2", Slots: 1})
	_, s := engineSession(t, tc.s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := s.BeginUpload("m", tensor.Float64, []int{64, 8}, [][]int{{8, 8, 8, 8, 8, 8, 8, 8}, {8}})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 8 {
		if err := u.Put(ctx, k, ramp(tensor.Float64, []int{8, 8}, float64(k))); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.Commit(); err != nil {
		t.Fatal(err)
	}
	mt, _ := s.Tensor("m")
	first := map[string]int{}
	for _, id := range mt.Tiled().Keys {
		first[tc.s.Where(id)]++
	}
	if first["w1"] != 4 || first["w2"] != 4 || tc.s.Copies() != 8 {
		t.Errorf("first copies %v, second copies %d; want 4 on each, and 8", first, tc.s.Copies())
	}
}

// TestUploadCopyReadInPlace: a graph reading two chunks of an upload whose
// first copies are on different workers runs where one is, and reads the
// other from the second copy held there: no worker fetches a byte.
func TestUploadCopyReadInPlace(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 1}, worker.Config{Name: "w2", Slots: 1})
	_, s := engineSession(t, tc.s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const rows, cols = 128, 1024 // 1 MiB a chunk: fetched alone, not batched
	u, err := s.BeginUpload("m", tensor.Float64, []int{2 * rows, cols}, [][]int{{rows, rows}, {cols}})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		if err := u.Put(ctx, k, ramp(tensor.Float64, []int{rows, cols}, float64(k+1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.Commit(); err != nil {
		t.Fatal(err)
	}
	received := func() map[string]string {
		out := map[string]string{}
		for _, w := range []string{"w1", "w2"} {
			text, _ := tc.s.WorkerStatus(w)
			for _, l := range strings.Split(text, "\n") {
				if v, ok := strings.CutPrefix(l, "received_bytes "); ok {
					out[w] = v
				}
			}
		}
		return out
	}
	before := received()
	waitDone(t, mustSubmit(t, s, "y = m[:128] + m[128:]"))
	if after := received(); !maps.Equal(before, after) {
		t.Errorf("bytes received by the workers: %v before the graph, %v after; want no fetch", before, after)
	}
	want := ramp(tensor.Float64, []int{rows, cols}, 1)
	for i, v := range ramp(tensor.Float64, []int{rows, cols}, 2).Float64s() {
		want.Float64s()[i] += v
	}
	if got := fetchNamed(t, s, "y"); !bytes.Equal(got.Data, want.Data) {
		t.Error("y differs")
	}
}

// TestUploadTwoCopies puts an upload's chunks on a cluster of three
// workers: each is held on two; one worker leaves and every chunk reads
// back the same from its other copy, and each gets a second copy again on
// the workers left.
func TestUploadTwoCopies(t *testing.T) {
	cfgs := []worker.Config{{Name: "w1", Slots: 1}, {Name: "w2", Slots: 1}, {Name: "w3", Slots: 1}}
	tc := startTestCluster(t, cfgs...)
	_, s := engineSession(t, tc.s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := ramp(tensor.Float64, []int{64, 64}, 1)
	u, err := s.BeginUpload("m", a.DType, a.Shape, [][]int{{16, 16, 16, 16}, {64}})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 4; k++ {
		c := tensor.NewArray(tensor.Float64, []int{16, 64})
		copy(c.Data, a.Data[k*16*64*8:(k+1)*16*64*8])
		if err := u.Put(ctx, k, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := tc.s.Copies(); n != 4 {
		t.Fatalf("%d chunks with a second copy, want 4", n)
	}
	mt, _ := s.Tensor("m")
	victim := tc.s.Where(mt.Tiled().Keys[0])
	for _, w := range tc.workers {
		if w.Name() == victim {
			w.Close()
		}
	}
	if !waitChange(tc.s, 10*time.Second, func() bool { return !(connected(tc.s) > 2 || tc.s.Copies() < 4) }) {
		t.Fatalf("%d workers, %d chunks with two copies, 10 s after %s left", connected(tc.s), tc.s.Copies(), victim)
	}
	if st := mt.State(); st != engine.Stored {
		t.Errorf("upload after a worker left: %v", st)
	}
	if got := fetchNamed(t, s, "m").Data; !bytes.Equal(got, a.Data) {
		t.Error("upload read back differs")
	}
	for _, id := range mt.Tiled().Keys {
		if w := tc.s.Where(id); w == victim || w == "" {
			t.Errorf("chunk %d on %q", id, w)
		}
	}
}

// TestAdoptAfterBreak breaks the scheduler's connection to a live worker
// holding kept chunks, as a pause past the failure detector or a network
// failure does: the scheduler gives the chunks up, the worker keeps them,
// and when the connection is back they are taken back, checked by ID and
// size, not recomputed.
func TestAdoptAfterBreak(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2})
	e, s := engineSession(t, tc.s)
	waitDone(t, mustSubmit(t, s, "x = rand(4000, chunks=500, seed=9)"))
	want := fetchNamed(t, s, "x").Data
	xt, _ := s.Tensor("x")
	tc.s.mu.Lock()
	tc.s.workers["w1"].cc.Close()
	tc.s.mu.Unlock()
	if !waitChange(tc.s, 10*time.Second, func() bool { return !(tc.s.Adopted() < len(xt.Tiled().Keys)) }) {
		t.Fatalf("%d chunks taken back, want %d", tc.s.Adopted(), len(xt.Tiled().Keys))
	}
	if st := xt.State(); st != engine.Stored {
		t.Errorf("x after its worker came back: %v", st)
	}
	if got := fetchNamed(t, s, "x").Data; !bytes.Equal(got, want) {
		t.Error("x taken back differs")
	}
	if n := e.Restores(); n != 0 {
		t.Errorf("%d restores ran", n)
	}
	// The worker made them the new connection's: freeing x frees them.
	s.Drop("x")
	if !waitWorkers(tc.workers[:1], 5*time.Second, func() bool { return tc.workers[0].Store().Len() == 0 }) {
		t.Fatalf("worker holds %d chunks after x was dropped", tc.workers[0].Store().Len())
	}
}

// TestHandOff has a worker leave cleanly (HandOff, then Close, as SIGTERM
// does): its kept chunks and upload copies move to the other workers
// first, and nothing is lost or recomputed.
func TestHandOff(t *testing.T) {
	cfgs := []worker.Config{{Name: "w1", Slots: 1}, {Name: "w2", Slots: 1}, {Name: "w3", Slots: 1}}
	tc := startTestCluster(t, cfgs...)
	e, s := engineSession(t, tc.s)
	waitDone(t, mustSubmit(t, s, "x = rand(8000, chunks=500, seed=9)"))
	want := fetchNamed(t, s, "x").Data
	if err := s.Upload(context.Background(), "m", ramp(tensor.Float64, []int{100}, 1)); err != nil {
		t.Fatal(err)
	}
	leaving := tc.workers[0]
	if leaving.Store().Len() == 0 {
		t.Fatal("w1 holds nothing")
	}
	leaving.HandOff()
	leaving.Close()
	if !waitChange(tc.s, 10*time.Second, func() bool { return !(connected(tc.s) > 2) }) {
		t.Fatal("w1 still connected")
	}
	for _, name := range []string{"x", "m"} {
		tt, _ := s.Tensor(name)
		if st := tt.State(); st != engine.Stored {
			t.Errorf("%s after w1 left: %v", name, st)
		}
	}
	if got := fetchNamed(t, s, "x").Data; !bytes.Equal(got, want) {
		t.Error("x moved differs")
	}
	if n := e.Restores(); n != 0 {
		t.Errorf("%d restores ran", n)
	}
	if n := tc.s.Copies(); n != 1 {
		t.Errorf("the upload has %d second copies", n)
	}
}

// TestLineageMidGraph loses the chunks of an earlier tensor while a graph
// reading them runs: the graph fails for want of them, they are made
// again from their lineage, and the graph runs again and succeeds with
// the result it has without a loss.
func TestLineageMidGraph(t *testing.T) {
	const xs = "x = rand(1000, 1000, chunks=250, seed=2)"
	const zs = "y = rand(1000, 1000, chunks=250, seed=1)\nz = ((y @ y) + x).sum()"
	// The same two graphs on the local scheduler, without a loss.
	le := engine.New(newLocal(t, 2))
	defer le.Close()
	ls, err := le.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, mustSubmit(t, ls, xs))
	waitDone(t, mustSubmit(t, ls, zs))
	want := fetchNamed(t, ls, "z").Data
	cfgs := []worker.Config{{Name: "w1", Slots: 1}, {Name: "w2", Slots: 1}, {Name: "w3", Slots: 1}}
	tc := startTestCluster(t, cfgs...)
	_, s := engineSession(t, tc.s)
	waitDone(t, mustSubmit(t, s, xs))
	held := holders(t, s, tc.s, "x")
	victim := tc.workers[0]
	for _, w := range tc.workers {
		if held[w.Name()] > held[victim.Name()] {
			victim = w
		}
	}
	g := mustSubmit(t, s, zs)
	if !waitGraph(g, 20*time.Second, func() bool { return g.Status().Finished >= 3 }) {
		t.Fatalf("graph 2 did not start: %+v", g.Status())
	}
	victim.Close()
	st := waitDone(t, g)
	if got := fetchNamed(t, s, "z").Data; !bytes.Equal(got, want) {
		t.Error("z differs from the local scheduler's")
	}
	evs, _, _ := g.Events(0)
	var notes []string
	for _, ev := range evs {
		if ev.Key < 0 {
			notes = append(notes, ev.Err)
		}
	}
	t.Logf("status %+v\nnotes:\n%s", st, strings.Join(notes, "\n"))
	if st.Failed != 0 {
		t.Errorf("graph succeeded with %d operands failed", st.Failed)
	}
}

// TestLineageStaged loses the chunks of a tensor made by a graph tiled in
// stages (unique: a length the data decides): its lineage follows the
// chunks one stage carried to the next, and it comes back the same.
func TestLineageStaged(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2}, worker.Config{Name: "w2", Slots: 2})
	_, s := engineSession(t, tc.s)
	waitDone(t, mustSubmit(t, s, "x = randint(0, 50, 3000, chunks=300, seed=4)\nu = unique(x)\nv = u * 2\nfetch v"))
	want := fetchNamed(t, s, "v").Data
	tc.workers[0].Close()
	tc.workers[1].Close()
	w3, err := worker.Start(context.Background(), worker.Config{Name: "w3", Slots: 2, Fast: true, Join: []string{tc.s.GossipAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	tc.workers = append(tc.workers, w3)
	if !waitChange(tc.s, 10*time.Second, func() bool { return !(connected(tc.s) != 1 || holders(t, s, tc.s, "v")[""] == 0) }) {
		t.Fatalf("%d workers connected; v on %v", connected(tc.s), holders(t, s, tc.s, "v"))
	}
	vt, _ := s.Tensor("v")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := vt.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fetchNamed(t, s, "v").Data; !bytes.Equal(got, want) {
		t.Errorf("v made again differs:\n got %v\nwant %v", got, want)
	}
}

// TestUploadLost loses both copies of an upload: its state is lost, and
// reading it fails saying no lineage makes it again.
func TestUploadLost(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 1}, worker.Config{Name: "w2", Slots: 1})
	_, s := engineSession(t, tc.s)
	if err := s.Upload(context.Background(), "m", ramp(tensor.Float64, []int{100}, 1)); err != nil {
		t.Fatal(err)
	}
	tc.workers[0].Close()
	tc.workers[1].Close()
	mt, _ := s.Tensor("m")
	if !waitChange(tc.s, 10*time.Second, func() bool { return !(tc.s.Where(mt.Tiled().Keys[0]) != "") }) {
		t.Fatal("the upload is still located")
	}
	if st := mt.State(); st != engine.Lost {
		t.Errorf("upload with both copies gone: %v", st)
	}
	if err := mt.Restore(context.Background()); !errors.Is(err, engine.ErrNoLineage) {
		t.Errorf("restore of a lost upload: %v", err)
	}
}

// TestAdoptInJob breaks the connection to the only worker while chains
// of ops run: the Core gives up the chains' chunks and revives their
// lineage, but when the worker is back it takes the chunks back instead of
// running the chains again from their start.
func TestAdoptInJob(t *testing.T) {
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2})
	job := chainsJob(4, 3000, 0)
	var mu sync.Mutex
	finished, again, notes := 0, 0, []string{}
	broke := make(chan struct{})
	var once sync.Once
	job.Observe = func(ev core.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ev.Key == core.NoteKey:
			notes = append(notes, ev.Err)
		case ev.State == core.Finished:
			if ev.Attempt > 1 {
				again++ // run again, not taken back
			}
			if finished++; finished == 2000 {
				once.Do(func() { close(broke) })
			}
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- tc.s.Run(context.Background(), job) }()
	select {
	case <-broke:
	case err := <-errc:
		t.Fatalf("job ended before the break: %v", err)
	}
	tc.s.mu.Lock()
	tc.s.workers["w1"].cc.Close()
	tc.s.mu.Unlock()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(notes, "\n")
	t.Logf("%d ops finished for %d ops, %d of them run again; notes:\n%s", finished, len(job.Graph.Ops), again, all)
	if !strings.Contains(all, "came back holding") {
		t.Error("no chunk taken back")
	}
	// What was out on the worker when the connection broke runs again
	// (units of up to 256 ops, a few per slot); the chains do not.
	if again > 2000 {
		t.Errorf("%d ops ran again: the chains ran again from their start", again)
	}
}
