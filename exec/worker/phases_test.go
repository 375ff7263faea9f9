package worker

import (
	"testing"

	"marsfs/exec/core"
)

// TestSlotReached checks what the phase watcher reads of a slot: the
// phases the current run entered, never those of the run before it, even
// within the same microsecond.
func TestSlotReached(t *testing.T) {
	var s slot
	a, b := &Task{}, &Task{}
	a.timing.Started = s.restart()
	s.begin(a)
	a.timing.Loaded = s.enter(core.Computing)
	a.timing.Computed = s.enter(core.Storing)
	if tm := s.reached(a); tm.Phase != core.Storing || tm.Computed != a.timing.Computed || tm.Loaded != a.timing.Loaded {
		t.Fatalf("a: %+v", tm)
	}
	b.timing.Started = a.timing.Computed // it follows in the slot, maybe in the same microsecond
	s.begin(b)
	if tm := s.reached(b); tm.Phase != core.Loading || tm.Since != b.timing.Started || tm.Loaded != 0 {
		t.Fatalf("b, just begun, seen as %+v", tm)
	}
	b.timing.Loaded = s.enter(core.Computing)
	if tm := s.reached(b); tm.Phase != core.Computing || tm.Since != b.timing.Loaded || tm.Computed != 0 {
		t.Fatalf("b, computing, seen as %+v", tm)
	}
}
