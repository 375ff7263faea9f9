package sched

import (
	"time"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
)

// This file holds what a scheduler does when it takes over the sessions
// of another that died (its ring predecessor, docs/marsfs.4.md, SCHEDULERS AND HOSTS).
//
// A worker has a control connection to every scheduler. When one of them
// breaks (the scheduler was killed), the chunks the worker made for it
// become orphans, and the worker offers them (MsgHeld) at once on its
// other connections: to schedulers that did not lose them, and which
// adoptHeld refuses. Memberlist declares the dead scheduler failed only
// seconds later, and its successor learns only then, from its replica of
// the dead one's journal, which chunks the dead one's sessions kept. So
// every scheduler remembers the offers it refused (offered), and Claim
// takes those its new sessions name from there, and counts the rest lost,
// for a later offer to bring back or lineage to make again.

// claimWithin bounds the age of a remembered offer that Claim takes: a
// worker frees its orphans after its grace (worker.DefaultOrphanGrace, 2
// minutes, unless told otherwise), and a chunk adopted after that is one
// the scheduler believes in and the worker no longer holds. Half the
// default grace leaves room for a worker told a shorter one, within
// reason; the takeover comes within seconds of the offer anyway.
const claimWithin = worker.DefaultOrphanGrace / 2

// An offer is a chunk a worker offered that this scheduler had not lost.
type offer struct {
	loc core.Location
	at  time.Time
}

// remember keeps worker w's offer of chunk id, of n bytes, that the
// scheduler did not take. s.mu is held.
func (s *Scheduler) remember(w string, id uint64, n int64) {
	if s.refused == nil {
		s.refused = make(map[uint64][]offer)
	}
	now := time.Now()
	var keep []offer
	for _, o := range s.refused[id] {
		if o.loc.Worker != w && now.Sub(o.at) < claimWithin {
			keep = append(keep, o)
		}
	}
	s.refused[id] = append(keep, offer{core.Location{ID: id, Worker: w, NBytes: n}, now})
}

// sweepOffers forgets the offers too old to claim: their workers have
// freed those orphans. s.mu is held.
func (s *Scheduler) sweepOffers() {
	now := time.Now()
	for id, os := range s.refused {
		keep := os[:0]
		for _, o := range os {
			if now.Sub(o.at) < claimWithin {
				keep = append(keep, o)
			}
		}
		if len(keep) == 0 {
			delete(s.refused, id)
		} else {
			s.refused[id] = keep
		}
	}
}

// forgetOffers forgets what worker w offered: it is gone, and its
// orphans with it. s.mu is held.
func (s *Scheduler) forgetOffers(w string) {
	for id, os := range s.refused {
		keep := os[:0]
		for _, o := range os {
			if o.loc.Worker != w {
				keep = append(keep, o)
			}
		}
		if len(keep) == 0 {
			delete(s.refused, id)
		} else {
			s.refused[id] = keep
		}
	}
}

// Claim makes the chunks that sessions taken over from a dead scheduler
// hold this scheduler's. Of kept, the chunks graphs kept, those a
// connected worker offered lately are adopted from it at once (MsgAdopt);
// the others count as lost, and every connected worker is asked to take
// those it still holds for another connection (the old home was paused,
// not killed, and its connections never broke), which it says it took
// (MsgHeld with the session) and adoptHeld takes back; a later offer
// brings the rest back, as at a restart, and lineage makes them again
// when needed. Uploads lists each copy
// of each uploaded chunk where the journal says it is: a worker keeps an
// upload whichever connection breaks, so a copy on a connected worker is
// taken as it is, the first as the chunk, another as its second copy;
// an upload with one copy left gets another (copyLater), one with none is
// lost (an upload has no lineage). It returns the chunks taken and those
// still lost. The claims name session sess, taken over at epoch: a worker
// learns the epoch from them, and refuses what the session's earlier home
// sends it after (see worker.State's fence).
func (s *Scheduler) Claim(sess int, epoch uint64, kept, uploads []core.Location) (adopted, lost int) {
	s.mu.Lock()
	now := time.Now()
	take := map[*remoteWorker][]uint64{}
	var missing []uint64 // kept chunks no worker offered
	connected := func(name string) *remoteWorker {
		if w := s.workers[name]; w != nil && w.cc != nil && !w.leaving {
			return w
		}
		return nil
	}
	for _, loc := range kept {
		if _, ok := s.chunks[loc.ID]; ok {
			continue
		}
		took := false
		for _, o := range s.refused[loc.ID] {
			w := connected(o.loc.Worker)
			if w == nil || o.loc.NBytes != loc.NBytes || now.Sub(o.at) >= claimWithin {
				continue
			}
			s.chunks[loc.ID] = o.loc
			take[w] = append(take[w], loc.ID)
			took = true
			break
		}
		delete(s.refused, loc.ID)
		if took {
			adopted++
		} else {
			s.lost[loc.ID] = loc
			missing = append(missing, loc.ID)
			lost++
		}
	}
	placed := map[uint64]bool{}
	for _, loc := range uploads {
		s.uploads[loc.ID] = true
		w := connected(loc.Worker)
		first, has := s.chunks[loc.ID]
		switch {
		case w == nil:
			continue
		case !has:
			s.chunks[loc.ID] = loc
		case first.Worker == loc.Worker:
			continue
		default:
			if _, two := s.copies[loc.ID]; two {
				continue
			}
			s.copies[loc.ID] = loc
		}
		take[w] = append(take[w], loc.ID) // an orphan, should it be one
		placed[loc.ID] = true
	}
	for _, loc := range uploads {
		if _, has := s.chunks[loc.ID]; !has && !placed[loc.ID] {
			s.lost[loc.ID] = loc
			placed[loc.ID] = true // counted once
			lost++
		}
	}
	for id := range placed {
		if _, has := s.chunks[id]; has {
			adopted++
		}
	}
	s.adopted += adopted
	s.copyLater() // an upload with one copy back wants its second
	s.notify()
	var all []*remoteWorker
	if len(missing) > 0 && sess != 0 && epoch > 0 {
		for _, w := range s.workers {
			if w.cc != nil && !w.leaving {
				all = append(all, w)
			}
		}
	}
	s.mu.Unlock()
	for w, ids := range take {
		w.cc.Send(&wire.Msg{Kind: wire.MsgAdopt, Session: sess, Epoch: epoch, IDs: ids})
	}
	// The chunks no worker offered may still be held for the old home's
	// connection (it was paused, its connections never broke): every
	// worker is asked to take those it holds for this scheduler at the
	// new epoch, and says which it took (MsgHeld with the session), which
	// adoptHeld takes back from lost.
	for _, w := range all {
		w.cc.Send(&wire.Msg{Kind: wire.MsgAdopt, Session: sess, Epoch: epoch, IDs: missing})
	}
	return adopted, lost
}
