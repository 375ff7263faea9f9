package exec

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"marsfs/tensor"
	"marsfs/tensor/kernel"
)

// LocalRunner runs chunk graphs in this process on a pool of goroutines and
// keeps the chunks in memory. It is marsfs without a cluster: the runner of
// `marsfs up --workers 0` and of tests of the layers above exec.
type LocalRunner struct {
	slots int

	mu     sync.Mutex
	chunks map[uint64]*tensor.Array
}

// NewLocalRunner returns a runner that runs up to slots kernels at once
// (GOMAXPROCS when slots <= 0).
func NewLocalRunner(slots int) *LocalRunner {
	if slots <= 0 {
		slots = runtime.GOMAXPROCS(0)
	}
	return &LocalRunner{slots: slots, chunks: make(map[uint64]*tensor.Array)}
}

var _ Runner = (*LocalRunner)(nil)

// Run implements Runner.
func (r *LocalRunner) Run(ctx context.Context, job *Job) error {
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
	emit := func(key int, st OpState, errText string) {
		if job.Observe != nil {
			job.Observe(Event{Key: key, State: st, Worker: "local", Attempt: 1, Err: errText, At: time.Now(), LiveChunks: live, LiveBytes: liveB})
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
		r.mu.Lock()
		if a, ok := r.chunks[id]; ok {
			delete(r.chunks, id)
			live--
			liveB -= int64(a.NBytes())
		}
		r.mu.Unlock()
		emit(key, Freed, "")
	}
	for finished < len(ops) {
		for firstErr == nil && ctx.Err() == nil && running < r.slots && len(ready) > 0 {
			key := ready[len(ready)-1] // LIFO, as Dask: finish what was started
			ready = ready[:len(ready)-1]
			op := ops[key]
			if op.Stored != 0 {
				r.mu.Lock()
				_, ok := r.chunks[op.Stored]
				r.mu.Unlock()
				if !ok {
					firstErr = fmt.Errorf("op %d: stored chunk %d is gone", key, op.Stored)
					break
				}
				finished++
				emit(key, Finished, "")
				for _, s := range succ[key] {
					if waiting[s]--; waiting[s] == 0 {
						ready = append(ready, s)
					}
				}
				continue
			}
			in := make([]*tensor.Array, len(op.Inputs))
			r.mu.Lock()
			for i, k := range op.Inputs {
				in[i] = r.chunks[job.IDs[k]]
			}
			r.mu.Unlock()
			running++
			emit(key, Running, "")
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
			emit(res.key, Fatal, res.err.Error())
			if firstErr == nil {
				firstErr = fmt.Errorf("operand %d (%s) failed on local: %w", res.key, ops[res.key].Kind, res.err)
			}
			continue
		}
		id := job.IDs[res.key]
		r.mu.Lock()
		r.chunks[id] = res.out
		r.mu.Unlock()
		made = append(made, id)
		live++
		liveB += int64(res.out.NBytes())
		finished++
		emit(res.key, Finished, "")
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
		r.mu.Lock()
		for _, id := range made {
			delete(r.chunks, id)
		}
		r.mu.Unlock()
		return err
	}
	return nil
}

// Fetch implements Runner.
func (r *LocalRunner) Fetch(ctx context.Context, id uint64) (*tensor.Array, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.chunks[id]
	if !ok {
		return nil, fmt.Errorf("no chunk %d", id)
	}
	return a, nil
}

// Where implements Runner.
func (r *LocalRunner) Where(id uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.chunks[id]; ok {
		return "local"
	}
	return ""
}

// Free implements Runner.
func (r *LocalRunner) Free(ids []uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		delete(r.chunks, id)
	}
}

// Len is the number of chunks the runner holds.
func (r *LocalRunner) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.chunks)
}
