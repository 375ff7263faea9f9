package sched

import (
	"net"

	"marsfs/exec/worker"
)

// LocalWorker is the name of the worker of a scheduler made by NewLocal.
const LocalWorker = "local"

// NewLocal returns a scheduler with one worker of slots slots (GOMAXPROCS
// when slots <= 0) in this process, keeping its chunks in the heap: marsfs
// without a cluster, the runner of `marsfs up --workers 0` and of the
// tests of the layers above. It schedules exactly as a scheduler of worker
// processes does, the same Core driving the same worker over the same
// control protocol, on an in-memory connection instead of TCP.
func NewLocal(slots int) *Scheduler { return NewLocalWith(worker.Config{Slots: slots}) }

// NewLocalWith is NewLocal with the worker of cfg (its Name is
// LocalWorker; its Mem must not be negative).
func NewLocalWith(cfg worker.Config) *Scheduler {
	s := newScheduler(Config{Name: "scheduler"}, 0)
	cfg.Name = LocalWorker
	// New fails only for a negative memory bound.
	w, _ := worker.New(cfg)
	rw := &remoteWorker{name: LocalWorker, slots: w.Slots(), local: w}
	s.workers[LocalWorker] = rw
	sc, wc := net.Pipe()
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		w.ServeControl(wc)
	}()
	go func() {
		defer s.wg.Done()
		s.serve(rw, sc)
	}()
	return s
}

// Len is the number of chunks the scheduler keeps (kept by jobs or put),
// on all its workers.
func (s *Scheduler) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir.Len()
}
