package core

import (
	"time"
)

// A Placement is how a runner planned a job, reported once through
// Job.Plan before any operand runs.
type Placement struct {
	// Rank[k] is op k's priority, lower first; nil when the runner runs
	// ready operands as they come.
	Rank []int
	// Workers are the workers the job was planned on, by name.
	Workers []WorkerLoad
	// Worker holds, by op key, the worker each initial operand starts on
	// and each stored operand's chunk is on; "" for the other operands,
	// and for those past its end.
	Worker []string
}

// An Event is a transition of one operand, or a note about the job as a
// whole (Key NoteKey): a worker joined or left, the job waits for workers.
type Event struct {
	Key     int     // the op's key in the job's graph; NoteKey for a note
	State   OpState // the state entered
	Worker  string  // the worker involved, if any
	Attempt int     // 1 for the first run
	Err     string  // why, for FATAL and retried failures; a note's text
	At      time.Time
	// Chunk data of the job alive in the cluster after the transition.
	LiveChunks int
	LiveBytes  int64
	// Of LiveBytes, those on Worker.
	WorkerBytes int64
	// Bytes moved between workers for the job so far.
	TransferBytes int64
	// Bytes spilled to disk for the job so far.
	SpilledBytes int64
	// Timing, on a RUNNING or FINISHED event that a worker's report made,
	// is what the worker measured of the run (see Timing); nil otherwise.
	// An event given to Options.Observe points at the Core's copy, valid
	// during the call: keep what it says, not the pointer. Phase is the
	// phase of a RUNNING event's run (Timing.Phase), kept in event logs. A
	// RUNNING event of an op already RUNNING is a change of its phase.
	Timing *Timing
	Phase  Phase
}

// NoteKey is the Key of an Event that is a note about the job, not a
// transition of an operand: its State means nothing, Err is the note.
const NoteKey = -1

// OpState is the state of one operand, as in Mars.
type OpState uint8

// Operand states. An initial operand starts READY, any other UNSCHEDULED.
const (
	Unscheduled OpState = iota
	Ready
	Running
	Finished
	Freed
	Fatal
	Cancelling
	Cancelled
)

var opStateNames = [...]string{"UNSCHEDULED", "READY", "RUNNING", "FINISHED", "FREED", "FATAL", "CANCELLING", "CANCELLED"}

func (s OpState) String() string {
	if int(s) < len(opStateNames) {
		return opStateNames[s]
	}
	return "OpState(?)"
}
