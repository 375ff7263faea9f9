package sched

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"syscall"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// scaleSpec is W4 grown to about ops operands: (ones(n, chunks=10) + 1).sum()
// tiles into n/10 fused expr ops and a tree of combines of four, a third
// as many again.
func scaleSpec(ops int) string {
	return fmt.Sprintf("s = (ones(%d, chunks=10) + 1).sum()\n", ops*3/4*10)
}

// BenchmarkScale measures each phase of a graph of 10^5, 10^6 and 10^7
// operands (-bench 'Scale/1e7' for the largest alone): parse, tile, fuse,
// order, the initial assignment (a Core's New and Start on two workers of
// two slots) and the run, end to end through an engine session on a
// scheduler with two worker processes of two slots. It reports each
// phase's seconds, its CPU seconds (the process's: the workers' are not
// counted, and the machine may be shared with others, whose load the
// wall clock measures too) and the bytes the scheduler's heap holds an operand
// after it, counted from before the parse; run-B/op is the peak of the
// live heap while the graph runs (the tiled graph, and what the job, its
// Core, its record and events add to it), run-objects-B/op the peak of
// the heap's objects, garbage not yet collected included, and end-B/op what is left once the
// graph has ended and its session is closed. With MARSFS_HEAPPROFILE=DIR
// a heap profile is written after each phase (DIR/scale-1e6-tile.pprof).
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{1e5, 1e6, 1e7} {
		b.Run(expName(n), func(b *testing.B) {
			if n >= 1e7 && testing.Short() {
				b.Skip("10^7 operands take a minute")
			}
			for range b.N {
				benchScale(b, n)
			}
		})
	}
}

func benchScale(b *testing.B, n int) {
	tc := newTestCluster(b, 2, true)
	e := engine.New(tc.s)
	defer e.Close()
	sess, err := e.NewSession("bench")
	if err != nil {
		b.Fatal(err)
	}
	text := scaleSpec(n)
	base := liveHeap()
	var ops int
	var cpu0 time.Duration // the process's CPU time at the phase's start
	phase := func(name string, start time.Time) {
		took, cpu := time.Since(start), prepCPU()-cpu0
		held := liveHeap() - base
		b.ReportMetric(took.Seconds(), name+"-s")
		b.ReportMetric(cpu.Seconds(), name+"-cpu-s")
		if ops > 0 {
			b.ReportMetric(float64(held)/float64(ops), name+"-B/op")
		}
		writeHeapProfile(b, n, name)
	}

	t, cpu0 := time.Now(), prepCPU()
	tg, err := lang.Parse(text, nil)
	if err != nil {
		b.Fatal(err)
	}
	phase("parse", t)

	t, cpu0 = time.Now(), prepCPU()
	st, err := tile.StagesWith(tg, nil, tile.Options{Fused: true})
	if err != nil {
		b.Fatal(err)
	}
	ops = len(st.Graph.Ops)
	phase("tile", t)

	t, cpu0 = time.Now(), prepCPU()
	cg := fuse.Optimize(st.Graph, fuse.Options{Fuse: true, FuseExpr: true})
	st = nil
	ops = len(cg.Ops)
	phase("fuse", t)

	// Order and assignment as the scheduler's Run makes them, on a Core
	// of their own: a job's Core orders its graph in New and assigns its
	// initial ops in Start.
	ids := make([]uint64, len(cg.Ops))
	for k := range ids {
		ids[k] = uint64(k + 1)
	}
	t, cpu0 = time.Now(), prepCPU()
	// Events go to an observer, as the scheduler's do, not into Outputs.
	machine := core.New(cg, ids, nil, core.Options{Depth: 32, UnitOps: 256, Observe: func(core.Event) {}})
	phase("order", t)
	t, cpu0 = time.Now(), prepCPU()
	machine.Step(core.Input{Kind: core.InWorkerUp, Worker: "w1", Slots: 2})
	machine.Step(core.Input{Kind: core.InWorkerUp, Worker: "w2", Slots: 2})
	if out := machine.Step(core.Input{Kind: core.InStart}); len(out.Run) == 0 {
		b.Fatal("Start sent no operand")
	}
	phase("assign", t)
	runtime.KeepAlive(machine)
	machine, ids = nil, nil

	// The run, from the graph's start: the engine's chunk IDs and record,
	// the scheduler's Core (which orders and assigns again), every
	// dispatch and report. The heap's peak is sampled meanwhile.
	ctx := context.Background()
	peak := sampleHeap()
	gc0, sys0 := gcCPU(), sysCPU()
	t, cpu0 = time.Now(), prepCPU()
	g, err := sess.Start(text, tg, cg, engine.Stages{})
	if err != nil {
		b.Fatal(err)
	}
	if st := g.Wait(ctx); st.State != engine.Succeeded {
		b.Fatalf("graph %v: %s", st.State, g.Err())
	}
	took, cpu := time.Since(t), prepCPU()-cpu0
	gc, sys := gcCPU()-gc0, sysCPU()-sys0
	high, objects := peak()
	b.ReportMetric(took.Seconds(), "run-s")
	b.ReportMetric(cpu.Seconds(), "run-cpu-s")
	b.ReportMetric(gc, "run-gc-cpu-s")
	b.ReportMetric(sys.Seconds(), "run-sys-s")
	b.ReportMetric(float64(high-base)/float64(ops), "run-B/op")
	b.ReportMetric(float64(objects-base)/float64(ops), "run-objects-B/op")
	b.ReportMetric(float64(took.Nanoseconds())/1e3/float64(ops), "run-µs/op")
	b.ReportMetric(float64(ops), "operands")
	writeHeapProfile(b, n, "run")
	tt, _ := sess.Tensor("s")
	a, err := tt.Fetch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if want := float64(n*3/4*10) * 2; a.Float64s()[0] != want {
		b.Fatalf("sum %v, want %v", a.Float64s()[0], want)
	}
	tg, cg, g, tt = nil, nil, nil, nil
	sess.Close()
	b.ReportMetric(float64(liveHeap()-base)/float64(ops), "end-B/op")
	writeHeapProfile(b, n, "end")
}

// expName writes n, a power of ten, as 1e6.
func expName(n int) string {
	e := 0
	for ; n >= 10; n /= 10 {
		e++
	}
	return fmt.Sprintf("%de%d", n, e)
}

// gcCPU is the CPU seconds the collector has spent so far, as the runtime
// estimates them (its workers and the assists of the allocating
// goroutines).
func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64()
}

// sysCPU is the process's CPU time in the kernel so far: on this host
// mostly the faults of fresh pages.
func sysCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Stime.Nano())
}

// liveHeap is the bytes of the heap's live objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// sampleHeap samples the heap every 2 ms until the function it returns
// is called, which returns the most bytes the collector found live (as of
// its last cycle) and the most bytes of objects, live or not yet
// collected.
func sampleHeap() func() (live, objects int64) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var most, mostObjects int64
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(s)
		most = max(most, int64(s[0].Value.Uint64()))
		mostObjects = max(mostObjects, int64(s[1].Value.Uint64()))
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			read()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int64, int64) {
		close(stop)
		wg.Wait()
		read()
		return most, mostObjects
	}
}

// writeHeapProfile writes the heap's profile after phase into
// $MARSFS_HEAPPROFILE, when set.
func writeHeapProfile(b *testing.B, n int, phase string) {
	dir := os.Getenv("MARSFS_HEAPPROFILE")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("scale-%s-%s.pprof", expName(n), phase)))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}
