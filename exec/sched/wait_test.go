package sched

import (
	"reflect"
	"runtime"
	"time"

	"marsfs/exec/engine"
	"marsfs/exec/worker"
	"marsfs/shm"
)

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

// waitWorkers waits, at most d, for done to hold, checking it at each
// change of the in-process workers ws (worker.Changed: a task queued,
// started or ended, a chunk kept or freed) rather than on a clock; it
// reports whether done held.
func waitWorkers(ws []*worker.Worker, d time.Duration, done func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	cases := make([]reflect.SelectCase, len(ws)+1)
	cases[len(ws)] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C)}
	for {
		for i, w := range ws {
			cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.Changed())}
		}
		if done() {
			return true
		}
		if i, _, _ := reflect.Select(cases); i == len(ws) {
			return done()
		}
	}
}

// waitUnpinned has the collector run the cleanups of the arrays read from
// st that nothing holds any more, and waits, at most d, for st to hold no
// pinned chunk, checking at each unpin (shm.Store.Changed); it reports
// whether none was left. A cleanup runs on its own goroutine after the
// collection that found its array unreachable: each change collects
// again, for arrays the last cleanups' views held.
func waitUnpinned(st *shm.Store, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		changed := st.Changed()
		if st.Stats().Pinned == 0 {
			return true
		}
		runtime.GC()
		select {
		case <-changed:
		case <-timer.C:
			return st.Stats().Pinned == 0
		}
	}
}

// waitGraph waits, at most d, for done to hold of graph g, checking it at
// each of g's events (Graph.Events) rather than on a clock; it reports
// whether done held.
func waitGraph(g *engine.Graph, d time.Duration, done func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	from := 0
	for {
		evs, more, ended := g.Events(from)
		from += len(evs)
		if done() {
			return true
		}
		if ended {
			return false
		}
		select {
		case <-more:
		case <-timer.C:
			return done()
		}
	}
}
