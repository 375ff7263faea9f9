package core

// Phases of a run on its worker. Mars' workers show each operand's
// execution state: waiting in the queue for memory, loading its inputs,
// calculating, storing (seed 003). A marsfs worker measures the same
// phases of every run and reports them with the reports it sends anyway:
// the times of the whole run on its "done" report, the phase a run has
// reached on its "started" report (and, for a run that stays long in a
// phase, on one more "started" report, sent at most every tick), so that
// a graph of 100,000 operands sends not a message more than it did.

// Phase is where a run of an operand is on its worker.
type Phase uint8

// The phases, in the order a run goes through them.
const (
	NoPhase    Phase = iota
	Queued           // waiting for a slot, or for memory under the quota
	Allocating       // getting the memory its output is written into
	Loading          // reading its inputs: from the store, a spill file, or a peer
	Computing        // its kernel runs
	Storing          // sealing its chunk into the store
)

var phaseNames = [...]string{"-", "queued", "allocating", "loading", "computing", "storing"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "Phase(?)"
}

// Phases lists the phases a run goes through, in order.
var Phases = []Phase{Queued, Allocating, Loading, Computing, Storing}

// Timing is what a worker measured of one run of an op: times in
// microseconds of the worker's wall clock since the Unix epoch, 0 for a
// point the run has not reached. Workers of one host share the clock;
// across hosts the times are as close as the hosts' clocks.
type Timing struct {
	Received  int64 // the worker was handed the op: Queued from then
	Started   int64 // it left the queue for a slot: Allocating
	Allocated int64 // its output's memory is had: Loading
	Loaded    int64 // its inputs are read: Computing
	Computed  int64 // its kernel returned: Storing
	Stored    int64 // its chunk is stored: the run is over
	// Phase is the phase the run was in when the report was made, since
	// Since (a "started" report's; NoPhase on a done report).
	Phase Phase
	Since int64
	Slot  int // which of the worker's slots ran it, from 0
	// Fetched is the bytes of inputs the run fetched from other workers
	// (a transfer); Spilled the bytes the worker's store spilled to disk
	// since its previous report (filled in from the done report).
	Fetched int64
	Spilled int64
}

// Zero reports whether t holds no measurement.
func (t *Timing) Zero() bool { return t.Received == 0 }

// Bounds returns the times a run entered each phase of Phases, and when it
// ended (end is 0 while it runs).
func (t *Timing) Bounds() (enter [5]int64, end int64) {
	return [5]int64{t.Received, t.Started, t.Allocated, t.Loaded, t.Computed}, t.Stored
}

// Spent returns the microseconds spent in each phase of Phases, counting
// a phase not yet left up to now (in the worker's clock, microseconds).
func (t *Timing) Spent(now int64) [5]int64 {
	enter, end := t.Bounds()
	var d [5]int64
	for i := range enter {
		if enter[i] == 0 {
			break
		}
		next := end
		if i+1 < len(enter) {
			next = enter[i+1]
		}
		if next == 0 {
			next = now
		}
		d[i] = max(0, next-enter[i])
	}
	return d
}

// Current returns the phase a run is in by the points it has reached:
// the last one entered, NoPhase when it has ended or not begun.
func (t *Timing) Current() Phase {
	switch {
	case t.Received == 0 || t.Stored != 0:
		return NoPhase
	case t.Computed != 0:
		return Storing
	case t.Loaded != 0:
		return Computing
	case t.Allocated != 0:
		return Loading
	case t.Started != 0:
		return Allocating
	}
	return Queued
}
