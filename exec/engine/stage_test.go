package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/sched"
)

// gatedRunner is a local scheduler (NewLocal) whose job number at (1 for the first)
// waits until gate is closed or its context is done.
type gatedRunner struct {
	*sched.Scheduler
	gate    chan struct{}
	at      int
	jobs    int
	waiting chan struct{} // closed when job at waits
}

func newGatedRunner(at int) *gatedRunner {
	return &gatedRunner{Scheduler: sched.NewLocal(2), gate: make(chan struct{}), at: at, waiting: make(chan struct{})}
}

func (r *gatedRunner) Run(ctx context.Context, job *core.Job) error {
	if r.jobs++; r.jobs == r.at {
		close(r.waiting)
		select {
		case <-r.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return r.Scheduler.Run(ctx, job)
}

// TestStagedGraph runs a spec whose lengths the data decides: one graph
// whose status shows the unknown shapes until the stage that knows them is
// tiled, whose later operands appear then, and whose outputs are NumPy's.
func TestStagedGraph(t *testing.T) {
	r := newGatedRunner(1)
	e := New(r)
	defer e.Close()
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Submit("x = arange(100, chunks=9) % 13\nv, c = unique(x, return_counts=True)\nw = (v * c).sum()\nb = bincount(x)[-1]\na = x.sum()\nfetch a, v, c, w, b")
	if err != nil {
		t.Fatal(err)
	}
	before := g.Status()
	if before.Stage != 1 || !slices.Contains(before.Shapes, "v (?,)") || !slices.Contains(before.Shapes, "w ()") {
		t.Errorf("status before the lengths are known: stage %d, shapes %q", before.Stage, before.Shapes)
	}
	first := len(g.Chunks().Ops)
	close(r.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	after := g.Wait(ctx)
	if after.State != Succeeded {
		t.Fatalf("%s: %s", after.State, g.Err())
	}
	if after.Stage != 2 || !slices.Contains(after.Shapes, "v (13,)") || !slices.Contains(after.Shapes, "c (13,)") {
		t.Errorf("status after: stage %d, shapes %q", after.Stage, after.Shapes)
	}
	cg := g.Chunks()
	if len(cg.Ops) <= first || after.Operands != len(cg.Ops) || after.Finished != len(cg.Ops) {
		t.Errorf("%d operands (%d in the first stage), status says %d, %d finished", len(cg.Ops), first, after.Operands, after.Finished)
	}
	for k, st := range g.OpStates() {
		if st != core.Finished && st != core.Freed {
			t.Errorf("operand %d (%s) ended %s", k, cg.Ops[k].Name(), st)
		}
	}
	if p, ok := g.Plan(); !ok || len(p.Worker) != len(cg.Ops) {
		t.Errorf("plan: %v", ok)
	}
	v, c := fetch(t, s, "v").Int64s(), fetch(t, s, "c").Int64s()
	if len(v) != 13 || len(c) != 13 {
		t.Fatalf("v %v c %v", v, c)
	}
	for i := range v {
		// 100 = 7*13 + 9: the values below 9 occur 8 times, the rest 7.
		want := int64(7)
		if i < 9 {
			want = 8
		}
		if v[i] != int64(i) || c[i] != want {
			t.Errorf("v[%d] = %d, c[%d] = %d; want %d, %d", i, v[i], i, c[i], i, want)
		}
	}
	if w := fetch(t, s, "w").Int64s()[0]; w != 582 {
		t.Errorf("w = %d, want 582", w) // sum(arange(100) % 13)
	}
	if b := fetch(t, s, "b").Int64s()[0]; b != 7 {
		t.Errorf("b = %d, want 7", b)
	}
	var names []string
	for _, o := range cg.Outputs {
		names = append(names, o.Name)
	}
	if strings.Join(names, " ") != "a v c w b" {
		t.Errorf("outputs %v, want the spec's order a v c w b", names)
	}
	js, err := g.SpecJSON()
	if err != nil || !strings.Contains(string(js), `"op":"unique"`) || !strings.Contains(string(js), `"shape":[-1]`) {
		t.Errorf("spec.json: %v\n%s", err, js)
	}
	// Only the four outputs' chunks stay.
	n := 0
	for _, name := range s.Tensors() {
		tt, _ := s.Tensor(name)
		n += len(tt.Tiled().Keys)
	}
	if held := r.Len(); held != n {
		t.Errorf("the runner keeps %d chunks, the session's tensors %d", held, n)
	}
	g2, err := s.Submit(string(js))
	if err != nil {
		t.Fatalf("spec.json does not submit again: %v", err)
	}
	if st := g2.Wait(ctx); st.State != Succeeded {
		t.Errorf("spec.json submitted again: %s %s", st.State, g2.Err())
	}
}

// TestStagedGraphFails checks that a shape error only the data reveals
// fails the graph with NumPy's message and frees what its stages kept.
func TestStagedGraphFails(t *testing.T) {
	r := sched.NewLocal(2)
	defer r.Close()
	e := New(r)
	defer e.Close()
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Submit("x = arange(100, chunks=9) % 13\ny = unique(x) + arange(3)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if st := g.Wait(ctx); st.State != Failed || !strings.Contains(g.Err(), "operands could not be broadcast together with shapes (13,) (3,)") {
		t.Errorf("%s: %q", st.State, g.Err())
	}
	if held := r.Len(); held != 0 {
		t.Errorf("a failed graph left %d chunks", held)
	}
	if len(s.Tensors()) != 0 {
		t.Errorf("a failed graph kept %v", s.Tensors())
	}
}

// TestStagedStoredOnly runs a graph whose last stage only names chunks of
// the first (unique's values, one chunk): a stage of stored operands.
func TestStagedStoredOnly(t *testing.T) {
	r := sched.NewLocal(2)
	defer r.Close()
	e := New(r)
	defer e.Close()
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Submit("v = unique(arange(10, chunks=3) % 4)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if st := g.Wait(ctx); st.State != Succeeded {
		t.Fatalf("%s: %s", st.State, g.Err())
	}
	if v := fetch(t, s, "v").Int64s(); len(v) != 4 || v[0] != 0 || v[3] != 3 {
		t.Errorf("v = %v, want [0 1 2 3]", v)
	}
}

// TestStagedGraphCancel cancels a graph while its second stage waits: the
// graph ends CANCELLED and nothing its first stage kept stays.
func TestStagedGraphCancel(t *testing.T) {
	r := newGatedRunner(2)
	e := New(r)
	defer e.Close()
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Submit("x = arange(100, chunks=9) % 13\nv = unique(x) * 2\nw = x.sum()\nfetch v, w")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	select {
	case <-r.waiting:
	case <-ctx.Done():
		t.Fatal("the second stage never started")
	}
	if st := g.Status(); st.Stage != 2 || len(g.Chunks().Ops) != st.Operands {
		t.Errorf("stage %d, %d operands, status says %d", st.Stage, len(g.Chunks().Ops), st.Operands)
	}
	g.Cancel()
	if st := g.Wait(ctx); st.State != CancelledGraph {
		t.Errorf("%s: %s", st.State, g.Err())
	}
	if held := r.Len(); held != 0 || len(s.Tensors()) != 0 {
		t.Errorf("a cancelled graph left %d chunks and tensors %v", held, s.Tensors())
	}
}
