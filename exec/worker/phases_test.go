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
	a.started = s.restart()
	s.begin(a)
	aLoaded := s.enter(core.Computing)
	aComputed := s.enter(core.Storing)
	if tm := s.reached(a); tm.Phase != core.Storing || tm.Computed != aComputed || tm.Loaded != aLoaded {
		t.Fatalf("a: %+v", tm)
	}
	b.started = aComputed // it follows in the slot, maybe in the same microsecond
	s.begin(b)
	if tm := s.reached(b); tm.Phase != core.Loading || tm.Since != b.started || tm.Loaded != 0 {
		t.Fatalf("b, just begun, seen as %+v", tm)
	}
	bLoaded := s.enter(core.Computing)
	if tm := s.reached(b); tm.Phase != core.Computing || tm.Since != bLoaded || tm.Computed != 0 {
		t.Fatalf("b, computing, seen as %+v", tm)
	}
}
