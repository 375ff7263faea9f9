package core

import (
	"errors"
	"fmt"
)

// An Input is one thing that happened to a job, fed to the Core by Step:
// the Core's only way in, as raft's Step is.
type Input struct {
	Kind    InputKind
	Worker  string // the worker it happened on
	Slots   int    // InWorkerUp: the worker's slots
	Key     int    // the op's key, for the inputs about one op
	Attempt int    // the op's run the report is about
	NBytes  int64  // InFinished: the size of the chunk made
	Spilled int64  // InFinished: bytes the worker's store spilled since its last report
	Err     string // InFailed, InFailedFetch, InFailedFinal, InFail: why
	Peer    string // InFailedFetch: the worker an input could not be fetched from
	// Timing, on InStarted and InFinished, is what the worker measured of
	// the run, if it did; it goes on the op's event. An InStarted about a
	// run already RUNNING whose Timing names a phase reports a change of
	// phase. Step copies it: it need not outlive the call.
	Timing *Timing
}

// InputKind says what an Input reports.
type InputKind uint8

// The inputs of a Core.
const (
	// InWorkerUp: a worker of Slots slots joined (or was there at the start).
	InWorkerUp InputKind = iota
	// InWorkerDown: the worker left or its connection broke; its chunks and
	// runs are lost.
	InWorkerDown
	// InStart: the job starts; the workers known so far were reported up.
	InStart
	// InStarted: the worker began run Attempt of op Key.
	InStarted
	// InFinished: the run made the op's chunk, NBytes long.
	InFinished
	// InFailed: the run failed; it is retried elsewhere up to MaxAttempts.
	InFailed
	// InFailedFetch: the run could not fetch an input from Peer, most often
	// a peer that just died; it is retried without counting against the
	// op, up to a bound.
	InFailedFetch
	// InFailedFinal: the run failed in a way any run would (a kernel's
	// error): the op is FATAL at once.
	InFailedFinal
	// InCancel: the job is cancelled; runs out are cancelled and waited for.
	InCancel
	// InCancelDone: the worker dropped or interrupted the run.
	InCancelDone
	// InAbandon: the job stops waiting for the cancelled runs.
	InAbandon
	// InHold: the inputs up to the next Dispatch are taken together: no op
	// is sent until then, so that what they make READY goes out in one
	// batch, in rank order.
	InHold
	// InDispatch: send what the held inputs made READY.
	InDispatch
	// InFail: the job fails with Err, as a cancel does, for a reason of
	// the caller's (no worker left to run it).
	InFail
	// InAdopt: Worker, which the job lost, is back holding op Key's chunk
	// of NBytes (the caller checked its ID and size): if the Core is
	// making it again and has not sent it yet, it takes it instead.
	InAdopt
)

var inputNames = [...]string{"up", "down", "start", "started", "finished", "failed", "failed-fetch",
	"failed-final", "cancel", "cancelled", "abandon", "hold", "dispatch", "fail", "adopt"}

func (k InputKind) String() string {
	if int(k) < len(inputNames) {
		return inputNames[k]
	}
	return fmt.Sprintf("InputKind(%d)", k)
}

// Step feeds one input to the Core and returns what the caller must do
// about it (see Output). The Output is valid until the next Step.
func (c *Core) Step(in Input) Output {
	switch in.Kind {
	case InWorkerUp:
		return c.workerUp(in.Worker, in.Slots)
	case InWorkerDown:
		return c.workerDown(in.Worker)
	case InStart:
		return c.startJob()
	case InStarted:
		c.noteTiming(&in)
		out := c.opStarted(in.Key, in.Worker, in.Attempt)
		c.timed = false
		return out
	case InFinished:
		c.spilled += in.Spilled
		c.noteTiming(&in)
		out := c.opFinished(in.Key, in.Worker, in.Attempt, in.NBytes)
		c.timed = false
		return out
	case InFailed:
		return c.opFailed(in.Key, in.Worker, in.Attempt, in.Err)
	case InFailedFetch:
		return c.opFailedFetch(in.Key, in.Worker, in.Attempt, in.Peer, in.Err)
	case InFailedFinal:
		return c.opFailedFinal(in.Key, in.Worker, in.Attempt, in.Err)
	case InCancel:
		return c.cancelJob()
	case InCancelDone:
		return c.opCancelled(in.Key, in.Worker, in.Attempt)
	case InAbandon:
		return c.abandonJob()
	case InHold:
		c.holding = true
		return Output{}
	case InDispatch:
		return c.dispatchHeld()
	case InAdopt:
		return c.adopt(in.Key, in.Worker, in.NBytes)
	case InFail:
		c.begin()
		if !c.done {
			c.stop(errors.New(in.Err))
		}
		return c.end()
	}
	return Output{}
}

// noteTiming keeps a copy of the timing of the report being stepped, for
// the event it makes.
func (c *Core) noteTiming(in *Input) {
	if c.timed = in.Timing != nil && in.Timing.Received != 0; c.timed {
		c.timing, c.timingKey = *in.Timing, in.Key
	}
}
