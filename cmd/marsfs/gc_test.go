package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
		// The finalizer runs after the collection, behind any other
		// finalizers the tests before left queued.
		pct := 100
		for deadline := time.Now().Add(5 * time.Second); pct <= 100 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			pct = debug.SetGCPercent(100)
			debug.SetGCPercent(pct)
		}
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		if live[0].Value.Uint64() >= gcHeadroom {
			t.Skipf("the live heap is %d MiB: not small, after the tests before", live[0].Value.Uint64()>>20)
		}
		if pct <= 100 {
			t.Fatalf("GOGC %d after a collection, want above 100 for a small heap", pct)
		}
		debug.SetGCPercent(100)
	}
}

// TestGiveBack allocates and drops a large heap, then checks that giveBack
// returns it to the system once the process goes quiet. It runs in a
// process of its own: this one's earlier tests leave goroutines that may
// still allocate (CI failed it under load, never quiet for 5 s).
func TestGiveBack(t *testing.T) {
	if os.Getenv("MARSFS_TEST_GIVEBACK") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGiveBack$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "MARSFS_TEST_GIVEBACK=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if bytes.Contains(out, []byte("--- SKIP")) {
			t.Skipf("%s", out)
		}
		return
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	free := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { giveBack(ctx, 50*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	var keep [][]byte
	for range 32 {
		keep = append(keep, make([]byte, 4<<20))
	}
	for _, b := range keep {
		b[0] = 1
	}
	keep = nil
	runtime.GC() // the 128 MiB are free, not yet given back
	if f := free(); f < 64<<20 {
		t.Skipf("the runtime already gave back the heap: %d bytes free", f)
	}
	deadline := time.Now().Add(5 * time.Second)
	for free() > 16<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of free heap still held after 5 s of quiet", free())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
