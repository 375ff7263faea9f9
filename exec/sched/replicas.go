package sched

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/custody"
	"marsfs/exec/wire"
	"marsfs/tensor"
)

// This file holds what the scheduler does for the chunks of uploads, which
// no lineage can make again: it keeps each on two workers (when there are
// two), and when a worker holding one copy goes, it promotes the other
// and makes a new second copy on another worker.

// Put stores a as chunk id on the two connected workers holding the fewest
// kept bytes (one, when only one is connected), as if a job had made and
// kept it: so an upload's chunks, put one after the other, spread evenly,
// and one worker's loss loses none of them. It sends the chunk on the
// workers' chunk services, not their control connections, and does not
// keep a.
func (s *Scheduler) Put(ctx context.Context, id uint64, a *tensor.Array) error {
	if err := a.Check(); err != nil {
		return err
	}
	// As a job does, an upload waits for a worker to put its chunks on.
	if err := s.WaitWorkers(ctx, 1); err != nil {
		return fmt.Errorf("put chunk %d: %w", id, err)
	}
	targets := s.leastHeld(2, "")
	if len(targets) == 0 {
		return errors.New("put: no worker connected")
	}
	errs := make([]error, len(targets))
	done := make(chan int, len(targets))
	for i, w := range targets {
		go func() {
			errs[i] = s.putOn(ctx, w, id, a)
			done <- i
		}()
	}
	for range targets {
		<-done
	}
	nb := int64(a.NBytes())
	var put []core.Location
	for i, w := range targets {
		if errs[i] == nil {
			put = append(put, core.Location{ID: id, Worker: w.name, NBytes: nb})
		}
	}
	if len(put) == 0 {
		return fmt.Errorf("put chunk %d on %s: %w", id, targets[0].name, errs[0])
	}
	c := custody.Chunk{ID: id, NBytes: nb, Upload: true}
	for _, loc := range put {
		c.Workers = append(c.Workers, loc.Worker)
	}
	s.mu.Lock()
	s.dir.Place(0, c) // one copy put: a second is asked for
	s.notify()
	out := s.takeOut()
	s.mu.Unlock()
	s.carry(out)
	return nil
}

// copyInBackground starts copyAgain of cs, but for the chunks being
// copied already. s.mu is held.
func (s *Scheduler) copyInBackground(cs []custody.Copy) {
	if len(cs) == 0 || s.closed {
		return
	}
	var todo []custody.Copy
	for _, c := range cs {
		if !s.copying[c.ID] {
			s.copying[c.ID] = true
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return
	}
	s.wg.Add(1)
	go s.copyAgain(todo)
}

// leastHeld returns up to n connected workers other than except, and
// not leaving, as the directory ranks them (custody.Directory.Targets:
// the fewest bytes of kept chunks first, an upload's first copy on the
// one holding fewer first copies).
func (s *Scheduler) leastHeld(n int, except string) []*remoteWorker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connected(s.dir.Targets(n, except))
}

// connected returns the connected workers of names, in their order.
// s.mu is held.
func (s *Scheduler) connected(names []string) []*remoteWorker {
	var ws []*remoteWorker
	for _, name := range names {
		if w := s.workers[name]; w != nil && w.cc != nil && !w.leaving {
			ws = append(ws, w)
		}
	}
	return ws
}

// putOn stores a as chunk id on worker w.
func (s *Scheduler) putOn(ctx context.Context, w *remoteWorker, id uint64, a *tensor.Array) error {
	if w.local != nil {
		// The store would keep a itself; the caller may reuse it.
		c := &tensor.Array{DType: a.DType, Shape: slices.Clone(a.Shape), Data: slices.Clone(a.Data)}
		return w.local.Put(id, c)
	}
	return wire.PutChunk(ctx, w.addr, id, a, s.cfg.SecretKey)
}

// loseCopies forgets the chunks on worker name, which has gone
// (custody.Directory.WorkerDown): an upload with a copy left gets a new
// second copy in the background, a chunk with none is lost. s.mu is
// held.
func (s *Scheduler) loseCopies(name string) {
	s.dir.WorkerDown(name)
	out := s.takeOut()
	s.notify()
	s.copyInBackground(out.Copy)
}

// copyAgain makes the second copies cs asks for, one after the other.
func (s *Scheduler) copyAgain(cs []custody.Copy) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Minute)
	defer cancel()
	for _, c := range cs {
		out, made := s.copyOne(ctx, c)
		s.mu.Lock()
		delete(s.copying, c.ID)
		if !made {
			s.dir.CopyFailed(c.ID) // asked for again at the next change of the workers
		}
		s.mu.Unlock()
		// A copy that became the chunk (its first went meanwhile) wants
		// a second copy in turn; one freed meanwhile is freed.
		s.carry(out)
	}
}

// copyOne makes the copy c of an uploaded chunk, reading the chunk's
// first copy (the directory's choice of From may have gone since), and
// tells the directory. It returns what the directory answers, and
// whether the copy was made.
func (s *Scheduler) copyOne(ctx context.Context, c custody.Copy) (custody.Output, bool) {
	s.mu.Lock()
	to := s.connected([]string{c.To})
	ch, held := s.dir.Chunk(c.ID)
	s.mu.Unlock()
	if len(to) == 0 || !held || len(ch.Workers) > 1 {
		return custody.Output{}, false // nowhere to copy to, freed, or copied
	}
	a, release, err := s.Fetch(ctx, c.ID)
	if err != nil {
		return custody.Output{}, false
	}
	n := ch.NBytes
	err = s.putOn(ctx, to[0], c.ID, a)
	release()
	if err != nil {
		return custody.Output{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir.Copied(c, n) {
		s.recopied.Add(1)
	}
	s.notify()
	out := s.takeOut()
	out.Claim = nil // put, not made: the worker keeps it as an upload's
	return out, true
}

// Copies is the number of uploaded chunks held on two workers.
func (s *Scheduler) Copies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir.Copies()
}
