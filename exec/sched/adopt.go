package sched

import (
	"context"
	"fmt"
	"slices"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/wire"
)

// This file holds what the scheduler does when a worker comes back, and
// when one leaves cleanly.
//
// A worker the scheduler gave up on (memberlist declared it dead during a
// pause, or its connection broke) keeps the chunks it held for a grace
// (worker.Config.OrphanGrace), and offers them (MsgHeld: IDs and sizes)
// on the next control connection. The scheduler takes back each that it
// lost and has not made again meanwhile, when its size is the size it
// knew (MsgAdopt): a tensor whose chunks come back this way is stored
// again without a byte recomputed. What it does not take the worker drops
// after the grace.
//
// A worker that leaves cleanly (SIGTERM) says so first (MsgLeaving): the
// scheduler moves the kept chunks it holds to the other workers, then
// lets it go (MsgHandedOff).

// adoptHeld takes back, from worker w on control connection cc, the
// chunks it offers that the scheduler lost.
func (s *Scheduler) adoptHeld(w *remoteWorker, cc *wire.Conn, m *wire.Msg) {
	var ids, unwanted []uint64
	var nbytes int64
	s.mu.Lock()
	s.sweepOffers() // offers come seldom: when a connection breaks
	for i, id := range m.IDs {
		n := m.Sizes[i]
		if l, ok := s.lost[id]; ok && l.NBytes == n {
			if _, made := s.chunks[id]; !made {
				s.chunks[id] = core.Location{ID: id, Worker: w.name, NBytes: n}
				delete(s.lost, id)
				ids, nbytes = append(ids, id), nbytes+n
				continue
			}
		}
		// An upload's chunk whose other copy lives: this one is its second
		// copy again.
		if first, ok := s.chunks[id]; ok && s.uploads[id] && first.Worker != w.name && first.NBytes == n {
			if _, has := s.copies[id]; !has {
				s.copies[id] = core.Location{ID: id, Worker: w.name, NBytes: n}
				ids, nbytes = append(ids, id), nbytes+n
				continue
			}
		}
		if m.Session != 0 {
			// Taken for this scheduler by its claim (see Claim) but
			// made again or freed meanwhile: nobody else names it.
			unwanted = append(unwanted, id)
			continue
		}
		s.remember(w.name, id, n)
	}
	s.adopted += len(ids)
	s.copyLater() // an upload taken back wants its second copy
	s.notify()
	s.mu.Unlock()
	if len(unwanted) > 0 {
		cc.Send(&wire.Msg{Kind: wire.MsgFree, Session: m.Session, Epoch: m.Epoch, IDs: unwanted})
	}
	if len(ids) == 0 {
		return
	}
	cc.Send(&wire.Msg{Kind: wire.MsgAdopt, IDs: ids})
	msg := fmt.Sprintf("worker %s came back holding %d of the chunks lost with it (%d bytes): re-adopted, not recomputed", w.name, len(ids), nbytes)
	if m.Session != 0 {
		msg = fmt.Sprintf("worker %s held %d chunks of session %d (%d bytes) for its earlier home: taken at epoch %d, not recomputed", w.name, len(ids), m.Session, nbytes, m.Epoch)
	}
	s.logf("%s", msg)
	s.Announce(msg)
}

// Adopted is the number of chunks taken back from workers that came back.
func (s *Scheduler) Adopted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.adopted
}

// logf logs through Config.Logf, if set.
func (s *Scheduler) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// handOff moves the kept chunks of worker w, which is leaving, to the
// other workers, then tells it it may go.
func (s *Scheduler) handOff(w *remoteWorker, cc *wire.Conn) {
	defer s.wg.Done()
	s.mu.Lock()
	var ids []uint64
	for id, loc := range s.chunks {
		if loc.Worker == w.name {
			ids = append(ids, id)
		}
	}
	for id, loc := range s.copies {
		if loc.Worker == w.name {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	slices.Sort(ids)
	moved, kept := 0, 0
	var nbytes int64
	for _, id := range ids {
		if s.ctx.Err() != nil {
			break
		}
		s.mu.Lock()
		first, isFirst := s.chunks[id]
		second, isCopy := s.copies[id]
		s.mu.Unlock()
		switch {
		case isFirst && first.Worker == w.name && isCopy && second.Worker != w.name:
			// An upload with its other copy elsewhere: that one is first
			// now, and a second copy is made below.
			s.mu.Lock()
			s.chunks[id] = second
			delete(s.copies, id)
			s.mu.Unlock()
			first = second
		case isFirst && first.Worker == w.name:
		case isCopy && second.Worker == w.name:
			s.mu.Lock()
			delete(s.copies, id)
			s.mu.Unlock()
		default:
			continue // freed or moved meanwhile
		}
		to := s.leastHeld(1, w.name)
		if len(to) == 0 {
			kept++
			continue // nowhere to go: the chunk leaves with the worker
		}
		src := first
		if src.Worker != w.name {
			// A second copy to make, from the first.
			if to[0].name == src.Worker {
				continue
			}
		}
		a, release, err := s.Fetch(s.ctx, id)
		if err != nil {
			continue
		}
		err = s.putOn(s.ctx, to[0], id, a)
		release()
		if err != nil {
			continue
		}
		loc := core.Location{ID: id, Worker: to[0].name, NBytes: int64(len(a.Data))}
		s.mu.Lock()
		switch cur, ok := s.chunks[id]; {
		case !ok:
			// Freed while moved.
			s.mu.Unlock()
			if c, _ := s.conn(to[0].name); c != nil {
				c.Send(&wire.Msg{Kind: wire.MsgFree, IDs: []uint64{id}})
			}
			continue
		case cur.Worker == w.name:
			s.chunks[id] = loc
		default:
			s.copies[id] = loc
		}
		s.notify()
		s.mu.Unlock()
		moved++
		nbytes += loc.NBytes
	}
	s.logf("worker %s is leaving: %d chunks (%d bytes) moved to other workers, %d with nowhere to go", w.name, moved, nbytes, kept)
	if moved > 0 {
		s.Announce(fmt.Sprintf("worker %s is leaving: %d kept chunks moved to other workers", w.name, moved))
	}
	cc.Send(&wire.Msg{Kind: wire.MsgHandedOff})
}

// adoptInJob offers the job's Core the chunks a worker came back with
// (in, a MsgHeld), and tells the worker to keep those the Core takes
// back. keyOf maps the job's chunk IDs to their ops, made on first use.
func (s *Scheduler) adoptInJob(job *core.Job, machine *core.Core, keyOf *map[uint64]int, in *input, now time.Time, outs []core.Output) []core.Output {
	if *keyOf == nil {
		*keyOf = make(map[uint64]int, len(job.IDs))
		for k, id := range job.IDs {
			if job.Graph.Ops[k].Stored == 0 {
				(*keyOf)[id] = k
			}
		}
	}
	m := &in.msg
	var ids []uint64
	for i, id := range m.IDs {
		k, ok := (*keyOf)[id]
		if !ok {
			continue
		}
		outs = append(outs, machine.Step(core.Input{Kind: core.InAdopt, Worker: in.worker, Key: k, NBytes: m.Sizes[i]}))
		if loc, ok := machine.Holder(k); ok && loc.Worker == in.worker {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		if cc, _ := s.conn(in.worker); cc != nil {
			cc.Send(&wire.Msg{Kind: wire.MsgAdopt, IDs: ids})
		}
		note(job, core.Event{At: now, Worker: in.worker, Err: fmt.Sprintf("worker %s came back holding %d chunks of the graph: taken back, not made again", in.worker, len(ids))})
	}
	return outs
}

// WaitExpected waits, at most for timeout or until ctx ends, for the
// chunks of Config.Expect to be offered back: until every worker they were
// on has connected and said what it holds, or none of them is missing. A
// restarted scheduler waits so before it serves its sessions, so that a
// read does not make again a chunk its worker was about to hand back. It
// returns how many were taken back and how many are still missing (to be
// made again from lineage when needed).
func (s *Scheduler) WaitExpected(ctx context.Context, timeout time.Duration) (adopted, missing int) {
	// A chunk whose worker the journal did not know (on[""]) may come
	// from any: then only the timeout ends the wait early of them all.
	on := map[string]bool{}
	for _, loc := range s.cfg.Expect {
		on[loc.Worker] = true
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		changed := s.Changed()
		s.mu.Lock()
		missing = 0
		for _, loc := range s.cfg.Expect {
			if _, lost := s.lost[loc.ID]; lost {
				missing++
			}
		}
		heard := true
		for name := range on {
			heard = heard && name != "" && s.offered[name]
		}
		adopted = s.adopted
		s.mu.Unlock()
		if missing == 0 || heard || ctx.Err() != nil {
			return adopted, missing
		}
		select {
		case <-ctx.Done():
		case <-deadline.C:
			return s.expectedNow()
		case <-changed:
		}
	}
}

// expectedNow counts the chunks of Config.Expect taken back and missing.
func (s *Scheduler) expectedNow() (adopted, missing int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, loc := range s.cfg.Expect {
		if _, lost := s.lost[loc.ID]; lost {
			missing++
		}
	}
	return s.adopted, missing
}

// Expected returns Config.Expect: the chunks a scheduler before this one
// kept, to be offered back.
func (s *Scheduler) Expected() []core.Location { return s.cfg.Expect }

// Unexpect forgets chunks of Config.Expect and ExpectUploads that the
// scheduler before this one kept for sessions another scheduler holds now
// (taken over while this one was down): they are not taken back, and
// WaitExpected no longer waits for them.
func (s *Scheduler) Unexpect(ids []uint64) {
	drop := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		drop[id] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var keep []core.Location
	for _, loc := range s.cfg.Expect {
		if drop[loc.ID] {
			delete(s.lost, loc.ID)
			continue
		}
		keep = append(keep, loc)
	}
	s.cfg.Expect = keep
	for id := range drop {
		if s.uploads[id] {
			delete(s.uploads, id)
			delete(s.lost, id)
		}
	}
}
