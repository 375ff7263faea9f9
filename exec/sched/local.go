package sched

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"marsfs/exec"
	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/kernel"
)

// Local runs chunk graphs in this process on a pool of goroutines and
// keeps the chunks in memory. It is marsfs without a cluster: the runner of
// `marsfs up --workers 0` and of tests of the layers above exec.
type Local struct {
	slots int

	Mu     sync.Mutex
	Chunks map[uint64]*tensor.Array
}

// NewLocal returns a runner that runs up to slots kernels at once
// (GOMAXPROCS when slots <= 0).
func NewLocal(slots int) *Local {
	if slots <= 0 {
		slots = runtime.GOMAXPROCS(0)
	}
	return &Local{slots: slots, Chunks: make(map[uint64]*tensor.Array)}
}

var _ exec.Runner = (*Local)(nil)

// Run implements Runner.
func (r *Local) Run(ctx context.Context, job *exec.Job) error {
	if job.Plan != nil {
		job.Plan(localPlacement(job, r.slots))
	}
	ops := job.Graph.Ops
	waiting := make([]int, len(ops)) // unfinished inputs
	uses := make([]int, len(ops))    // unfinished consumers
	succ := make([][]int, len(ops))
	for _, op := range ops {
		waiting[op.Key] = len(op.Inputs)
		for _, in := range op.Inputs {
			uses[in]++
			succ[in] = append(succ[in], op.Key)
		}
	}
	var (
		ready    []int
		made     []uint64 // chunks this job made, for cleanup on failure
		live     int
		liveB    int64
		finished int
		firstErr error
		running  int
	)
	emit := func(key int, st core.OpState, errText string) {
		if job.Observe != nil {
			job.Observe(core.Event{Key: key, State: st, Worker: "local", Attempt: 1, Err: errText, At: time.Now(), LiveChunks: live, LiveBytes: liveB})
		}
	}
	for _, op := range ops {
		if waiting[op.Key] == 0 {
			ready = append(ready, op.Key)
		}
	}
	type result struct {
		key int
		out *tensor.Array
		err error
	}
	results := make(chan result)
	free := func(key int) {
		id := job.IDs[key]
		if ops[key].Stored != 0 || job.Keep[id] {
			return
		}
		r.Mu.Lock()
		if a, ok := r.Chunks[id]; ok {
			delete(r.Chunks, id)
			live--
			liveB -= int64(a.NBytes())
		}
		r.Mu.Unlock()
		emit(key, core.Freed, "")
	}
	for finished < len(ops) {
		for firstErr == nil && ctx.Err() == nil && running < r.slots && len(ready) > 0 {
			key := ready[len(ready)-1] // LIFO, as Dask: finish what was started
			ready = ready[:len(ready)-1]
			op := ops[key]
			if op.Stored != 0 {
				r.Mu.Lock()
				_, ok := r.Chunks[op.Stored]
				r.Mu.Unlock()
				if !ok {
					firstErr = fmt.Errorf("op %d: stored chunk %d is gone", key, op.Stored)
					break
				}
				finished++
				emit(key, core.Finished, "")
				for _, s := range succ[key] {
					if waiting[s]--; waiting[s] == 0 {
						ready = append(ready, s)
					}
				}
				continue
			}
			in := make([]*tensor.Array, len(op.Inputs))
			r.Mu.Lock()
			for i, k := range op.Inputs {
				in[i] = r.Chunks[job.IDs[k]]
			}
			r.Mu.Unlock()
			running++
			emit(key, core.Running, "")
			go func() {
				out, err := kernel.Run(ctx, op, in)
				results <- result{key, out, err}
			}()
		}
		if running == 0 {
			// Stored ops finish without running: the last may have.
			if firstErr == nil && ctx.Err() == nil && len(ready) == 0 && finished < len(ops) {
				firstErr = fmt.Errorf("graph stalled with %d of %d operands finished", finished, len(ops))
			}
			break
		}
		res := <-results
		running--
		if res.err != nil {
			emit(res.key, core.Fatal, res.err.Error())
			if firstErr == nil {
				firstErr = fmt.Errorf("operand %d (%s) failed on local: %w", res.key, ops[res.key].Kind, res.err)
			}
			continue
		}
		id := job.IDs[res.key]
		r.Mu.Lock()
		r.Chunks[id] = res.out
		r.Mu.Unlock()
		made = append(made, id)
		live++
		liveB += int64(res.out.NBytes())
		finished++
		emit(res.key, core.Finished, "")
		for _, in := range ops[res.key].Inputs {
			if uses[in]--; uses[in] == 0 {
				free(in)
			}
		}
		for _, s := range succ[res.key] {
			if waiting[s]--; waiting[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	err := firstErr
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		r.Mu.Lock()
		for _, id := range made {
			delete(r.Chunks, id)
		}
		r.Mu.Unlock()
		return err
	}
	return nil
}

// Fetch implements Runner.
func (r *Local) Fetch(ctx context.Context, id uint64) (*tensor.Array, error) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	a, ok := r.Chunks[id]
	if !ok {
		return nil, fmt.Errorf("no chunk %d", id)
	}
	return a, nil
}

// Where implements Runner.
func (r *Local) Where(id uint64) string {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	if _, ok := r.Chunks[id]; ok {
		return "local"
	}
	return ""
}

// Free implements Runner.
func (r *Local) Free(ids []uint64) {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	for _, id := range ids {
		delete(r.Chunks, id)
	}
}

// Len is the number of chunks the runner holds.
func (r *Local) Len() int {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	return len(r.Chunks)
}

// localPlacement is the placement of a job on a LocalRunner: one worker,
// "local", holding everything, and no order (ready operands run as they
// come).
func localPlacement(job *exec.Job, slots int) core.Placement {
	p := core.Placement{Workers: []core.WorkerLoad{{Name: "local", Slots: slots}}, Worker: make([]string, len(job.Graph.Ops))}
	for _, op := range job.Graph.Ops {
		if len(op.Inputs) == 0 {
			p.Worker[op.Key] = "local"
		}
	}
	return p
}
