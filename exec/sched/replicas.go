package sched

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"marsfs/exec/core"
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
	s.mu.Lock()
	s.chunks[id] = put[0]
	s.uploads[id] = true
	delete(s.lost, id)
	if len(put) > 1 {
		s.copies[id] = put[1]
	}
	s.notify()
	s.mu.Unlock()
	return nil
}

// copyLater makes the second copies that uploaded chunks lack (their
// worker went when no other was there to copy to), now that a worker has
// connected. s.mu is held.
func (s *Scheduler) copyLater() {
	var ids []uint64
	for id := range s.uploads {
		if _, ok := s.copies[id]; !ok {
			ids = append(ids, id)
		}
	}
	s.copyInBackground(ids)
}

// copyInBackground starts copyAgain of ids. s.mu is held.
func (s *Scheduler) copyInBackground(ids []uint64) {
	if len(ids) == 0 || s.closed {
		return
	}
	slices.Sort(ids)
	s.wg.Add(1)
	go s.copyAgain(ids)
}

// leastHeld returns up to n connected workers other than except, and
// not leaving, those holding the fewest bytes of kept chunks first. For an
// upload's chunk (n 2), the first two are ordered so that its first copy,
// the one jobs read, goes to the one holding the fewer first copies: the
// second copies balance the bytes held, and with them alone every first
// copy of an upload would land on the same worker, and the graphs reading
// it run there.
func (s *Scheduler) leastHeld(n int, except string) []*remoteWorker {
	s.mu.Lock()
	defer s.mu.Unlock()
	held, first := map[string]int64{}, map[string]int64{}
	for _, loc := range s.chunks {
		held[loc.Worker] += loc.NBytes
		first[loc.Worker] += loc.NBytes
	}
	for _, loc := range s.copies {
		held[loc.Worker] += loc.NBytes
	}
	var ws []*remoteWorker
	for _, name := range core.SortedKeys(s.workers) {
		if w := s.workers[name]; w.cc != nil && name != except && !w.leaving {
			ws = append(ws, w)
		}
	}
	slices.SortStableFunc(ws, func(a, b *remoteWorker) int {
		return cmp.Compare(held[a.name], held[b.name])
	})
	ws = ws[:min(n, len(ws))]
	if len(ws) == 2 && first[ws[1].name] < first[ws[0].name] {
		ws[0], ws[1] = ws[1], ws[0]
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

// loseCopies forgets the chunks on worker name, which has gone. The
// uploaded chunks it held a copy of live on in their other copy, which
// becomes their first, and a new second copy is made in the background.
// s.mu is held.
func (s *Scheduler) loseCopies(name string) {
	var again []uint64
	for id, loc := range s.chunks {
		if loc.Worker != name {
			continue
		}
		if c, ok := s.copies[id]; ok && c.Worker != name {
			s.chunks[id] = c
			delete(s.copies, id)
			again = append(again, id)
			continue
		}
		delete(s.chunks, id)
		delete(s.copies, id)
		s.lost[id] = loc
	}
	for id, loc := range s.copies {
		if loc.Worker == name {
			delete(s.copies, id)
			again = append(again, id)
		}
	}
	s.notify()
	s.copyInBackground(again)
}

// copyAgain makes a second copy of each uploaded chunk of ids that has
// one copy left, on another worker, while one is connected.
func (s *Scheduler) copyAgain(ids []uint64) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Minute)
	defer cancel()
	for i := 0; i < len(ids); i++ {
		id := ids[i]
		s.mu.Lock()
		first, ok := s.chunks[id]
		_, has := s.copies[id]
		busy := s.copying[id]
		if ok && !has && !busy {
			s.copying[id] = true
		}
		s.mu.Unlock()
		if !ok || has || busy {
			continue // freed meanwhile, copied already, or being copied
		}
		if s.copyOne(ctx, id, first) {
			ids = append(ids, id) // the copy became the first: copy it in turn
		}
		s.mu.Lock()
		delete(s.copying, id)
		s.mu.Unlock()
	}
}

// copyOne makes a second copy of uploaded chunk id, whose first is at
// first, on another worker, if one is connected. When the first's worker
// went while the copy was made (the chunk is then lost), the copy becomes
// the chunk, and promoted says so: it wants a second copy in turn.
func (s *Scheduler) copyOne(ctx context.Context, id uint64, first core.Location) (promoted bool) {
	to := s.leastHeld(1, first.Worker)
	if len(to) == 0 {
		return false // one worker left: nowhere to copy to
	}
	a, release, err := s.Fetch(ctx, id)
	if err != nil {
		return false
	}
	err = s.putOn(ctx, to[0], id, a)
	release()
	if err != nil {
		return false
	}
	s.mu.Lock()
	copied := core.Location{ID: id, Worker: to[0].name, NBytes: first.NBytes}
	_, still := s.chunks[id]
	switch lost, ok := s.lost[id]; {
	case still:
		s.copies[id] = copied
		s.recopied.Add(1)
	case ok && lost.NBytes == first.NBytes && s.uploads[id]:
		// The first copy's worker went while this one was made: this one
		// is the chunk now, and wants a second copy in turn.
		s.chunks[id] = copied
		delete(s.lost, id)
		s.recopied.Add(1)
		still, promoted = true, true
	}
	s.notify()
	s.mu.Unlock()
	if !still {
		// The chunk was freed while copied: the copy goes too.
		if cc, _ := s.conn(to[0].name); cc != nil {
			cc.Send(&wire.Msg{Kind: wire.MsgFree, IDs: []uint64{id}})
		}
	}
	return promoted
}

// Copies is the number of uploaded chunks held on two workers.
func (s *Scheduler) Copies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.copies)
}
