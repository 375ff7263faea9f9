package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestTuneGC checks that a process with a small live heap, as the tests'
// is, collects with a goal of at least gcHeadroom of garbage once tuned,
// collection after collection.
func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	tuneGC()
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs
		pct := debug.SetGCPercent(100)
		if pct <= 100 {
			t.Fatalf("GOGC %d after a collection, want above 100 for a small heap", pct)
		}
	}
}
