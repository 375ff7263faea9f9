package fs

import (
	"context"
	"strings"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/exec/sched"
)

// waitGraph waits for graph g to end and fails the test unless it succeeded.
func waitGraph(t *testing.T, g *engine.Graph) engine.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := g.Wait(ctx)
	if st.State != engine.Succeeded {
		t.Fatalf("graph %d: %s (%s)", g.ID(), st.State, g.Err())
	}
	return st
}

// TestSessionCtlSettings writes the settings of a session's ctl file and
// checks what the graphs submitted after them are made of.
func TestSessionCtlSettings(t *testing.T) {
	needParser(t)
	run := sched.NewLocal(2)
	defer run.Close()
	eng := engine.New(run)
	defer eng.Close()
	s, err := eng.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	spec := "a = rand(1000, chunks=100, seed=1)\nb = ((a + 1) * 2).sum()\n"
	ops := map[string]int{}
	var sums []float64
	for _, set := range []string{"", "set fuse_expr off", "set fuse_enabled off"} {
		if set != "" {
			if err := ctl(sessionVerbs, s, set); err != nil {
				t.Fatal(err)
			}
		}
		g, err := s.Submit(spec)
		if err != nil {
			t.Fatal(err)
		}
		ops[set] = waitGraph(t, g).Operands
		tt, _ := s.Tensor("b")
		b, err := tt.Fetch(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, b.Float64s()[0])
	}
	// Expression fusion folds rand, add, multiply and the sum's map into one
	// op a chunk; chain fusion alone keeps the rands apart; no fusion keeps
	// every op.
	if !(ops[""] < ops["set fuse_expr off"] && ops["set fuse_expr off"] < ops["set fuse_enabled off"]) {
		t.Errorf("operands by setting: %v", ops)
	}
	for _, v := range sums[1:] {
		if d := v - sums[0]; d > 1e-9 || d < -1e-9 {
			t.Errorf("sums differ with fusion settings: %v", sums)
		}
	}
	if text := sessionText(s, "scheduler"); !strings.Contains(text, "fuse_enabled off\nfuse_expr off\n") {
		t.Errorf("session ctl file:\n%s", text)
	}
	for _, bad := range []string{"set fuse_enabled maybe", "set frob on", "set", "close now", "closex", "frob"} {
		if err := ctl(sessionVerbs, s, bad); err == nil {
			t.Errorf("ctl %q accepted", bad)
		}
	}
}
