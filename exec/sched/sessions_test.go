package sched

import (
	"context"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/tensor"
)

// waitDone waits for graph g to end and fails the test unless it succeeded.
func waitDone(t *testing.T, g *engine.Graph) engine.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := g.Wait(ctx)
	if st.State != engine.Succeeded {
		t.Fatalf("graph %d: %s (%s)", g.ID(), st.State, g.Err())
	}
	return st
}

// fetchNamed fetches the session's tensor called name.
func fetchNamed(t *testing.T, s *engine.Session, name string) *tensor.Array {
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

// newLocal returns NewLocal(slots), closed when the test ends.
func newLocal(t testing.TB, slots int) *Scheduler {
	s := NewLocal(slots)
	t.Cleanup(func() { s.Close() })
	return s
}
