package sim

import (
	"flag"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/tensor/chunk"
)

var measure = flag.Bool("measure", false, "run the measurements of docs/architecture.md (minutes) and print their tables")

// randomAssign places each initial op on a worker drawn from a hash of
// its key: no locality, even on average.
func randomAssign(g *chunk.Graph, rank []int, ws []core.WorkerLoad) []string {
	out := make([]string, len(g.Ops))
	for _, op := range g.Ops {
		if len(op.Inputs) == 0 && op.Stored == 0 {
			h := fnv.New32a()
			fmt.Fprint(h, op.Key)
			out[op.Key] = ws[int(h.Sum32())%len(ws)].Name
		}
	}
	return out
}

// noAssign places no initial op: each goes to the first worker with room
// and later ops follow their inputs (locality only).
func noAssign(g *chunk.Graph, rank []int, ws []core.WorkerLoad) []string {
	return make([]string, len(g.Ops))
}

// keyOrder ranks ops in key order: the tiler's, which makes every map of
// a reduction before its combines (breadth-first).
func keyOrder(g *chunk.Graph) []int {
	r := make([]int, len(g.Ops))
	for k := range r {
		r[k] = k
	}
	return r
}

// one runs one graph of spec on w workers with no fault and returns the
// run's stats.
func one(t *testing.T, workers int, spec string, assign core.AssignFunc, order core.OrderFunc) Stats {
	t.Helper()
	st, err := New(Config{Seed: 1, Schedulers: 1, Workers: workers, Sessions: 1, Graphs: 1, Specs: []string{spec},
		Assign: assign, Order: order, Deadline: 3600 * s}).Run()
	if err != nil {
		t.Fatal(err)
	}
	if st.Open != nil {
		t.Fatal(st.Open)
	}
	return st
}

func balance(st Stats) float64 {
	var sum, most int64
	for _, b := range st.WorkerBusy {
		sum += b
		most = max(most, b)
	}
	if sum == 0 {
		return 0
	}
	return float64(most) / (float64(sum) / float64(len(st.WorkerBusy)))
}

// TestMeasure prints the tables of docs/architecture.md, "The cluster at
// scale" (-measure).
func TestMeasure(t *testing.T) {
	if !*measure {
		t.Skip("-measure runs the measurements")
	}
	var b strings.Builder
	for _, w := range []int{100, 1000} {
		specs := []struct{ name, text string }{
			{"x*y sum", fmt.Sprintf("x = rand(%d, chunks=250000, seed=1)\ny = rand(%d, chunks=250000, seed=2)\nz = (x * y).sum()", w*4*250000, w*4*250000)},
			{"gram x.T@x", fmt.Sprintf("a = rand((%d, 256), chunks=(4096, 256), seed=3)\ng = a.T @ a", w*4*4096)},
			{"rechunk", fmt.Sprintf("x = rand((%d, 512), chunks=(512, 512), seed=4)\ny = x.rechunk((%d, 64)).sum(axis=0)", w*2*512, w*2*512)},
		}
		fmt.Fprintf(&b, "\n%d workers (2 slots each)\n| graph | ops | assignment | makespan | bytes moved | balance (max/mean busy) |\n|---|---|---|---|---|---|\n", w)
		for _, sp := range specs {
			p, err := planOf(sp.text)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range []struct {
				name string
				f    core.AssignFunc
			}{{"seed (exec/plan)", nil}, {"random", randomAssign}, {"locality only", noAssign}} {
				st := one(t, w, sp.text, a.f, nil)
				fmt.Fprintf(&b, "| %s | %d | %s | %.3f s | %.1f MB | %.2f |\n", sp.name, len(p.g.Ops), a.name, float64(st.LongestGraph)/1e9, float64(st.BytesMoved)/1e6, balance(st))
			}
		}
	}
	fmt.Fprintf(&b, "\ntree reduction, peak chunks alive (all workers)\n| workers | chunks | order | peak chunks | peak MB | makespan |\n|---|---|---|---|---|---|\n")
	for _, w := range []int{100, 1000} {
		text := fmt.Sprintf("x = rand(%d, chunks=100000, seed=5)\ny = x.sum()", w*64*100000)
		for _, o := range []struct {
			name string
			f    core.OrderFunc
		}{{"depth-first (exec/plan)", nil}, {"breadth-first (key order)", keyOrder}} {
			st := one(t, w, text, nil, o.f)
			fmt.Fprintf(&b, "| %d | %d | %s | %d (%.1f a worker) | %.1f | %.3f s |\n", w, w*64, o.name, st.PeakLive, float64(st.PeakLive)/float64(w), float64(st.PeakLiveBytes)/1e6, float64(st.LongestGraph)/1e9)
		}
	}
	fmt.Fprintf(&b, "\nthe ring under churn (a fault every 1-3 s for 60 s, 5 schedulers, 20 sessions of 3 graphs)\n| workers | takeovers | writes | write p50 | p99 | max | refused or moved | graphs failed | open |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range []int{100, 1000} {
		for sd := uint64(1); sd <= 3; sd++ {
			cfg := Config{Seed: sd, Schedulers: 5, Workers: w, Sessions: 20, Graphs: 3, Faults: true, FaultsUntil: 60 * s, Think: 3 * s}
			st, err := New(cfg).Run()
			if err != nil {
				t.Fatal(err)
			}
			ns := slices.Clone(st.WriteNs)
			slices.Sort(ns)
			q := func(f float64) float64 {
				if len(ns) == 0 {
					return 0
				}
				return float64(ns[int(f*float64(len(ns)-1))]) / 1e6
			}
			open := "-"
			if st.Open != nil {
				open = "1"
			}
			fmt.Fprintf(&b, "| %d (seed %d) | %d | %d | %.1f ms | %.0f ms | %.0f ms | %d | %d | %s |\n", w, sd, st.Takeovers, len(ns), q(0.5), q(0.99), q(1), st.Refused, st.GraphsFailed, open)
		}
	}
	fmt.Fprintf(&b, "\nscheduler CPU and memory per operand (core.New and every Step of one job, 1,000 workers)\n| ops | Core CPU | per op | heap after core.New | per op |\n|---|---|---|---|---|\n")
	for _, n := range []int{100_000, 1_000_000} {
		text := fmt.Sprintf("x = ones(%d, chunks=100)\ny = (x + 1).sum()", n/2*100)
		p, err := planOf(text)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]uint64, len(p.g.Ops))
		for k := range ids {
			ids[k] = uint64(k + 1)
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		c := core.New(p.g, ids, map[uint64]bool{}, core.Options{UnitOps: 256})
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
		runtime.KeepAlive(c)
		t0 := time.Now()
		st := one(t, 1000, text, nil, nil)
		_ = t0
		fmt.Fprintf(&b, "| %d | %.2f s | %.2f µs | %.1f MB | %d B |\n", len(p.g.Ops), float64(st.CoreNs)/1e9, float64(st.CoreNs)/1e3/float64(st.CoreOps), float64(heap)/1e6, heap/int64(len(p.g.Ops)))
	}
	t.Log(b.String())
}
