package engine

import (
	"fmt"
	"strings"
	"time"

	"marsfs/exec/core"
	"marsfs/tensor/chunk"
)

// This file bounds what a server keeps of the graphs that ended. A graph's
// full record (its chunk graph, the state and timing of every operand,
// its events, its placement: what plan, operands, events and the
// pictures show) costs about 220 bytes an operand. A session keeps the
// full records of its last History graphs that ended; an older graph is
// forgotten down to its summary (state, spec, times, error), a few
// hundred bytes. Across all sessions, the full records of ended graphs
// hold at most as many operands as the running graphs may (SetMaxOps):
// past that the oldest are forgotten first, whichever session they are
// of. A graph that runs is never forgotten. What is forgotten is garbage
// at once: nothing else points at a graph's record (a kept tensor's
// Lineage holds the ops it needs by itself).

// DefaultHistory is how many ended graphs a session keeps in full unless
// SetHistory says otherwise (--graph-history).
const DefaultHistory = 16

// summarySpec bounds the spec text a forgotten graph keeps.
const summarySpec = 4096

// SetHistory sets how many of its ended graphs each session keeps in
// full; n < 0 keeps every one.
func (e *Engine) SetHistory(n int) {
	e.mu.Lock()
	e.history = n
	e.mu.Unlock()
	e.trimHistory(nil)
}

// recorded notes that g, of s, has ended with its full record, and
// forgets the records that are now past the bounds.
func (s *Session) recorded(g *Graph) {
	e := s.engine
	e.mu.Lock()
	if e.sessions[s.id] != s {
		e.mu.Unlock()
		return // closed: its graphs go with it
	}
	s.full = append(s.full, g)
	e.full = append(e.full, ended{g, s})
	e.fullOps += g.recordOps()
	e.mu.Unlock()
	e.trimHistory(s)
}

// dropHistory lets go of the records of s, a session that was closed.
func (e *Engine) dropHistory(s *Session) {
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := e.full[:0:0]
	for _, r := range e.full {
		if r.s == s {
			e.fullOps -= r.g.recordOps()
		} else {
			kept = append(kept, r)
		}
	}
	e.full = kept
	s.full = nil
}

// trimHistory forgets the records of ended graphs past the bounds: those
// of s (every session's when nil) past the last History, then across
// sessions the oldest, while they hold more than the operand bound.
func (e *Engine) trimHistory(s *Session) {
	var forget []*Graph
	e.mu.Lock()
	keep := e.history
	if keep >= 0 {
		sessions := []*Session{s}
		if s == nil {
			sessions = sessions[:0]
			for _, ss := range e.sessions {
				sessions = append(sessions, ss)
			}
		}
		for _, ss := range sessions {
			if n := len(ss.full) - keep; n > 0 {
				forget = append(forget, ss.full[:n]...)
				ss.full = append(ss.full[:0:0], ss.full[n:]...)
			}
		}
	}
	for _, g := range forget {
		e.fullOps -= g.recordOps()
	}
	// The engine's list holds graphs forgotten by their session too:
	// they are passed over (their operands are counted out already).
	i := 0
	for ; i < len(e.full) && (e.full[i].g.isForgotten(forget) || e.maxOps > 0 && e.fullOps > e.maxOps); i++ {
		g, ss := e.full[i].g, e.full[i].s
		if g.isForgotten(forget) {
			continue
		}
		e.fullOps -= g.recordOps()
		forget = append(forget, g)
		ss.full = removeGraph(ss.full, g)
	}
	if i > 0 {
		e.full = append(e.full[:0:0], e.full[i:]...)
	}
	// Graphs forgotten by their session behind one still kept stay in the
	// list until they reach its front; when they are half of it, it is
	// made again without them.
	e.stale += len(forget)
	if e.stale > len(e.full)/2 {
		kept := e.full[:0:0]
		for _, r := range e.full {
			if !r.g.isForgotten(forget) {
				kept = append(kept, r)
			}
		}
		e.full, e.stale = kept, 0
	}
	e.mu.Unlock()
	for _, g := range forget {
		g.forget()
	}
}

// ended is a graph that ended with its full record, and its session.
type ended struct {
	g *Graph
	s *Session
}

// isForgotten reports whether g is forgotten or in the list of those
// about to be. e.mu is held.
func (g *Graph) isForgotten(about []*Graph) bool {
	for _, f := range about {
		if f == g {
			return true
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.forgotten
}

func removeGraph(gs []*Graph, g *Graph) []*Graph {
	for i, x := range gs {
		if x == g {
			return append(gs[:i:i], gs[i+1:]...)
		}
	}
	return gs
}

// recordOps is how many operands g's full record holds.
func (g *Graph) recordOps() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.forgotten {
		return 0
	}
	return len(g.chunks.Ops)
}

// forget drops g's full record, keeping its summary. Readers that took
// parts of the record before keep what they took.
func (g *Graph) forget() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.forgotten {
		return
	}
	g.forgotten = true
	g.chunks = noChunks
	g.spec, g.specJSON = nil, nil
	g.ids, g.states, g.timings, g.moved, g.sinceAt = nil, nil, nil, nil, nil
	g.events = eventLog{start: g.start}
	g.plan.forget()
	g.cancel = func() {} // and the run's context with it
	// The peaks as the status shows them: a slice is smaller than a map.
	for w, n := range g.peaks {
		g.status.WorkerPeaks = append(g.status.WorkerPeaks, WorkerBytes{w, n})
	}
	g.peaks = nil
	if len(g.src) > summarySpec {
		g.src = strings.Clone(g.src[:summarySpec]) + fmt.Sprintf("\n# ... %d bytes more, forgotten\n", len(g.src)-summarySpec)
	}
}

// noChunks is the chunk graph of every forgotten graph.
var noChunks = &chunk.Graph{}

// closed is a closed channel: the plan of every forgotten graph is done.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (pl *planned) forget() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.p = core.Placement{}
	pl.done, pl.ch = true, closed
}

// Forgotten reports whether the graph's full record was dropped: only
// its summary (Summary, Spec, Status, Err) is left.
func (g *Graph) Forgotten() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.forgotten
}

// Summary is one line of what a session keeps of any of its graphs: its
// number, state, start (UTC), seconds elapsed, and its spec and error
// quoted.
func (g *Graph) Summary() string {
	st := g.Status()
	return fmt.Sprintf("%d %s %s %.3f %q %q", g.ID(), st.State, g.start.UTC().Format(time.RFC3339Nano), st.Elapsed.Seconds(), strings.TrimSpace(g.Spec()), g.Err())
}
