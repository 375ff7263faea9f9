package worker

import (
	"container/heap"
	"fmt"
	"math"
	"slices"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/tensor/chunk"
)

// This file holds a worker's policy as pure state, apart from its serving
// loop: which tasks wait and in what order, which may start (slots and the
// memory quota), how a dispatch unit runs in one slot, which run owns each
// chunk, and how many queued tasks read each chunk held. It does no I/O,
// starts no goroutine and reads no clock. The Worker feeds it what happens
// (a task submitted, cancelled or ended, chunks freed, a control connection
// gone) under its lock and carries out what Ready returns: start these
// tasks, interrupt those, drop these chunks from the store, report these
// tasks cancelled or refused. Tests drive it alone (testdata/state).

// A Task is one run of an op on the worker.
type Task struct {
	wire.RunKey
	Prio   int       // the Core's rank: lower runs first
	Seq    uint64    // submission order, to break priority ties
	Op     *chunk.Op // the op; its chunk is ID
	ID     uint64    // the global ID of the chunk the op makes
	Inputs []core.Location
	Addrs  []string   // where each input's worker serves its chunks
	Conn   *wire.Conn // the control connection it came on (nil in tests)
	// Flush: others wait for the task's chunk, so its report goes out at
	// once.
	Flush bool
	// Rest holds the ops of the task's dispatch unit that run after it, in
	// order, in the slot that runs it.
	Rest []*Task
	// Session and Epoch: the session its job runs for and the epoch its
	// scheduler holds it at (epochs.go).
	Session int
	Epoch   uint64

	cancelled bool
	index     int // in the queue, -1 when not queued

	// Set and read by the Worker only.
	run  runState
	pins []func() // release the inputs read from the store
	// When the worker received it, and its run took a slot and ended, in
	// Unix microseconds; the rest of its timing is the run's (phases.go).
	received, started, stored int64
	seq                       uint32 // its number in its slot's runs
	slot                      int32  // the slot that runs it
}

// need is the memory the task holds while it runs: its inputs, its output
// and the scratch its kernel draws blocks into.
func (t *Task) need() int64 {
	n := int64(t.Op.NBytes()) + t.Op.ScratchBytes()
	for i, in := range t.Inputs {
		n += t.Op.InputBytes(i, in.NBytes)
	}
	return n
}

// StateConfig describes the worker a State decides for.
type StateConfig struct {
	Name  string // the worker's name: inputs held elsewhere are not counted
	Slots int    // tasks run at once
	// Mem is the memory quota (see Config.Mem); 0 for none.
	Mem int64
	// HeapChunks, when not nil, gives the bytes of the chunks the store
	// holds in the worker's heap, which count against the quota (a store
	// in shared memory leaves it nil).
	HeapChunks func() int64
	// TrackUses says that the store spills by next use, so it is told the
	// rank of the next task to read each chunk (Ready.NextUse).
	TrackUses bool
	// Small, when not nil, says which chunks the store keeps in the heap:
	// they never spill, so their uses are not tracked.
	Small func(nbytes int64) bool
}

// A State is the policy of one worker.
type State struct {
	cfg     StateConfig
	queue   taskQueue
	running map[wire.RunKey]*Task
	owner   map[uint64]wire.RunKey // the latest run submitted for each chunk
	uses    map[uint64][]int       // priorities of the tasks reading each chunk held
	// made names the control connection each chunk held was made for
	// (nil for an upload). The scheduler forgets a worker's chunks when
	// their connection breaks, so they go with it: nobody else can name
	// them.
	made map[uint64]*wire.Conn
	// orphans are the chunks held whose connection broke (see ConnClosed),
	// by the generation of the break: a scheduler that comes back may
	// adopt them (Adopt) before they are dropped (DropOrphans).
	orphans   map[uint64]uint64
	orphanGen uint64
	conns     int            // control connections open
	epochs    map[int]uint64 // the latest epoch seen of each session (epochs.go)
	nfenced   int            // runs, frees and claims refused as stale
	seq       uint64
	closed    bool
	ready     Ready
}

// Ready is what the Worker must carry out after feeding the State, in this
// order.
type Ready struct {
	Forget    []uint64  // chunks to drop from the store
	NextUse   []NextUse // ranks to tell the store
	Interrupt []*Task   // running tasks to interrupt (cancel their context)
	Cancelled []*Task   // tasks to report cancelled to their connection
	Refused   []Refusal // tasks to report failed for good
	Start     []*Task   // tasks to start, each in a slot of its own
	// Orphaned, when not 0, is the generation of chunks just orphaned:
	// the Worker offers them to its connections (Orphans) and drops them
	// after a grace (DropOrphans).
	Orphaned uint64
}

// A NextUse tells the store the rank of the next task to read chunk ID
// (math.MaxInt64 for none).
type NextUse struct {
	ID   uint64
	Rank int64
}

// A Refusal is a task that can never run here.
type Refusal struct {
	Task *Task
	Err  string
}

// NewState returns the state of an idle worker.
func NewState(cfg StateConfig) *State {
	return &State{cfg: cfg, running: make(map[wire.RunKey]*Task), owner: make(map[uint64]wire.RunKey),
		uses: make(map[uint64][]int), made: make(map[uint64]*wire.Conn), orphans: make(map[uint64]uint64)}
}

// Ready returns what the last inputs ask for and starts a new batch. The
// slices are valid until the next input.
func (s *State) Ready() Ready {
	rd := s.ready
	s.ready = Ready{Forget: rd.Forget[:0], NextUse: rd.NextUse[:0], Interrupt: rd.Interrupt[:0],
		Cancelled: rd.Cancelled[:0], Refused: rd.Refused[:0], Start: rd.Start[:0]}
	return rd
}

// Running and Queued count the tasks running and waiting.
func (s *State) Running() int { return len(s.running) }

// Queued counts the tasks waiting in the queue (a unit counts once).
func (s *State) Queued() int { return len(s.queue) }

// QuotaUsed is the memory the running tasks hold.
func (s *State) QuotaUsed() int64 {
	var used int64
	for _, r := range s.running {
		used += r.need()
	}
	return used
}

// ConnOpened notes a control connection more.
func (s *State) ConnOpened() { s.conns++ }

// Submit queues the tasks of one dispatch unit (one task for an op sent
// alone), in the order they run. A task the quota can never admit is
// refused; the unit's tasks that read its chunk fail when they find no
// input.
func (s *State) Submit(unit []*Task) {
	kept := unit[:0]
	for _, t := range unit {
		s.seq++
		t.Seq, t.index, t.cancelled = s.seq, -1, false
		if later, stale := s.fenced(t.Session, t.Epoch); stale {
			err := s.staleError(fmt.Sprintf("operand %d's run", t.Key), t.Session, t.Epoch, later)
			s.ready.Refused = append(s.ready.Refused, Refusal{t, err.Error()})
			continue
		}
		if err := s.refuse(t); err != nil {
			s.ready.Refused = append(s.ready.Refused, Refusal{t, err.Error()})
			continue
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		return
	}
	for i, t := range kept {
		t.Rest = kept[i+1:]
		s.owner[t.ID] = t.RunKey
		s.noteUses(t, true)
	}
	heap.Push(&s.queue, kept[0])
	s.pump()
}

// refuse returns the error task t fails with when it can never run under
// the memory quota (StateConfig.Mem): its inputs and output alone exceed
// it. It is refused when submitted rather than left to wait for ever.
func (s *State) refuse(t *Task) error {
	need := t.need()
	if s.cfg.Mem <= 0 || need <= s.cfg.Mem {
		return nil
	}
	out, scratch := int64(t.Op.NBytes()), t.Op.ScratchBytes()
	return fmt.Errorf("operand %d (%s) needs %d bytes (inputs %d + output %d + scratch %d), more than the worker's memory quota (--mem %d)",
		t.Key, t.Op.Kind, need, need-out-scratch, out, scratch, s.cfg.Mem)
}

// admit reports whether the task at the head of the queue may start under
// the memory quota: when its need and the needs of the running tasks fit,
// beside the chunks the store holds in the heap. A worker that runs nothing
// starts it anyway (refuse turned away what cannot fit at all), so that
// held chunks never stall it.
func (s *State) admit(t *Task) bool {
	if s.cfg.Mem <= 0 || len(s.running) == 0 {
		return true
	}
	used := t.need() + s.QuotaUsed()
	if s.cfg.HeapChunks != nil {
		used += s.cfg.HeapChunks()
	}
	return used <= s.cfg.Mem
}

// pump starts queued tasks while slots and the quota allow.
func (s *State) pump() {
	for len(s.queue) > 0 && len(s.running) < s.cfg.Slots && !s.closed {
		t := s.queue[0]
		if !s.admit(t) {
			return
		}
		heap.Pop(&s.queue)
		s.running[t.RunKey] = t
		s.ready.Start = append(s.ready.Start, t)
	}
}

// Cancel drops or interrupts run k: a running task is interrupted (it
// reports itself when it ends); a queued one, or one of a unit waiting
// behind the op its slot runs, is dropped and reported cancelled now.
func (s *State) Cancel(k wire.RunKey) {
	if t, ok := s.running[k]; ok {
		t.cancelled = true
		s.ready.Interrupt = append(s.ready.Interrupt, t)
		return
	}
	if t := s.dropQueued(k); t != nil {
		s.ready.Cancelled = append(s.ready.Cancelled, t)
		return
	}
	for _, t := range s.running {
		if r := unitMember(t, k); r != nil && !r.cancelled {
			r.cancelled = true
			s.disown(r)
			s.ready.Cancelled = append(s.ready.Cancelled, r)
			return
		}
	}
}

// dropQueued removes run k from the queue, alone, leading its unit (the
// unit's next op then leads it) or within it, and returns its task.
func (s *State) dropQueued(k wire.RunKey) *Task {
	for _, t := range s.queue {
		if t.RunKey == k {
			heap.Remove(&s.queue, t.index)
			s.disown(t)
			if len(t.Rest) > 0 {
				heap.Push(&s.queue, t.Rest[0])
			}
			return t
		}
		if r := unitMember(t, k); r != nil && !r.cancelled {
			r.cancelled = true
			s.disown(r)
			return r
		}
	}
	return nil
}

// unitMember returns the run k among the ops of t's unit after t, or nil.
func unitMember(t *Task, k wire.RunKey) *Task {
	for _, r := range t.Rest {
		if r.RunKey == k {
			return r
		}
	}
	return nil
}

// disown ends the claim of task t, dropped, on its chunk: a chunk an
// earlier run left under its ID is stale.
func (s *State) disown(t *Task) {
	s.noteUses(t, false)
	if s.owner[t.ID] == t.RunKey {
		delete(s.owner, t.ID)
		s.forget(t.ID)
	}
}

// forget drops chunk id.
func (s *State) forget(id uint64) {
	delete(s.made, id)
	delete(s.orphans, id)
	s.ready.Forget = append(s.ready.Forget, id)
}

// Free drops the chunks the scheduler frees.
func (s *State) Free(ids []uint64) {
	for _, id := range ids {
		s.forget(id)
	}
}

// Put records chunk id, stored without a task (an upload): it stays until
// freed, whichever connection goes.
func (s *State) Put(id uint64) { s.made[id] = nil }

// ConnClosed drops what came on control connection c: its queued tasks
// and its running ones (interrupted). The chunks made for it, and once no
// control connection is left every chunk held, become orphans: the
// scheduler whose connection broke has forgotten them, but it may come
// back (the worker was paused, the network failed for a while) and adopt
// them rather than make them again; one that died never will, and the
// Worker drops them after a grace (DropOrphans).
func (s *State) ConnClosed(c *wire.Conn) {
	s.conns--
	gen := s.orphanGen + 1
	for _, id := range sortedIDs(s.made) {
		if s.made[id] == c || s.conns <= 0 {
			delete(s.made, id)
			s.orphans[id] = gen
		}
	}
	if len(s.orphans) > 0 {
		for _, g := range s.orphans {
			if g == gen {
				s.orphanGen = gen
				s.ready.Orphaned = gen
				break
			}
		}
	}
	kept := s.queue[:0]
	for _, t := range s.queue {
		if t.Conn != c {
			t.index = len(kept)
			kept = append(kept, t)
			continue
		}
		s.disown(t)
		for _, r := range t.Rest {
			s.disown(r)
		}
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	heap.Init(&s.queue)
	for _, k := range sortedKeys(s.running) {
		t := s.running[k]
		if t.Conn != c {
			continue
		}
		t.cancelled = true
		s.ready.Interrupt = append(s.ready.Interrupt, t)
		for _, r := range t.Rest {
			if !r.cancelled {
				r.cancelled = true
				s.disown(r)
			}
		}
	}
}

// Orphans returns the chunks held that no connection claims, sorted.
func (s *State) Orphans() []uint64 {
	ids := make([]uint64, 0, len(s.orphans))
	for id := range s.orphans {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Adopt makes the orphans among ids the chunks of control connection c,
// as if made for it: the scheduler that lost them has them back.
func (s *State) Adopt(c *wire.Conn, ids []uint64) {
	for _, id := range ids {
		if _, ok := s.orphans[id]; ok {
			delete(s.orphans, id)
			s.made[id] = c
		}
	}
}

// DropOrphans drops the orphans of generation gen and before that nobody
// adopted.
func (s *State) DropOrphans(gen uint64) {
	for _, id := range s.Orphans() {
		if s.orphans[id] <= gen {
			s.forget(id)
		}
	}
}

// An Outcome says how a task's kernel ended, as the Worker found it.
type Outcome uint8

const (
	// Computed: the kernel made the chunk, which the Worker may store.
	Computed Outcome = iota
	// Failed: the kernel or the loading of an input failed.
	Failed
)

// Ended takes task t out of its slot once its kernel returned, and says
// what to do with its chunk: store reports whether the Worker stores it
// (t is still the latest run of its op, and neither failed nor
// cancelled); mine whether t was that latest run at all. When store is
// true the Worker reports the chunk with Stored or Lost.
func (s *State) Ended(t *Task, out Outcome) (store, mine bool) {
	delete(s.running, t.RunKey)
	s.noteUses(t, false)
	// Only the latest run of an op here may touch its chunk: an earlier
	// one, cancelled but still running, must not replace or drop it.
	mine = s.owner[t.ID] == t.RunKey
	if !mine {
		return false, false
	}
	delete(s.owner, t.ID)
	if out == Computed && !t.cancelled {
		return true, true
	}
	s.forget(t.ID) // what an earlier run left is stale
	return false, true
}

// Stored records that the chunk of task t is in the store.
func (s *State) Stored(t *Task) { s.made[t.ID] = t.Conn }

// Cancelled reports whether task t was cancelled.
func (t *Task) Cancelled() bool { return t.cancelled }

// Next says how t's slot goes on once t has ended: with next, the next op
// of t's unit, counted as running in the same slot; or, when a more urgent
// task waits, with nothing, rest (the unit's remaining ops) going back to
// the queue once the reports of the ops before it are out (Yield). With
// neither, the slot is free and queued tasks may start.
func (s *State) Next(t *Task) (next, rest *Task) {
	for i, r := range t.Rest {
		if !r.cancelled && !s.closed {
			next = r
			next.Rest = t.Rest[i+1:]
			break
		}
	}
	if next != nil && len(s.queue) > 0 && s.queue.less(s.queue[0], next) {
		// A more urgent op arrived (one that frees the chunks waiting for
		// it): the rest of the unit queues behind it.
		rest, next = next, nil
	}
	if next != nil {
		s.running[next.RunKey] = next
	} else {
		s.pump()
	}
	return next, rest
}

// Yield queues rest, the remaining ops of a unit that gave up its slot.
func (s *State) Yield(rest *Task) {
	heap.Push(&s.queue, rest)
	s.pump()
}

// Unreported drops the chunks of done reports that could not be sent,
// unless a later run owns them again: the scheduler never heard of them,
// so nobody would free them.
func (s *State) Unreported(ids []uint64) {
	for _, id := range ids {
		if _, again := s.owner[id]; !again {
			s.forget(id)
		}
	}
}

// LastUse reports whether running task t is the only task queued or
// running here that reads chunk id.
func (s *State) LastUse(t *Task, id uint64) bool {
	r := s.uses[id]
	return len(r) == 1 && r[0] == t.Prio
}

// Close stops the starting of tasks.
func (s *State) Close() { s.closed = true }

// noteUses records that task t, queued (add) or ended or dropped (!add),
// reads its inputs held here, and tells the store the rank of the next
// task to read each: the lowest priority value among the tasks reading it,
// or none. Chunks the store keeps in the heap are never spilled: they are
// left out.
func (s *State) noteUses(t *Task, add bool) {
	if !s.cfg.TrackUses {
		return
	}
	for _, in := range t.Inputs {
		if in.Worker != s.cfg.Name || s.cfg.Small != nil && s.cfg.Small(in.NBytes) {
			continue
		}
		ranks := s.uses[in.ID]
		if add {
			ranks = append(ranks, t.Prio)
		} else if i := slices.Index(ranks, t.Prio); i >= 0 {
			ranks = slices.Delete(ranks, i, i+1)
		}
		next := int64(math.MaxInt64) // shm.NoNextUse
		if len(ranks) == 0 {
			delete(s.uses, in.ID)
		} else {
			s.uses[in.ID] = ranks
			next = int64(slices.Min(ranks))
		}
		s.ready.NextUse = append(s.ready.NextUse, NextUse{in.ID, next})
	}
}

// taskQueue is a heap of tasks, lowest priority value first.
type taskQueue []*Task

func (q taskQueue) Len() int           { return len(q) }
func (q taskQueue) Less(i, j int) bool { return q.less(q[i], q[j]) }

// less orders tasks by priority, then by submission.
func (taskQueue) less(a, b *Task) bool {
	if a.Prio != b.Prio {
		return a.Prio < b.Prio
	}
	return a.Seq < b.Seq
}
func (q taskQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *taskQueue) Push(x any) { t := x.(*Task); t.index = len(*q); *q = append(*q, t) }
func (q *taskQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	t.index = -1
	return t
}

// sortedIDs returns m's keys in order, so that what the state asks for
// does not depend on map order.
func sortedIDs[V any](m map[uint64]V) []uint64 {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// sortedKeys returns the runs of m in order.
func sortedKeys(m map[wire.RunKey]*Task) []wire.RunKey {
	ks := make([]wire.RunKey, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b wire.RunKey) int {
		switch {
		case a.Job != b.Job:
			return cmpU(a.Job, b.Job)
		case a.Key != b.Key:
			return a.Key - b.Key
		}
		return a.Attempt - b.Attempt
	})
	return ks
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}
