package main

import (
	"marsfs/tensor/codec/zarr"
	"marsfs/tensor/kernel"

	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcHeadroom is the least garbage a marsfs process lets its heap gather
// before the collector runs: the heap's goal is the live heap plus the
// larger of itself (GOGC=100) and gcHeadroom.
//
// A worker whose chunks live in shared memory keeps little in its heap
// (control state and chunks under 64 KiB), yet allocates for every op it
// runs: with the default goal of twice a live heap of a megabyte, a stream
// of tiny ops pays a collection every few milliseconds, a tenth of its CPU.
// The headroom bounds what a process may hold beyond the default, 16 MiB,
// while a process with a large live heap (a scheduler holding big graphs, a
// worker with a heap store) collects as by default.
const gcHeadroom = 16 << 20

// tuneGC sets the collector's goal to keep at least gcHeadroom of garbage
// (see gcHeadroom), re-reading the live heap after every collection. A GOGC
// set in the environment is left alone.
func tuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tune := func() {
		metrics.Read(sample)
		pct := 100
		if live := sample[0].Value.Uint64(); live < gcHeadroom {
			// The runtime's least heap goal is 4 MiB scaled by GOGC:
			// a live heap counted as 4 MiB or more keeps it within
			// the headroom.
			pct = int(gcHeadroom * 100 / max(live, 4<<20))
		}
		debug.SetGCPercent(pct)
	}
	var after func(*gcCycle)
	after = func(c *gcCycle) {
		tune()
		runtime.SetFinalizer(c, after) // again after the next collection
	}
	tune()
	runtime.SetFinalizer(&gcCycle{}, after)
}

// A gcCycle is unreachable as soon as it is made: its finalizer runs after
// each collection.
type gcCycle struct{ _ [16]byte }

// A process that went quiet after work gives its free heap back: the
// runtime returns freed pages to the system slowly by itself (a worker that
// ran a large graph kept gigabytes resident for minutes), so once a period
// of giveBackEvery allocates less than quietAlloc after at least workAlloc
// was allocated since the last time, giveBack collects and returns every
// free page at once (debug.FreeOSMemory). The collection also runs the
// cleanups of chunks mapped from other processes that nothing references
// any more, which unmaps them.
const (
	giveBackEvery = 2 * time.Second
	quietAlloc    = 4 << 20
	workAlloc     = 64 << 20
)

// giveBack watches the process's allocations every period until ctx is
// done, and gives its free memory back when it goes quiet after work.
func giveBack(ctx context.Context, period time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocs := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	last := allocs()
	given := last
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := allocs()
		if now-last < quietAlloc && now-given >= workAlloc {
			// Two collections: sync.Pools (the kernels' reused buffers,
			// a store chunk's worth each) keep what one collection
			// finds unused until the next.
			zarr.Release()          // the zstd codecs' grown buffers
			kernel.ReleaseScratch() // the kernels' scratch buffers
			runtime.GC()
			debug.FreeOSMemory()
			now = allocs()
			given = now
		}
		last = now
	}
}
