package sched

import (
	"context"
	"fmt"
	"slices"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/custody"
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
// chunks it offers that the scheduler lost (custody.Directory.Offered).
func (s *Scheduler) adoptHeld(w *remoteWorker, cc *wire.Conn, m *wire.Msg) {
	cs := make([]custody.Chunk, len(m.IDs))
	for i, id := range m.IDs {
		cs[i] = custody.Chunk{ID: id, NBytes: m.Sizes[i]}
	}
	s.mu.Lock()
	n := s.dir.Offered(w.name, cs, s.now(), m.Session, custody.Epoch(m.Epoch))
	out := s.takeOut()
	var nbytes int64
	for i := range out.Claim {
		c := &out.Claim[i]
		// Offered to this scheduler: taken back as it stands, with no
		// epoch for the worker's fence to weigh.
		c.Session, c.Epoch = 0, 0
		for _, id := range c.IDs {
			if ch, ok := s.dir.Chunk(id); ok {
				nbytes += ch.NBytes
			}
		}
	}
	s.notify()
	s.mu.Unlock()
	s.carry(out)
	if n == 0 {
		return
	}
	msg := fmt.Sprintf("worker %s came back holding %d of the chunks lost with it (%d bytes): re-adopted, not recomputed", w.name, n, nbytes)
	if m.Session != 0 {
		msg = fmt.Sprintf("worker %s held %d chunks of session %d (%d bytes) for its earlier home: taken at epoch %d, not recomputed", w.name, n, m.Session, nbytes, m.Epoch)
	}
	s.logf("%s", msg)
	s.Announce(msg)
}

// Adopted is the number of chunks taken back from workers that came back.
func (s *Scheduler) Adopted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir.Adopted()
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
	ids := s.dir.HeldOn(w.name)
	s.mu.Unlock()
	moved, kept := 0, 0
	var nbytes int64
	for _, id := range ids {
		if s.ctx.Err() != nil {
			break
		}
		s.mu.Lock()
		c, ok := s.dir.Chunk(id)
		var to []*remoteWorker
		if ok && slices.Contains(c.Workers, w.name) {
			to = s.connected(s.dir.Targets(1, w.name))
		}
		s.mu.Unlock()
		switch {
		case !ok || !slices.Contains(c.Workers, w.name):
			continue // freed or moved meanwhile
		case len(to) == 0:
			kept++
			continue // nowhere to go: the chunk leaves with the worker
		case slices.Contains(c.Workers, to[0].name):
			continue // its other copy is there: a second is made once w goes
		}
		a, release, err := s.Fetch(s.ctx, id)
		if err != nil {
			continue
		}
		n := int64(len(a.Data))
		err = s.putOn(s.ctx, to[0], id, a)
		release()
		if err != nil {
			continue
		}
		s.mu.Lock()
		done := s.dir.Moved(id, w.name, to[0].name)
		s.notify()
		out := s.takeOut()
		s.mu.Unlock()
		s.carry(out) // freed while moved: the copy goes too
		if done {
			moved++
			nbytes += n
		}
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
			if s.dir.IsLost(loc.ID) {
				missing++
			}
		}
		heard := true
		for name := range on {
			heard = heard && name != "" && s.offered[name]
		}
		adopted = s.dir.Adopted()
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
		if s.dir.IsLost(loc.ID) {
			missing++
		}
	}
	return s.dir.Adopted(), missing
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
		if !drop[loc.ID] {
			keep = append(keep, loc)
		}
	}
	s.cfg.Expect = keep
	s.dir.Forget(ids)
}
