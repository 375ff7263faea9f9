package fs

import (
	"sync"
	"time"

	"marsfs/exec/engine"
)

// idle closes the sessions nobody has used for a while: a session is used
// whenever a path through its directory is walked, and never idle while a
// graph of it runs.
type idle struct {
	timeout time.Duration
	mu      sync.Mutex
	last    map[int]time.Time // session ID → last use
}

func (s *Server) touch(id int) {
	if s.idle.timeout <= 0 {
		return
	}
	s.idle.mu.Lock()
	s.idle.last[id] = time.Now()
	s.idle.mu.Unlock()
}

// reap closes the sessions idle for longer than the timeout, checking every
// timeout/4 (at most every minute) until the server closes.
func (s *Server) reap() {
	every := min(s.idle.timeout/4, time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			open := make(map[int]bool)
			for _, sess := range s.eng.Sessions() {
				open[sess.ID()] = true
				if s.idleSince(sess, now) > s.idle.timeout {
					sess.Close()
				}
			}
			s.idle.mu.Lock()
			for id := range s.idle.last {
				if !open[id] {
					delete(s.idle.last, id)
				}
			}
			s.idle.mu.Unlock()
		}
	}
}

// idleSince is how long sess has gone unused at now.
func (s *Server) idleSince(sess *engine.Session, now time.Time) time.Duration {
	for _, g := range sess.Graphs() {
		if !g.Status().State.Ended() {
			s.touch(sess.ID())
			return 0
		}
	}
	s.idle.mu.Lock()
	defer s.idle.mu.Unlock()
	last, ok := s.idle.last[sess.ID()]
	if !ok {
		// Made without a walk (by another front end): count from now.
		s.idle.last[sess.ID()] = now
		return 0
	}
	return now.Sub(last)
}
