package sched

import (
	"marsfs/exec/core"
	"marsfs/exec/custody"
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
// every scheduler's directory remembers the offers it refused, and Claim
// takes those its new sessions name from there, and counts the rest lost,
// for a later offer to bring back or lineage to make again.

// claimWithin bounds the age of a remembered offer that Claim takes: a
// worker frees its orphans after its grace (worker.DefaultOrphanGrace, 2
// minutes, unless told otherwise), and a chunk adopted after that is one
// the scheduler believes in and the worker no longer holds. Half the
// default grace leaves room for a worker told a shorter one, within
// reason; the takeover comes within seconds of the offer anyway.
const claimWithin = worker.DefaultOrphanGrace / 2

// Claim makes the chunks that sessions taken over from a dead scheduler
// hold this scheduler's (custody.Directory.ClaimSession). Of kept, the
// chunks graphs kept, those a connected worker offered lately are
// adopted from it at once (MsgAdopt); the others count as lost, and every
// connected worker is asked to take those it still holds for another
// connection (the old home was paused, not killed, and its connections
// never broke), which it says it took (MsgHeld with the session) and
// adoptHeld takes back; a later offer brings the rest back, as at a
// restart, and lineage makes them again when needed. Uploads lists each
// copy of each uploaded chunk where the journal says it is: a worker
// keeps an upload whichever connection breaks, so a copy on a connected
// worker is taken as it is, the first as the chunk, another as its
// second copy; an upload with one copy left gets another, one with none
// is lost (an upload has no lineage). It returns the chunks taken and
// those still lost. The claims name session sess, taken over at epoch: a
// worker learns the epoch from them, and refuses what the session's
// earlier home sends it after (see worker.State's fence).
func (s *Scheduler) Claim(sess int, epoch uint64, kept, uploads []core.Location) (adopted, lost int) {
	ks := make([]custody.Chunk, 0, len(kept))
	for _, loc := range kept {
		ks = append(ks, custody.Chunk{ID: loc.ID, NBytes: loc.NBytes})
	}
	var us []custody.Chunk
	at := map[uint64]int{}
	for _, loc := range uploads {
		i, ok := at[loc.ID]
		if !ok {
			i = len(us)
			at[loc.ID] = i
			us = append(us, custody.Chunk{ID: loc.ID, NBytes: loc.NBytes, Upload: true})
		}
		us[i].Workers = append(us[i].Workers, loc.Worker)
	}
	s.mu.Lock()
	adopted, lost = s.dir.ClaimSession(sess, custody.Epoch(epoch), s.now(), ks, us)
	s.notify()
	out := s.takeOut()
	s.mu.Unlock()
	s.carry(out)
	return adopted, lost
}
