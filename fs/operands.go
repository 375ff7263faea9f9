package fs

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/core"
	"marsfs/exec/engine"
)

// opName is how files name an operand's kernel: its kind, and for a fused
// operand the kinds of its members ("fuse(add+sum.map)").
func opName(g *engine.Graph, key int) string {
	ops := g.Chunks().Ops
	if key < 0 || key >= len(ops) {
		return "?" // forgotten since its states were read (--graph-history)
	}
	return ops[key].Name()
}

// operandsText renders the operands file: one line an operand, "key op
// state worker attempts elapsed", elapsed being the seconds it has run (so
// far, for a running one). A RUNNING operand's line goes on with its phase
// on the worker and the seconds it has spent in each phase so far
// (phaseFields), as far as its worker has reported them.
func operandsText(g *engine.Graph) string {
	states := g.OpStates()
	evs, _, _ := g.Events(0)
	type life struct {
		worker   string
		attempts int
		running  int // the attempt RUNNING since start, 0 for none
		start    time.Time
		end      time.Time
	}
	lives := make([]life, len(states))
	for _, ev := range evs {
		if ev.Key < 0 || ev.Key >= len(lives) {
			continue
		}
		l := &lives[ev.Key]
		if ev.Worker != "" {
			l.worker = ev.Worker
		}
		l.attempts = max(l.attempts, ev.Attempt)
		if ev.State != core.Running {
			l.running = 0
		}
		switch ev.State {
		case core.Running:
			if l.running != ev.Attempt {
				l.start, l.end, l.running = ev.At, time.Time{}, ev.Attempt
			} // else a change of phase of the run under way

		case core.Finished, core.Fatal, core.Cancelled:
			if !l.start.IsZero() && l.end.IsZero() {
				l.end = ev.At
			}
		}
	}
	now := time.Now()
	var b strings.Builder
	for k, st := range states {
		l := lives[k]
		worker := l.worker
		if worker == "" {
			worker = "-"
		}
		elapsed := 0.0
		switch {
		case l.start.IsZero():
		case l.end.IsZero():
			elapsed = now.Sub(l.start).Seconds()
		default:
			elapsed = l.end.Sub(l.start).Seconds()
		}
		fmt.Fprintf(&b, "%d %s %s %s %d %.3f", k, opName(g, k), st, worker, l.attempts, elapsed)
		if st == core.Running {
			if r, ok := g.Run(k); ok {
				b.WriteString(" " + phaseFields(r.Timing, now.UnixMicro()))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// eventLine renders one event: time, key, op, state, worker, attempt, and
// the error of a failure. A RUNNING event that a worker's report made ends
// in the phase the run is in ("RUNNING w1 1 computing": a change of phase
// when the op was RUNNING already); a FINISHED one in the seconds of each
// phase of the run.
func eventLine(g *engine.Graph, ev core.Event) string {
	if ev.Key == core.NoteKey {
		// A note about the graph as a whole: "- note" where an operand's
		// key and op would be.
		return fmt.Sprintf("%s - note %s\n", ev.At.Format("15:04:05.000000"), strings.ReplaceAll(ev.Err, "\n", "; "))
	}
	worker := ev.Worker
	if worker == "" {
		worker = "-"
	}
	s := fmt.Sprintf("%s %d %s %s %s %d", ev.At.Format("15:04:05.000000"), ev.Key, opName(g, ev.Key), ev.State, worker, ev.Attempt)
	switch {
	case ev.State == core.Running && ev.Phase != core.NoPhase:
		s += " " + ev.Phase.String()
	case ev.State == core.Finished:
		if r, ok := g.Run(ev.Key); ok && r.Timing.Stored != 0 {
			s += " " + phaseFields(r.Timing, r.Timing.Stored)
		}
	}
	if ev.Err != "" {
		s += " " + strings.ReplaceAll(ev.Err, "\n", "; ")
	}
	return s + "\n"
}

// eventsFile is a graph's events: its state transitions as lines. A read
// at the end waits until more come or the graph ends, so `cat` follows a
// running graph to its end and `tail -f` works too.
func eventsFile(parent string, g *engine.Graph) *node {
	return &node{name: "events", path: join(parent, "events"), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			return &events{c: c, g: g}, nil
		}}
}

type events struct {
	readOnly
	c *conn
	g *engine.Graph

	mu   sync.Mutex
	text []byte // the lines rendered so far
	next int    // the index of the next event to render
}

func (e *events) ReadAt(p []byte, off int64) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for off >= int64(len(e.text)) {
		evs, more, ended := e.g.Events(e.next)
		for _, ev := range evs {
			if ev.Key == core.NoteKey || ev.Key >= 0 && ev.Key < len(e.g.Chunks().Ops) {
				e.text = append(e.text, eventLine(e.g, ev)...)
			}
		}
		e.next += len(evs)
		if len(evs) > 0 {
			continue
		}
		if ended {
			return 0, nil // end of file
		}
		e.mu.Unlock()
		select {
		case <-more:
		case <-e.c.flushes():
			e.mu.Lock()
			return 0, linux.EINTR
		case <-e.c.ctx.Done():
			e.mu.Lock()
			return 0, linux.EINTR
		}
		e.mu.Lock()
	}
	return copy(p, e.text[off:]), nil
}
