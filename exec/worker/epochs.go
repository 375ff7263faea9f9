package worker

import (
	"fmt"
	"slices"
	"strings"

	"marsfs/exec/wire"
)

// This file is the worker's fence, part of its pure State: a scheduler's
// submissions, frees and adopts carry the session they act for and the
// epoch it holds the session at (wire.Msg's Session and Epoch), and the
// worker refuses those of an epoch below the latest it has seen of the
// session. A takeover raises a session's epoch, and the new home's first
// message to a worker (its claim of the session's chunks, a job's
// submissions) teaches the worker the new epoch; a home back from a pause,
// which has not yet learned that it lost the session, can then neither
// free nor make again the chunks the new home keeps. Session 0 is no
// session (a test's job, a scheduler's own bookkeeping) and is not
// fenced. The worker keeps one number a session it has seen.

// fenced checks a message of session sess at epoch e: it reports the
// later epoch the worker has seen of the session when the message is
// stale, and otherwise notes e as the latest.
func (s *State) fenced(sess int, e uint64) (later uint64, stale bool) {
	if sess == 0 {
		return 0, false
	}
	if s.epochs == nil {
		s.epochs = map[int]uint64{}
	}
	if cur, ok := s.epochs[sess]; ok && cur > e {
		s.nfenced++
		return cur, true
	}
	s.epochs[sess] = e
	return e, false
}

// staleError says what the worker refused: what (a free, an adopt, an
// operand's run) of session sess at epoch e, and the later epoch seen.
func (s *State) staleError(what string, sess int, e, later uint64) error {
	return fmt.Errorf("worker %s refuses %s of session %d at epoch %d: it has seen epoch %d of the session (another scheduler holds it now)",
		s.cfg.Name, what, sess, e, later)
}

// FreeFor drops the chunks the scheduler on control connection c frees
// for session sess at epoch e. When the worker has seen a later epoch of
// the session, it drops only the chunks still made for c (a stale home's
// own intermediates, which nobody else names), and refuses the others,
// saying why: those the new home made again here or claimed, uploads, and
// orphans it may yet claim.
func (s *State) FreeFor(c *wire.Conn, sess int, e uint64, ids []uint64) error {
	later, stale := s.fenced(sess, e)
	if !stale {
		s.Free(ids)
		return nil
	}
	refused := 0
	for _, id := range ids {
		if by, ok := s.made[id]; ok && by == c && c != nil {
			s.forget(id)
		} else if ok || s.orphans[id] != 0 {
			refused++
		}
	}
	if refused == 0 {
		return nil
	}
	return s.staleError(fmt.Sprintf("a free of %d chunk%s", refused, plural(refused)), sess, e, later)
}

// AdoptFor is Adopt for session sess at epoch e, refused as FreeFor is.
// A claim of a session taken over (sess not 0, e above 0) also takes the
// chunks of ids still made for another connection, which is the stale
// home's (its frees of them are refused from now on): so the new home
// keeps what a home paused with its connections up had made, rather than
// make it again. It returns those, and the chunks of ids held for no
// connection (uploads' copies), which the Worker reports to c.
func (s *State) AdoptFor(c *wire.Conn, sess int, e uint64, ids []uint64) (taken []uint64, err error) {
	if later, stale := s.fenced(sess, e); stale {
		return nil, s.staleError(fmt.Sprintf("a claim of %d chunk%s", len(ids), plural(len(ids))), sess, e, later)
	}
	s.Adopt(c, ids)
	if sess == 0 {
		return nil, nil
	}
	for _, id := range ids {
		by, ok := s.made[id]
		switch {
		case !ok:
		case by == nil:
			// Held for no connection (an upload's copy, Put, kept
			// whichever connection breaks): said held, so that a home
			// that counted the upload lost (it dropped this worker, or
			// restarted knowing no worker) has it back.
			taken = append(taken, id)
		case by != c && e != 0:
			s.made[id] = c
			taken = append(taken, id)
		}
	}
	return taken, nil
}

// Epoch is the latest epoch the worker has seen of session sess, and
// whether it has seen any.
func (s *State) Epoch(sess int) (uint64, bool) {
	e, ok := s.epochs[sess]
	return e, ok
}

// Fenced is the number of runs, frees and claims the worker refused as
// stale.
func (s *State) Fenced() int { return s.nfenced }

// TakenOver renders the sessions the worker has seen at an epoch above 0
// (taken over at least once) as "SESSION:EPOCH" words in session order,
// for its status.
func (s *State) TakenOver() string {
	var ids []int
	for id, e := range s.epochs {
		if e > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d", id, s.epochs[id])
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
