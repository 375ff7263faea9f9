package sched

import (
	"testing"

	"marsfs/exec/core"
)

// TestEventBatch: events given one at a time, their timings in one
// variable the Core reuses (valid only during the call), reach ObserveAll
// in order with their own timings, in batches of at most maxBatch, and a
// note comes after the events before it.
func TestEventBatch(t *testing.T) {
	var got []core.Event
	var times []int64
	calls := 0
	job := &core.Job{ObserveAll: func(evs []core.Event) {
		calls++
		if len(evs) > maxBatch {
			t.Errorf("a batch of %d events, more than %d", len(evs), maxBatch)
		}
		for _, ev := range evs {
			got = append(got, ev)
			if ev.Timing != nil {
				times = append(times, ev.Timing.Received)
			} else {
				times = append(times, 0)
			}
		}
	}}
	b := &eventBatch{job: job}
	var shared core.Timing // as the Core's: rewritten before each event
	n := maxBatch + 10
	for k := range n {
		ev := core.Event{Key: k, State: core.Finished}
		if k%3 == 0 {
			shared.Received = int64(1000 + k)
			ev.Timing = &shared
		}
		b.add(ev)
		if k == 5 {
			b.note(core.Event{Err: "a note"})
		}
	}
	b.flush()
	b.flush() // nothing more
	if len(got) != n+1 {
		t.Fatalf("%d events observed, want %d", len(got), n+1)
	}
	if calls != 4 { // up to the note, the note, a full batch, the rest
		t.Errorf("%d calls to ObserveAll, want 4", calls)
	}
	k := 0
	for i, ev := range got {
		if i == 6 {
			if ev.Key != core.NoteKey || ev.Err != "a note" {
				t.Fatalf("event 6 is %+v, want the note", ev)
			}
			continue
		}
		if ev.Key != k {
			t.Fatalf("event %d has key %d, want %d", i, ev.Key, k)
		}
		want := int64(0)
		if k%3 == 0 {
			want = int64(1000 + k)
		}
		if times[i] != want {
			t.Fatalf("event of op %d carries timing %d, want %d", k, times[i], want)
		}
		k++
	}
}

// TestEventBatchWithoutObserveAll: a job with Observe alone is given
// each event as it comes.
func TestEventBatchWithoutObserveAll(t *testing.T) {
	var keys []int
	b := &eventBatch{job: &core.Job{Observe: func(ev core.Event) { keys = append(keys, ev.Key) }}}
	b.add(core.Event{Key: 1})
	b.add(core.Event{Key: 2})
	if len(keys) != 2 {
		t.Fatalf("observed %v before a flush, want both", keys)
	}
}
