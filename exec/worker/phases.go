package worker

import (
	"runtime/metrics"
	"sync/atomic"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/wire"
)

// This file measures the phases of each run (core.Phase: queued,
// allocating, loading, computing, storing) and makes them known at little
// cost. A run's times go out on its done report, which is sent anyway. A
// slot publishes the op it runs and the time it entered each phase in
// atomic words; a watcher looks at the slots every phaseTick and reports,
// on a "started" report, the phase of a run that has been in it for a
// tick or more. So an op of small chunks costs one clock read (see
// timedBytes) and two atomic stores, and sends no message more, while one
// of seconds shows its phase within a tick of entering it.

// timedBytes is the size of chunk from which loading or storing it is
// timed as a phase of its own. A clock read costs some tens of
// nanoseconds, up to a hundred under a hypervisor: as much as reading or
// storing a chunk of a few KB that the worker holds in its heap. Below
// it, the phase is counted in computing, and an op of small chunks reads
// the clock once, at its end.
const timedBytes = 64 << 10

// phaseTick is how often the watcher looks at the slots, and how long a
// run stays in a phase before the scheduler is told of it.
const phaseTick = 100 * time.Millisecond

// A slot is one of the worker's runners: the clock it stamps its runs
// with, and what it publishes of the run under way. It is padded to a
// cache line of its own, since its runner writes it at every phase.
type slot struct {
	index int
	// base is when the slot's current run of ops began (wall and
	// monotonic), baseMicro the same in Unix microseconds: stamps are taken
	// from the monotonic clock, a cheaper read than the wall clock.
	base      time.Time
	baseMicro int64

	cur atomic.Pointer[Task] // the task running; nil between runs
	// wake tells the phase watcher, asleep while every slot is idle, that
	// a run began (shared by the worker's slots; one signal is enough).
	wake chan struct{}
	n    uint32 // the runs begun here; a task's seq is its number
	// entered holds when the slot's latest runs entered Computing and
	// Storing: the Unix microseconds in the low 52 bits, the run's seq (its
	// low 12 bits) in the high ones, so that a phase an earlier run entered
	// is never taken for the current run's, be it in the same microsecond.
	// A run is Loading from its start until it enters Computing (its
	// Allocating is measured within Computing, see run).
	entered [2]atomic.Uint64

	_ [64]byte
}

// restart begins a run of ops in the slot and returns its time.
func (s *slot) restart() int64 {
	s.base = time.Now()
	s.baseMicro = s.base.UnixMicro()
	return s.baseMicro
}

// now returns the time in Unix microseconds.
func (s *slot) now() int64 {
	return s.baseMicro + int64(time.Since(s.base)/time.Microsecond)
}

// enter stamps that the task running enters phase p (Loading, Computing
// or Storing) now, publishes it, and returns the time.
func (s *slot) enter(p core.Phase) int64 {
	at := s.now()
	s.enterAt(p, at)
	return at
}

// enterAt publishes that the task running entered phase p at the given time.
func (s *slot) enterAt(p core.Phase, at int64) {
	s.entered[p-core.Computing].Store(uint64(s.n&seqMask)<<atBits | uint64(at)&atMask)
}

const (
	atBits  = 52 // Unix microseconds until the year 2112
	atMask  = 1<<atBits - 1
	seqMask = 1<<(64-atBits) - 1
)

// begin publishes that t runs in the slot from its Started time on.
func (s *slot) begin(t *Task) {
	s.n++
	t.seq = s.n
	s.cur.Store(t)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// reached returns the points task t, which the slot runs, has reached as
// far as its runner has published them, and its phase and since when.
func (s *slot) reached(t *Task) (tm core.Timing) {
	tm = core.Timing{Received: t.received, Started: t.started, Allocated: t.started,
		Slot: int(t.slot), Phase: core.Loading, Since: t.started}
	points := [...]*int64{&tm.Loaded, &tm.Computed}
	for i := range s.entered {
		v := s.entered[i].Load()
		if uint32(v>>atBits) != t.seq&seqMask {
			break // an earlier run's: t has not entered the phase
		}
		at := int64(v & atMask)
		*points[i] = at
		tm.Phase, tm.Since = core.Computing+core.Phase(i), at
	}
	return tm
}

// startedReport is the "started" report of task t, whose run has reached
// the points of tm.
func startedReport(t *Task, tm core.Timing) *wire.Msg {
	return &wire.Msg{Kind: wire.MsgStarted, Job: t.Job, Key: t.Key, Attempt: t.Attempt, Timing: tm}
}

// watchPhases reports the phase of every run that has stayed in it for a
// tick, once a phase, until the worker closes. It sleeps while every slot
// is idle, woken by the next run's begin: an idle worker (one of 64 on a
// host, say) is woken by nothing but its membership's gossip.
func (w *Worker) watchPhases(wake <-chan struct{}) {
	defer w.wg.Done()
	tick := time.NewTicker(phaseTick)
	defer tick.Stop()
	type seen struct {
		t     *Task
		phase core.Phase
	}
	told := make([]seen, len(w.slots))
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now().UnixMicro()
		busy := false
		for i, s := range w.slots {
			t := s.cur.Load()
			if t == nil {
				continue
			}
			busy = true
			// t's Received, Started and Slot were set before it was
			// published; its later points are read from the slot.
			tm := s.reached(t)
			if s.cur.Load() != t || told[i] == (seen{t, tm.Phase}) || now-tm.Since < phaseTick.Microseconds() {
				continue // over, told, or too short to tell
			}
			told[i] = seen{t, tm.Phase}
			t.Conn.SendSoon(startedReport(t, tm))
		}
		if !busy {
			// A run that began since the slots were read has
			// signalled wake, which is buffered: none is missed.
			tick.Stop()
			select {
			case <-w.ctx.Done():
				return
			case <-wake:
			}
			tick.Reset(phaseTick)
		}
	}
}

// goHeapBytes is the bytes of the process's Go heap in use by objects.
func goHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
