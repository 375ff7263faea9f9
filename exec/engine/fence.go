package engine

import (
	"context"

	"marsfs/exec/custody"
)

// This file is the engine's side of fencing (the scheduler's cmd/marsfs
// fence.go decides): a scheduler serves its sessions only while it knows
// no other holds them at a later epoch, and a session another holds is
// given up here without freeing anything its new home now keeps.

// A Fence says whether this scheduler may serve its sessions now.
type Fence interface {
	// Serve returns nil when the scheduler holds session (0: any of its
	// sessions, as for a listing) as far as it can know now, waiting
	// (within ctx) to confirm it after a pause; a *MovedError when another
	// scheduler holds it at a later epoch; another error when it cannot
	// tell.
	Serve(ctx context.Context, session int) error
}

// A MovedError is a session held by another scheduler at a later epoch
// than this one's: a request to it is forwarded there, or refused.
type MovedError struct {
	Session int
	Home    string
	Epoch   uint64
}

func (e *MovedError) Error() string {
	return custody.MovedError(e.Session, e.Home, custody.Epoch(e.Epoch))
}

// SetFence makes the engine ask f before it journals a client's write,
// and the file server before it serves a session (Serve).
func (e *Engine) SetFence(f Fence) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fence = f
}

// Serve asks the engine's fence whether session (0: any) is served here.
func (e *Engine) Serve(ctx context.Context, session int) error {
	e.mu.Lock()
	f := e.fence
	e.mu.Unlock()
	if f == nil {
		return nil
	}
	return f.Serve(ctx, session)
}

// Epoch is the session's epoch and the scheduler that holds it by its
// journal (0 and "" for a session never taken over, or with no journal).
func (s *Session) Epoch() (uint64, string) {
	s.mu.Lock()
	log := s.log
	s.mu.Unlock()
	if log == nil {
		return 0, ""
	}
	return log.Epoch()
}

// GiveUp forgets session id, which another scheduler holds at a later
// epoch (why): its graphs are cancelled, its journal file removed (a
// restart must not restore it), and nothing it kept is freed, since its
// chunks are the new home's. A request on a file of it still open here
// fails with why.
func (e *Engine) GiveUp(id int, why *MovedError) {
	s, ok := e.Session(id)
	if !ok {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed, s.moved = true, why
	if s.log != nil {
		if err := s.log.Remove(); err != nil {
			e.logf("session %d: %v: its journal file stays, and a restart on this state dir asks its home again", id, err)
			s.log.Close()
		}
		s.log = nil
	}
	graphs := append([]*Graph(nil), s.graphs...)
	s.refs = map[uint64]int{}
	s.lines = map[uint64]*Lineage{}
	s.tensors = map[string]*Tensor{}
	s.mu.Unlock()
	for _, g := range graphs {
		g.Cancel()
	}
	e.drop(s)
}

// closedErr is why a closed session refuses: it moved, or was closed.
func (s *Session) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.moved != nil {
		return s.moved
	}
	return ErrClosed
}

// A fencedFreer is a Runner whose frees carry the session and epoch they
// act for (sched.Scheduler), which a worker that has seen a later epoch of
// the session refuses.
type fencedFreer interface {
	FreeFor(session int, epoch uint64, ids []uint64)
}

// fenceTag is what the session's jobs and frees carry to the workers: its
// number and the epoch this scheduler holds it at (0 for a session never
// taken over). s.mu must not be held.
func (s *Session) fenceTag() (int, uint64) {
	e, _ := s.Epoch()
	return s.id, e
}
