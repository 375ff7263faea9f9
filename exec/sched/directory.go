package sched

import (
	"time"

	"marsfs/exec/core"
	"marsfs/exec/custody"
	"marsfs/exec/wire"
)

// This file holds the I/O around the chunk directory. The directory's
// rules are exec/custody's (custody.Directory, the one the simulator
// checks): which chunk is where, what a worker going loses, what an offer
// brings back, what a takeover claims, where a second copy goes. The
// scheduler tells it what happened under s.mu (a worker connected,
// leaving or dropped, chunks offered, kept, put, copied, moved, freed,
// claimed) and carries out what it answers once s.mu is released: claims
// (MsgAdopt), frees (MsgFree), recalls (MsgAdopt of a session at its
// epoch, to every worker), second copies (copyAgain).

// takeOut returns the directory's instructions so far, and clears them.
// s.mu is held.
func (s *Scheduler) takeOut() custody.Output {
	out := s.dout
	s.dout = custody.Output{}
	return out
}

// now is the directory's clock: the time since the scheduler was made,
// by the monotonic clock.
func (s *Scheduler) now() int64 { return int64(time.Since(s.born)) }

// carry carries out the directory's instructions. s.mu is not held.
//
// Claims and frees carry the session and epoch the directory gave them,
// which the worker's fence checks (a session's epoch may be 0: the
// running system numbers a new session's epoch 0). The callers strip
// them from the claims of offers taken back (adoptHeld: the worker
// offered them to this scheduler), and drop the claims of copies the
// scheduler put (copyOne: the worker keeps an upload's chunk whichever
// connection breaks, where an adopted chunk would be an orphan of this
// connection).
func (s *Scheduler) carry(out custody.Output) {
	for _, c := range append(out.Claim, out.Recall...) {
		if c.Worker == "" || len(c.IDs) == 0 {
			continue
		}
		m := &wire.Msg{Kind: wire.MsgAdopt, Session: c.Session, Epoch: uint64(c.Epoch), IDs: c.IDs}
		if cc, _ := s.conn(c.Worker); cc != nil {
			cc.Send(m)
		}
	}
	for _, f := range out.Free {
		m := &wire.Msg{Kind: wire.MsgFree, Session: f.Session, Epoch: uint64(f.Epoch), IDs: f.IDs}
		if cc, _ := s.conn(f.Worker); cc != nil {
			cc.Send(m)
		}
	}
	if len(out.Copy) > 0 {
		s.mu.Lock()
		s.copyInBackground(out.Copy)
		s.mu.Unlock()
	}
}

// expected is the directory's view of Config.Expect: lost chunks, those
// of uploads flagged.
func expected(locs []core.Location, uploads []uint64) []custody.Chunk {
	up := make(map[uint64]bool, len(uploads))
	for _, id := range uploads {
		up[id] = true
	}
	cs := make([]custody.Chunk, 0, len(locs))
	for _, loc := range locs {
		cs = append(cs, custody.Chunk{ID: loc.ID, NBytes: loc.NBytes, Upload: up[loc.ID]})
	}
	return cs
}
