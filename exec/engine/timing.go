package engine

import (
	"math"
	"time"

	"marsfs/exec/core"
)

// A graph keeps, for each op, what its worker measured of the op's latest
// run (core.Timing): when it was queued, allocated, loaded, computed and
// stored, on which worker and slot. The operands file shows the phases,
// the timeline draws them. An op's record is 32 bytes, made only for the
// ops whose reports carried timings; the bytes it fetched and the worker
// spilled, which most runs have none of, are in a map beside. A run that
// is over (stored) has no phase to be in since a time, and one that is in
// a phase is not stored: the two share a field, and the rare report that
// carries both keeps its Since in a map.

// OpRun is the measured run of one op.
type OpRun struct {
	Key    int
	Worker string
	Timing core.Timing
}

type opTiming struct {
	// µs, the worker's clock, in two halves (low, high), so that the
	// record is aligned to 4 bytes, not 8; 0 for no record
	received [2]uint32
	// Started .. Stored: 1 + µs after received; 0 for not reached. In a
	// phase (phase != NoPhase), the last is Since instead of Stored.
	after     [5]uint32
	worker    uint16 // 1 + index in the event log's workers
	slotPhase uint16 // the slot (up to maxSlot) in the low 11 bits, the phase in 3 above, then hasMoved and hasSince
}

const (
	maxSlot    = 1<<11 - 1
	phaseShift = 11
	phaseMask  = 7
	// The record's op has an entry in the graph's moved or sinceAt map:
	// a report of an op that has none deletes nothing (a delete of a
	// missing key in a large map was 2 of the 50 CPU-s of a 10^7-operand
	// run).
	hasMoved = 1 << 14
	hasSince = 1 << 15
)

func (r *opTiming) at() int64 { return int64(r.received[0]) | int64(r.received[1])<<32 }

// noteTiming records the timing an event carries. g.mu is held.
func (g *Graph) noteTiming(ev *core.Event) {
	t := ev.Timing
	if t == nil || t.Received == 0 || ev.Key < 0 || ev.Key >= len(g.states) || ev.Worker == "" {
		return
	}
	switch {
	case g.timings == nil:
		g.timings = make([]opTiming, len(g.states))
	case len(g.timings) < len(g.states):
		// A later stage's ops were appended to the graph.
		g.timings = append(g.timings, make([]opTiming, len(g.states)-len(g.timings))...)
	}
	r := &g.timings[ev.Key]
	had := r.slotPhase
	// A started report carries the points reached so far, a done report
	// all of them: the latest is the whole record.
	*r = opTiming{received: [2]uint32{uint32(t.Received), uint32(uint64(t.Received) >> 32)},
		worker: uint16(g.events.worker(ev.Worker) + 1), slotPhase: uint16(min(max(t.Slot, 0), maxSlot)) | uint16(t.Phase&phaseMask)<<phaseShift}
	switch {
	case t.Fetched != 0 || t.Spilled != 0:
		if g.moved == nil {
			g.moved = make(map[int32][2]int64)
		}
		g.moved[int32(ev.Key)] = [2]int64{t.Fetched, t.Spilled}
		r.slotPhase |= hasMoved
	case had&hasMoved != 0:
		delete(g.moved, int32(ev.Key))
	}
	last := t.Stored
	if t.Phase != core.NoPhase {
		last = t.Since
	}
	for i, at := range [...]int64{t.Started, t.Allocated, t.Loaded, t.Computed, last} {
		r.after[i] = since(at, t.Received)
	}
	switch {
	case t.Phase == core.NoPhase && t.Since != 0 || t.Phase != core.NoPhase && t.Stored != 0:
		if g.sinceAt == nil {
			g.sinceAt = make(map[int32][2]int64)
		}
		g.sinceAt[int32(ev.Key)] = [2]int64{t.Since, t.Stored}
		r.slotPhase |= hasSince
	case had&hasSince != 0:
		delete(g.sinceAt, int32(ev.Key))
	}
}

// since is at as 1 + microseconds after base, 0 for none.
func since(at, base int64) uint32 {
	if at == 0 {
		return 0
	}
	return uint32(min(max(at-base, 0), math.MaxUint32-1)) + 1
}

// run makes the record of op k whole again. g.mu is held.
func (g *Graph) run(k int) (OpRun, bool) {
	if k < 0 || k >= len(g.timings) || g.timings[k].at() == 0 {
		return OpRun{}, false
	}
	r := &g.timings[k]
	var m [2]int64
	if r.slotPhase&hasMoved != 0 {
		m = g.moved[int32(k)]
	}
	recv := r.at()
	t := core.Timing{Received: recv, Fetched: m[0], Spilled: m[1], Slot: int(r.slotPhase & maxSlot), Phase: core.Phase(r.slotPhase >> phaseShift & phaseMask)}
	last := &t.Stored
	if t.Phase != core.NoPhase {
		last = &t.Since
	}
	for i, p := range [...]*int64{&t.Started, &t.Allocated, &t.Loaded, &t.Computed, last} {
		if r.after[i] != 0 {
			*p = recv + int64(r.after[i]-1)
		}
	}
	if b, ok := g.sinceAt[int32(k)]; ok && r.slotPhase&hasSince != 0 {
		t.Since, t.Stored = b[0], b[1]
	}
	return OpRun{Key: k, Worker: g.events.workers[r.worker-1], Timing: t}, true
}

// Run returns the measured run of op k, if its worker reported one.
func (g *Graph) Run(k int) (OpRun, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.run(k)
}

// Runs returns the measured runs of the graph's ops, in key order.
func (g *Graph) Runs() []OpRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []OpRun
	for k := range g.timings {
		if r, ok := g.run(k); ok {
			out = append(out, r)
		}
	}
	return out
}

// Started is when the graph was submitted, and Ended when it ended (zero
// while it runs).
func (g *Graph) Started() time.Time { return g.start }

// Ended is when the graph ended, zero while it runs.
func (g *Graph) Ended() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.end
}
