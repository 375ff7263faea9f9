package core

import (
	"time"
)

// A Placement is how a runner planned a job, reported once through
// Job.Plan before any operand runs.
type Placement struct {
	// Rank[k] is op k's priority, lower first; nil when the runner runs
	// ready operands as they come.
	Rank []int32
	// Workers are the workers the job was planned on, by name.
	Workers []WorkerLoad
	// Worker holds, by op key, the worker each initial operand starts on
	// and each stored operand's chunk is on; "" for the other operands,
	// and for those past its end.
	Worker Assignment
}

// An Assignment names a worker for each op key, "" for none: a graph keeps
// its placement as long as its record, so a key holds 4 bytes, an index in
// a table of the names, rather than a string's 16.
type Assignment struct {
	names []string // names[i-1] for index i
	at    []int32  // by key: 0 for none, or 1 + index in names
}

// Assign returns an assignment of n keys, each to names[i] (nil for none).
func Assign(names []string) Assignment {
	var a Assignment
	a.Grow(len(names))
	for k, w := range names {
		a.Set(k, w)
	}
	return a
}

// Len is the number of keys a holds; At is "" past it.
func (a *Assignment) Len() int { return len(a.at) }

// At is the worker of key k, "" for none.
func (a *Assignment) At(k int) string {
	if k < 0 || k >= len(a.at) || a.at[k] == 0 {
		return ""
	}
	return a.names[a.at[k]-1]
}

// Grow makes a hold at least n keys.
func (a *Assignment) Grow(n int) {
	if n > len(a.at) {
		a.at = append(a.at, make([]int32, n-len(a.at))...)
	}
}

// Set gives key k, which a holds, to the worker called name.
func (a *Assignment) Set(k int, name string) {
	if name == "" {
		a.at[k] = 0
		return
	}
	// The names are few and met one run at a time: the last first.
	for i := len(a.names) - 1; i >= 0; i-- {
		if a.names[i] == name {
			a.at[k] = int32(i + 1)
			return
		}
	}
	a.names = append(a.names, name)
	a.at[k] = int32(len(a.names))
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
