package sched

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/worker"
)

// TestStaleHomeFenced is issue 30's paused home at the workers: scheduler
// s1 keeps chunks of session 5 at epoch 0 on a worker; s2 takes the
// session over at epoch 1 and makes the chunks again under the same IDs
// on the same worker (as a takeover does when the old home's connections
// never broke), while s1's connection stays up. s1, back and not yet told,
// frees the chunks and runs an op of the session at epoch 0: the worker
// refuses both, saying which epochs, and keeps the chunks for s2, which
// reads them and frees them at its epoch.
func TestStaleHomeFenced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var logged []string
	s1, err := New(ctx, Config{Fast: true, Logf: func(format string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(format, args...))
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	w, err := worker.Start(ctx, worker.Config{Name: "w1", Join: []string{s1.GossipAddr()}, Slots: 2, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s2, err := New(ctx, Config{Fast: true, Join: []string{s1.GossipAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for _, s := range []*Scheduler{s1, s2} {
		if err := s.WaitWorkers(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	old := zerosJob(2)
	old.Session, old.Epoch = 5, 0
	if err := s1.Run(ctx, old); err != nil {
		t.Fatal(err)
	}
	taken := zerosJob(2)
	taken.Session, taken.Epoch = 5, 1
	if err := s2.Run(ctx, taken); err != nil {
		t.Fatal(err)
	}

	s1.FreeFor(5, 0, old.IDs)
	if !waitChange(s1, 10*time.Second, func() bool { return s1.fencedFrees.Load() > 0 }) {
		t.Fatal("the worker did not answer the stale free")
	}
	mu.Lock()
	log := strings.Join(logged, "\n")
	mu.Unlock()
	if want := "worker w1 refuses a free of 2 chunks of session 5 at epoch 0: it has seen epoch 1 of the session"; !strings.Contains(log, want) {
		t.Errorf("the stale home's log does not say %q:\n%s", want, log)
	}
	stale := zerosJob(1)
	stale.Session, stale.Epoch = 5, 0
	stale.IDs[0] = old.IDs[0]
	err = s1.Run(ctx, stale)
	if err == nil || !strings.Contains(err.Error(), "refuses operand 0's run of session 5 at epoch 0: it has seen epoch 1") {
		t.Errorf("a run of the stale epoch: %v", err)
	}
	for _, id := range taken.IDs {
		if _, ok := w.Store().Get(id); !ok {
			t.Errorf("chunk %d gone from the worker after the stale free", id)
		}
		a, release, err := s2.Fetch(ctx, id)
		if err != nil {
			t.Fatalf("the new home reads chunk %d: %v", id, err)
		}
		if len(a.Int64s()) != 3 {
			t.Errorf("chunk %d: %v", id, a.Int64s())
		}
		release()
	}
	s2.FreeFor(5, 1, taken.IDs)
	if !waitWorkers([]*worker.Worker{w}, 10*time.Second, func() bool { return w.Store().Len() == 0 }) {
		t.Errorf("the worker holds %d chunks after the new home freed them", w.Store().Len())
	}
}

// TestClaimFromPausedHome: s1 keeps chunks of session 5 on a worker and
// pauses with its connection up, so the worker offers nothing; s2 takes
// the session over at epoch 1 and claims the chunks. The worker takes
// them from s1's connection for s2's and says so, and s2 has them back
// without recomputing them; s1's free of them, back from its pause, is
// refused.
func TestClaimFromPausedHome(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s1, err := New(ctx, Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	w, err := worker.Start(ctx, worker.Config{Name: "w1", Join: []string{s1.GossipAddr()}, Slots: 2, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s2, err := New(ctx, Config{Fast: true, Join: []string{s1.GossipAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for _, s := range []*Scheduler{s1, s2} {
		if err := s.WaitWorkers(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	job := zerosJob(3)
	job.Session = 5
	if err := s1.Run(ctx, job); err != nil {
		t.Fatal(err)
	}
	var kept []core.Location
	for _, id := range job.IDs {
		kept = append(kept, core.Location{ID: id, NBytes: 24})
	}
	adopted, lost := s2.Claim(5, 1, kept, nil)
	if adopted != 0 || lost != 3 {
		t.Errorf("claim: %d adopted, %d lost at once; want 0 and 3 (nothing offered)", adopted, lost)
	}
	if !waitChange(s2, 10*time.Second, func() bool {
		for _, id := range job.IDs {
			if s2.Where(id) != "w1" {
				return false
			}
		}
		return true
	}) {
		t.Fatal("the new home did not take the paused one's chunks back from the worker")
	}
	s1.FreeFor(5, 0, job.IDs)
	if !waitChange(s1, 10*time.Second, func() bool { return s1.fencedFrees.Load() > 0 }) {
		t.Fatal("the worker did not refuse the stale free")
	}
	for _, id := range job.IDs {
		a, release, err := s2.Fetch(ctx, id)
		if err != nil {
			t.Fatalf("the new home reads chunk %d: %v", id, err)
		}
		if len(a.Int64s()) != 3 {
			t.Errorf("chunk %d: %v", id, a.Int64s())
		}
		release()
	}
	if n := s2.Adopted(); n != 3 {
		t.Errorf("%d chunks adopted, want 3", n)
	}
}
