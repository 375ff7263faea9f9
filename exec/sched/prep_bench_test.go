package sched

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/tensor"
)

// startRunner runs a job only as far as the scheduler goes before its
// first operand can run: it builds the job's Core as Scheduler.Run does,
// with the defaults of marsfs up (two workers of two slots), tells it of
// the workers and starts it, then fails the job. It counts the RunOps of
// the first dispatch.
type startRunner struct {
	sent int
}

var errStopped = errors.New("stopped after Start")

func (r *startRunner) Run(ctx context.Context, job *core.Job) error {
	machine := core.New(job.Graph, job.IDs, job.Keep, core.Options{Depth: 32, UnitOps: 64,
		Planned: job.Plan, Order: job.Order, Observe: job.Observe})
	machine.Step(core.Input{Kind: core.InWorkerUp, Worker: "w1", Slots: 2})
	machine.Step(core.Input{Kind: core.InWorkerUp, Worker: "w2", Slots: 2})
	out := machine.Step(core.Input{Kind: core.InStart})
	r.sent += len(out.Run)
	return errStopped
}

func (r *startRunner) Fetch(ctx context.Context, id uint64) (*tensor.Array, func(), error) {
	return nil, nil, errStopped
}
func (r *startRunner) Where(id uint64) string { return "" }
func (r *startRunner) Put(context.Context, uint64, *tensor.Array) error {
	return errStopped
}
func (r *startRunner) Free(ids []uint64) {}

// BenchmarkPrepare times overheadSpec from Submit to the Core's first
// dispatch: parsing, tiling, fusion, chunk IDs, the graph's record, the
// plan and Core.Start, which run before any worker has work. It reports
// the CPU seconds a run, garbage collection included.
func BenchmarkPrepare(b *testing.B) {
	r := &startRunner{}
	e := engine.New(r)
	defer e.Close()
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := prepCPU()
	for b.Loop() {
		// A session a run, as bench/run clones one: the graphs of earlier
		// runs do not weigh on the collector.
		sess, err := e.NewSession("bench")
		if err != nil {
			b.Fatal(err)
		}
		g, err := sess.Submit(overheadSpec)
		if err != nil {
			b.Fatal(err)
		}
		if st := g.Wait(ctx); st.State != engine.Failed {
			b.Fatalf("graph %v", st.State)
		}
		sess.Close()
	}
	if r.sent == 0 {
		b.Fatal("Start sent no operand")
	}
	b.ReportMetric((prepCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// prepCPU is the CPU time (user and system) the process has used.
func prepCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
