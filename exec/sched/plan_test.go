package sched

import (
	"testing"
	"time"

	"marsfs/exec/engine"
)

// TestPlanOnRunners checks that the scheduler and the local runner plan
// every graph they run, once, before it ends.
func TestPlanOnRunners(t *testing.T) {
	tc := newTestCluster(t, 2, false)
	for _, r := range []struct {
		name    string
		run     engine.Runner
		workers int
		ranked  bool
	}{{"scheduler", tc.s, 2, true}, {"local", newLocal(t, 2), 1, true}} {
		t.Run(r.name, func(t *testing.T) {
			e := engine.New(r.run)
			defer e.Close()
			sess, err := e.NewSession("test")
			if err != nil {
				t.Fatal(err)
			}
			g, err := sess.Submit("x = arange(100, chunks=10) + ones(100, chunks=25)\ny = x.sum()\n")
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-g.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("graph did not end")
			}
			select {
			case <-g.Planned():
			default:
				t.Fatal("graph ended unplanned")
			}
			p, ok := g.Plan()
			if !ok {
				t.Fatal("Plan: not planned")
			}
			if len(p.Workers) != r.workers {
				t.Errorf("%d workers, want %d", len(p.Workers), r.workers)
			}
			initial, total := 0, 0
			for _, op := range g.Chunks().Ops {
				if len(op.Inputs) == 0 && op.Stored == 0 {
					initial++
				}
				if p.Worker[op.Key] == "" {
					t.Errorf("op %d (%s) unplaced", op.Key, op.Kind)
				}
			}
			for _, n := range p.Initial {
				total += n
			}
			if total != initial {
				t.Errorf("Initial %v sums to %d, want %d initial ops", p.Initial, total, initial)
			}
			if (p.Rank != nil) != r.ranked || r.ranked && len(p.Rank) != len(g.Chunks().Ops) {
				t.Errorf("Rank %v, want ranked=%v", p.Rank, r.ranked)
			}
		})
	}
}
