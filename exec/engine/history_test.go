package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"marsfs/exec/asuser"
	"marsfs/exec/sched"
	"marsfs/exec/worker"
)

// heapAfterGC is the bytes of live heap objects after a collection.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHistoryBounded runs 3,000 small graphs (arange of up to 60 in
// chunks of 5) in one session, on a scheduler with two workers in this
// process: the heap grows by far less than 64 MiB, the last 16 graphs
// keep their full record, the older ones their summary, and the records
// forgotten are given back. Without the bound each kept about 107 KiB
// (heap after GC on 84ae45d: +302 MiB over 2,900 graphs); with it, about
// 1.4 KiB, half of it the events of the 16 kept whole.
func TestHistoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 graphs")
	}
	_, _, s := newTestSession(t)
	const n = 3000
	run := func(i int) {
		g, err := s.Submit(fmt.Sprintf("a = arange(%d, chunks=5)\n", 1+i%60))
		if err != nil {
			t.Fatal(err)
		}
		waitOK(t, g)
	}
	for i := range 100 {
		run(i)
	}
	base := heapAfterGC()
	for i := 100; i < n; i++ {
		run(i)
	}
	grown := int64(heapAfterGC()) - int64(base)
	t.Logf("heap after GC: %d KiB after 100 graphs, %+d KiB after %d more (%d B a graph)", base>>10, grown>>10, n-100, grown/(n-100))
	if grown > 64<<20 {
		t.Errorf("the heap grew by %d MiB over %d graphs", grown>>20, n-100)
	}
	if grown > int64(n-100)*2048 {
		t.Errorf("%d B a graph kept, want under 2 KiB", grown/(n-100))
	}
	graphs := s.Graphs()
	if len(graphs) != n {
		t.Fatalf("%d graphs", len(graphs))
	}
	for i, g := range graphs {
		full := i >= n-DefaultHistory
		if g.Forgotten() == full {
			t.Fatalf("graph %d: forgotten %v, want %v", g.ID(), g.Forgotten(), !full)
		}
		if full && (len(g.Chunks().Ops) == 0 || len(g.OpStates()) == 0) {
			t.Errorf("graph %d kept in full has no record", g.ID())
		}
		if !full && (len(g.Chunks().Ops) != 0 || g.Status().State != Succeeded || !strings.HasPrefix(g.Spec(), "a = arange(")) {
			t.Errorf("graph %d forgotten: %d ops, %s, %q", g.ID(), len(g.Chunks().Ops), g.Status().State, g.Spec())
		}
		if _, err := g.SpecJSON(); (err == nil) != full {
			t.Errorf("graph %d: spec.json %v", g.ID(), err)
		}
	}
	if sum := graphs[0].Summary(); !strings.HasPrefix(sum, `1 SUCCEEDED `) || !strings.HasSuffix(sum, ` "a = arange(1, chunks=5)" ""`) {
		t.Errorf("summary of graph 1: %s", sum)
	}
}

// TestHistoryServerWide: across sessions, the ended graphs kept in full
// hold at most the operand bound, the oldest forgotten first, whichever
// session they are of; a running graph is never forgotten, and a closed
// session's records go with it.
func TestHistoryServerWide(t *testing.T) {
	e, _, s1 := newTestSession(t)
	s2, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	e.SetMaxOps(100)
	var all []*Graph
	for i := range 20 {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		g, err := s.Submit("a = arange(60, chunks=5)\n") // 12 ops
		if err != nil {
			t.Fatal(err)
		}
		waitOK(t, g)
		all = append(all, g)
	}
	waitFull := func(want int) {
		t.Helper()
		e.mu.Lock()
		n, ops := 0, e.fullOps
		for _, r := range e.full {
			if !r.g.Forgotten() {
				n++
			}
		}
		e.mu.Unlock()
		if n != want || ops > 100 {
			t.Errorf("%d graphs kept in full (%d ops), want %d (at most 100 ops)", n, ops, want)
		}
	}
	waitFull(8) // 8 x 12 ops <= 100
	for i, g := range all {
		if want := i < 12; g.Forgotten() != want {
			t.Errorf("graph %d of the run (session %d): forgotten %v, want %v", i, 1+i%2, g.Forgotten(), want)
		}
	}
	s2.Close()
	waitFull(4)
	e.mu.Lock()
	ops := e.fullOps
	e.mu.Unlock()
	if ops != 4*12 {
		t.Errorf("%d ops kept in full after closing a session, want 48", ops)
	}
}

// TestKeepNothingAsked: fetch alone keeps nothing new; del drops kept
// tensors and frees their chunks on the workers, as Drop does; a spec
// whose last statement writes a file keeps nothing, not even the large
// input it read; and a graph of no operand (del alone) succeeds.
func TestKeepNothingAsked(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	r := sched.NewLocalWith(worker.Config{Slots: 2, Data: root})
	t.Cleanup(func() { r.Close() })
	e := New(r)
	t.Cleanup(e.Close)
	files, err := asuser.New(root)
	if err != nil {
		t.Fatal(err)
	}
	e.SetData(files)
	s, err := e.NewSession(strconv.Itoa(os.Getuid()))
	if err != nil {
		t.Fatal(err)
	}
	submit := func(spec string) {
		t.Helper()
		g, err := s.Submit(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		waitOK(t, g)
	}
	tensors := func(want string) {
		t.Helper()
		if got := strings.Join(s.Tensors(), " "); got != want {
			t.Errorf("tensors %q, want %q", got, want)
		}
	}
	submit("a = arange(6, chunks=2)\nb = a * 2\nfetch a, b\n")
	tensors("a b")
	ta, _ := s.Tensor("a")
	aKeys := slices.Clone(ta.Tiled().Keys)
	submit("c = b + 1\nd = c * 2\nfetch\n")
	tensors("a b")
	submit("x = arange(600, chunks=100)\nto_npy(x * 2, \"x2.npy\")\n")
	tensors("a b")
	if _, err := os.Stat(filepath.Join(dir, "x2.npy")); err != nil {
		t.Errorf("x2.npy: %v", err)
	}
	submit("del a\n")
	tensors("b")
	for _, id := range aKeys {
		if w := r.Where(id); w != "" {
			t.Errorf("chunk %d of a deleted is still on %s", id, w)
		}
	}
	submit("e = b + 1\ndel b\n")
	tensors("e")
}
