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
