package core

import (
	"testing"
)

// TestTimingOnEvents feeds a run's reports with their timings through Step:
// the RUNNING event carries the started report's, a second started report
// of the run (a change of phase) makes another RUNNING event, a report of
// a stale run none, and the FINISHED event carries the done report's.
func TestTimingOnEvents(t *testing.T) {
	h := newHarness(t, graph([][]int{nil}), []int{0}, Options{}, "w1")
	h.apply(h.c.Step(Input{Kind: InStart}))
	r := h.run(0)
	step := func(in Input) []Event {
		in.Key, in.Worker = 0, r.Worker
		if in.Attempt == 0 {
			in.Attempt = r.Attempt
		}
		n := len(h.events)
		h.apply(h.c.Step(in))
		return h.events[n:]
	}
	started := Timing{Received: 100, Started: 110, Phase: Allocating, Since: 110, Slot: 1}
	evs := step(Input{Kind: InStarted, Timing: &started})
	if len(evs) != 1 || evs[0].State != Running || *evs[0].Timing != started || evs[0].Phase != Allocating {
		t.Fatalf("started: %+v", evs)
	}
	computing := Timing{Received: 100, Started: 110, Allocated: 111, Loaded: 120, Phase: Computing, Since: 120, Slot: 1}
	if evs := step(Input{Kind: InStarted, Timing: &computing}); len(evs) != 1 || evs[0].State != Running || evs[0].Phase != Computing {
		t.Fatalf("change of phase: %+v", evs)
	}
	if evs := step(Input{Kind: InStarted}); len(evs) != 0 {
		t.Fatalf("a started report without a phase, of a RUNNING op: %+v", evs)
	}
	if evs := step(Input{Kind: InStarted, Attempt: r.Attempt + 1, Timing: &computing}); len(evs) != 0 {
		t.Fatalf("a report of another run: %+v", evs)
	}
	done := Timing{Received: 100, Started: 110, Allocated: 111, Loaded: 120, Computed: 900, Stored: 905, Slot: 1}
	evs = step(Input{Kind: InFinished, NBytes: 8, Timing: &done})
	if len(evs) != 1 || evs[0].State != Finished || *evs[0].Timing != done {
		t.Fatalf("finished: %+v", evs)
	}
}

func TestTimingSpent(t *testing.T) {
	done := Timing{Received: 100, Started: 110, Allocated: 111, Loaded: 120, Computed: 900, Stored: 905}
	if got, want := done.Spent(10_000), [5]int64{10, 1, 9, 780, 5}; got != want {
		t.Errorf("spent of a done run = %v, want %v", got, want)
	}
	if done.Current() != NoPhase {
		t.Errorf("phase of a done run = %v", done.Current())
	}
	running := Timing{Received: 100, Started: 110, Allocated: 111, Loaded: 120}
	if got, want := running.Spent(1000), [5]int64{10, 1, 9, 880, 0}; got != want {
		t.Errorf("spent of a computing run = %v, want %v", got, want)
	}
	if running.Current() != Computing {
		t.Errorf("phase of a computing run = %v", running.Current())
	}
	if queued := (Timing{Received: 100}); queued.Current() != Queued || queued.Spent(150) != [5]int64{50} {
		t.Errorf("queued run: %v %v", queued.Current(), queued.Spent(150))
	}
}
