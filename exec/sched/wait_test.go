package sched

import "time"

// waitChange waits, at most d, for done to hold, checking it at each
// change of s's chunk directory and worker connections (Changed) rather
// than on a clock; it reports whether done held.
func waitChange(s *Scheduler, d time.Duration, done func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		changed := s.Changed()
		if done() {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return done()
		}
	}
}

// waitMember waits, at most d, for the member table of s to give worker
// name state st, checking it at each change of the table; it returns the
// state it last saw.
func waitMember(s *Scheduler, d time.Duration, name, st string) string {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		changed := s.node.Changed()
		cur := ""
		for _, w := range s.Workers() {
			if w.Name == name {
				cur = w.State
			}
		}
		if cur == st {
			return cur
		}
		select {
		case <-changed:
		case <-timer.C:
			return cur
		}
	}
}
