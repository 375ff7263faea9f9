package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"

	"marsfs/exec/core"
	"marsfs/exec/sched"
	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

func newTestSession(t *testing.T) (*Engine, *sched.Scheduler, *Session) {
	t.Helper()
	r := sched.NewLocal(2)
	t.Cleanup(func() { r.Close() })
	e := New(r)
	t.Cleanup(e.Close)
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	return e, r, s
}

func waitOK(t *testing.T, g *Graph) Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := g.Wait(ctx)
	if st.State != Succeeded {
		t.Fatalf("graph %d: %s (%s)", g.ID(), st.State, g.Err())
	}
	return st
}

func fetch(t *testing.T, s *Session, name string) *tensor.Array {
	t.Helper()
	tt, ok := s.Tensor(name)
	if !ok {
		t.Fatalf("no tensor %q; have %v", name, s.Tensors())
	}
	a, err := tt.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSessionSubmitAndReuse(t *testing.T) {
	_, r, s := newTestSession(t)
	g, err := s.Submit("x = arange(10, chunks=3)\ny = x * 2\nfetch x, y\n")
	if err != nil {
		t.Fatal(err)
	}
	st := waitOK(t, g)
	if st.Finished != st.Operands || st.Operands == 0 {
		t.Errorf("status %+v", st)
	}
	y := fetch(t, s, "y")
	for i, v := range y.Int64s() {
		if v != int64(2*i) {
			t.Fatalf("y[%d] = %d", i, v)
		}
	}
	// Only the kept outputs stay: x (4 chunks) and y (4 chunks).
	if n := r.Len(); n != 8 {
		t.Errorf("runner holds %d chunks after the graph, want 8", n)
	}
	// A later graph names y; replacing x frees its old chunks.
	g2, err := s.Submit("z = y.sum()\nx = zeros(3)\nfetch z, x")
	if err != nil {
		t.Fatal(err)
	}
	waitOK(t, g2)
	if z := fetch(t, s, "z"); z.Int64s()[0] != 90 {
		t.Errorf("z = %v, want 90", z.Int64s())
	}
	if n := r.Len(); n != 4+1+1 {
		t.Errorf("runner holds %d chunks, want y's 4, z and the new x", n)
	}
	if got := s.Tensors(); strings.Join(got, ",") != "x,y,z" {
		t.Errorf("tensors %v", got)
	}
}

func TestSessionBadSpec(t *testing.T) {
	_, _, s := newTestSession(t)
	_, err := s.Submit("x = ones(3)\ny = frobnicate(x)\n")
	var se *syntax.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v, want a *syntax.Error", err)
	}
	if !strings.HasPrefix(s.Error(), "2:5: ") || !strings.Contains(s.Error(), "frobnicate") {
		t.Errorf("session error %q", s.Error())
	}
	if len(s.Graphs()) != 0 {
		t.Errorf("a bad spec made a graph")
	}
}

func TestSessionUpload(t *testing.T) {
	_, _, s := newTestSession(t)
	a := tensor.NewArray(tensor.Float32, []int{2, 3})
	copy(a.Float32s(), []float32{1, 2, 3, 4, 5, 6})
	if err := s.Upload(context.Background(), "u", a); err != nil {
		t.Fatal(err)
	}
	g, err := s.Submit("v = u.sum(axis=1)")
	if err != nil {
		t.Fatal(err)
	}
	waitOK(t, g)
	v := fetch(t, s, "v")
	if v.DType != tensor.Float32 || v.Float32s()[0] != 6 || v.Float32s()[1] != 15 {
		t.Errorf("v = %v %v", v.DType, v.Float32s())
	}
	if err := s.Upload(context.Background(), "9bad", a); err == nil {
		t.Error("upload named 9bad accepted")
	}
}

func TestSessionCancelAndClose(t *testing.T) {
	e, r, s := newTestSession(t)
	g, err := s.Submit("x = rand(8000000000, chunks=1000000, seed=1)\ny = (x * 2).sum()")
	if err != nil {
		t.Fatal(err)
	}
	// Cancelled once its ops run.
	for from := 0; ; {
		evs, more, ended := g.Events(from)
		from += len(evs)
		if st := g.Status(); st.Running+st.Finished > 0 || ended {
			break
		}
		<-more
	}
	start := time.Now()
	g.Cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := g.Wait(ctx)
	if st.State != CancelledGraph {
		t.Fatalf("state %s after cancel", st.State)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if n := r.Len(); n != 0 {
		t.Errorf("%d chunks left after cancel", n)
	}
	// Another session is unaffected.
	s2, _ := e.NewSession("other")
	g2, err := s2.Submit("a = ones(5).sum()")
	if err != nil {
		t.Fatal(err)
	}
	waitOK(t, g2)
	s2.Close()
	if n := r.Len(); n != 0 {
		t.Errorf("%d chunks left after close", n)
	}
	if _, ok := e.Session(s2.ID()); ok {
		t.Error("closed session still listed")
	}
}

func TestEventLog(t *testing.T) {
	var l eventLog
	for i := 0; i < 2*eventBlock+5; i++ {
		l.add(&core.Event{Key: i})
	}
	for _, from := range []int{-1, 0, 1, eventBlock - 1, eventBlock, eventBlock + 1, 2 * eventBlock, 2*eventBlock + 4, 2*eventBlock + 5, 3 * eventBlock} {
		got := l.from(from)
		start := max(from, 0)
		if want := max(2*eventBlock+5-start, 0); len(got) != want {
			t.Fatalf("from(%d): %d events, want %d", from, len(got), want)
		}
		for i, ev := range got {
			if ev.Key != start+i {
				t.Fatalf("from(%d)[%d] is event %d", from, i, ev.Key)
			}
		}
	}
}

// TestEventLogTimes keeps each event's time to the microsecond, across
// times a block's base does not reach (hours apart, or back in time) and
// events with none.
func TestEventLogTimes(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	l := eventLog{start: start}
	var want []time.Time
	for i, d := range []time.Duration{0, time.Microsecond, 3 * time.Second, -1, 2 * time.Hour, 2*time.Hour + 7*time.Millisecond, 2*time.Hour + 3*time.Millisecond + 500, time.Minute, -1, 40 * time.Minute, 5 * time.Hour, 1500 * time.Nanosecond} {
		at := start.Add(d)
		if d < 0 {
			at = time.Time{}
		}
		l.add(&core.Event{Key: i, At: at, Worker: "w1"})
		want = append(want, at)
	}
	for i, ev := range l.from(0) {
		w := want[i]
		if w.IsZero() != ev.At.IsZero() || !w.IsZero() && (ev.At.After(w) || w.Sub(ev.At) >= time.Microsecond) {
			t.Errorf("event %d at %v, want %v", i, ev.At, w)
		}
		if ev.Key != i || ev.Worker != "w1" {
			t.Errorf("event %d is %+v", i, ev)
		}
	}
	if n := unsafe.Sizeof(eventRec{}); n != 12 {
		t.Errorf("an event record is %d bytes, want 12", n)
	}
}

// TestLease holds a tensor's chunks with a lease while a later graph
// rebinds its name: they stay until the lease ends, and then a lease on the
// old tensor is refused.
func TestLease(t *testing.T) {
	_, r, s := newTestSession(t)
	g, err := s.Submit("x = arange(12, chunks=4)\n")
	if err != nil {
		t.Fatal(err)
	}
	waitOK(t, g)
	old, _ := s.Tensor("x")
	l, err := old.Lease()
	if err != nil {
		t.Fatal(err)
	}
	if g, err = s.Submit("x = zeros(12, chunks=6)\n"); err != nil {
		t.Fatal(err)
	}
	waitOK(t, g)
	if n := r.Len(); n != 3+2 {
		t.Errorf("with the lease held the runner keeps %d chunks, want the old x's 3 and the new x's 2", n)
	}
	a, err := old.Fetch(context.Background())
	if err != nil || a.Int64s()[11] != 11 {
		t.Fatalf("the leased x reads %v, %v", a, err)
	}
	l.Release()
	l.Release() // a second release does nothing
	if n := r.Len(); n != 2 {
		t.Errorf("after the lease the runner keeps %d chunks, want 2", n)
	}
	if _, err := old.Lease(); err == nil {
		t.Error("a lease on the replaced x, whose chunks are gone, was granted")
	}
}

// The scheduler is the Runner sessions run on.
var _ Runner = (*sched.Scheduler)(nil)

// TestMaxOps bounds the operands the engine's graphs hold: a spec tiling
// into more than is left is refused at submit with the numbers, a running
// graph's operands count against the bound until it ends, and another
// session's tensors are untouched.
func TestMaxOps(t *testing.T) {
	e, _, other := newTestSession(t)
	waitOK(t, mustSubmit(t, other, "keep = arange(10, chunks=5)\n"))
	e.SetMaxOps(1000)
	s, err := e.NewSession("greedy")
	if err != nil {
		t.Fatal(err)
	}
	// A tensor of more chunks than the operands left is refused by the
	// parser, before its chunks' sizes are made.
	_, err = s.Submit("x = ones(100000, chunks=10).sum()\n")
	if err == nil || !strings.Contains(err.Error(), "into 10000 chunks, more than the 1000") {
		t.Fatalf("a spec of 10^4 chunks under a bound of 1000: %v", err)
	}
	if !strings.Contains(s.Error(), "use larger chunks") {
		t.Errorf("error file: %q", s.Error())
	}
	// One of fewer chunks whose graph has more operands is refused by the
	// tiler, as soon as it passes the bound.
	_, err = s.Submit("x = ones(9000, chunks=10).sum()\n")
	if err == nil || !strings.Contains(err.Error(), "chunk operands left of the 1000") {
		t.Fatalf("a spec of 900 chunks and 1,200 operands under a bound of 1000: %v", err)
	}
	if e.LiveOps() != 0 {
		t.Errorf("%d operands held after a refusal", e.LiveOps())
	}
	// Within the bound the same sum runs, and holds its operands while
	// it does.
	g := mustSubmit(t, s, "x = ones(100000, chunks=1000).sum()\n")
	if e.LiveOps() == 0 && !g.Status().State.Ended() {
		t.Error("a running graph holds no operands")
	}
	waitOK(t, g)
	// Given back before the graph ends.
	if e.LiveOps() != 0 {
		t.Errorf("%d operands held after every graph ended", e.LiveOps())
	}
	if a := fetch(t, other, "keep"); a.Int64s()[9] != 9 {
		t.Errorf("other session's tensor: %v", a.Int64s())
	}
}

func mustSubmit(t *testing.T, s *Session, src string) *Graph {
	t.Helper()
	g, err := s.Submit(src)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
