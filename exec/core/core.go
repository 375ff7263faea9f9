package core

import (
	"errors"
	"fmt"
	"slices"

	"marsfs/exec/plan"
	"marsfs/tensor/chunk"
)

// This file holds the scheduling core: the operand state machine of one job.
// It does no I/O, starts no goroutine and reads no clock. The Scheduler feeds
// it what happens (an op finished on a worker, a worker left, the user
// cancelled) and carries out the instructions it returns (run this op there,
// free that chunk, the job is over). Tests drive it alone.

// ErrCancelled is the error of a job cancelled through Core.Cancel.
var ErrCancelled = errors.New("job cancelled")

// ErrStoredLost is wrapped by the error of a job that failed because a
// chunk of an earlier job it reads (a stored op's) is gone: no op of the
// job can make it again, but its lineage may (engine/lineage.go).
var ErrStoredLost = errors.New("a stored chunk it reads is gone")

// A Location says where a chunk lives.
type Location struct {
	ID     uint64 // global chunk ID
	Worker string
	NBytes int64
}

// A RunOp instructs Worker to run op Key of the job.
type RunOp struct {
	Key      int
	Worker   string
	Attempt  int
	Priority int        // lower runs first
	Inputs   []Location // where each of the op's inputs is, in op.Inputs order
	// Unit, when above 1, says that this RunOp and the Unit-1 after it form
	// one dispatch unit: the worker runs them one after the other, in this
	// order, in one slot. An input made by an earlier op of the unit is
	// located on the worker before it exists.
	Unit int
	// Flush, in a unit, says that ops outside the unit read this op's
	// chunk (or the job keeps it): the worker reports it, and the unit's
	// ops before it, as soon as it is made.
	Flush bool
}

// A CancelOp instructs Worker to drop or interrupt op Key.
type CancelOp struct {
	Key     int
	Worker  string
	Attempt int
}

// Output is what the core asks the caller to do after one input, in order:
// carry out Free, Cancel and Run, report Events, and if Done the job is over
// with Err (nil for success).
type Output struct {
	Run    []RunOp
	Cancel []CancelOp
	Free   []Location
	Events []Event // At is left zero: the core has no clock
	Done   bool
	Err    error
}

// Options tune a Core; the zero value uses the defaults.
type Options struct {
	MaxAttempts int        // runs of an op before it is FATAL; 3 when 0
	Order       OrderFunc  // PlanOrder when nil
	Assign      AssignFunc // PlanAssign when nil
	// Stored locates the chunks that the graph's Stored ops name.
	Stored func(id uint64) (Location, bool)
	// Depth bounds the ops sent to a worker and not yet reported to Depth
	// per slot (2 when 0; no bound when negative). READY ops beyond it wait
	// at the core, so that they go to whichever worker frees a slot first,
	// including one that joins mid-job.
	Depth int
	// RootDepth bounds the initial operands (those with no inputs, which
	// only add chunks) sent to a worker and not yet reported, per slot (2
	// when 0). Ops that consume chunks become READY only when the scheduler
	// hears of their inputs; were the leaves of a reduction sent as deep as
	// other ops, a worker would race through them and keep hundreds of
	// chunks alive where the planned order needs a few (Dask queues root
	// tasks at its scheduler for the same reason).
	RootDepth int
	// Planned, if not nil, is told the job's placement once it is made.
	Planned func(Placement)
	// Observe, if not nil, is given the events as they happen, in order,
	// instead of Output.Events: a job of many operands then builds no
	// slices of them.
	Observe func(Event)
	// UnitOps, when above 1, groups small ops into dispatch units of at
	// most UnitOps ops (see units.go); 0 or 1 sends every op alone.
	UnitOps int
	// UnitCost bounds the bytes a unit's ops touch, reading, writing and
	// generating on the way, and a quarter of it the bytes of the chunks
	// they read and make (32 MiB when 0); an op above an eighth of either
	// is never grouped. A unit counts as one op against its worker's
	// Depth and, if it leads with an initial op, RootDepth.
	UnitCost int64
}

// opState is what the Core holds of one op: 32 bytes and no pointer, so
// that the ops of a job of millions are one block the collector does not
// scan. Its worker is an index in the Core's table of names; why it last
// failed, which few ops have, is in a map beside (Core.lastFail).
type opState struct {
	nbytes   int64
	worker   int32  // where it is sent or was run, in Core.names; 0 ("") if nowhere
	attempt  int32  // of the current or last run; 0 before the first
	waiting  int32  // inputs not yet finished
	users    int32  // successors not yet finished
	failures uint16 // runs that failed or were lost with their worker
	fetches  uint8  // runs that failed fetching an input from a live peer
	state    OpState
	initial  bool
	sent     bool // a RunOp for the current attempt is out
	inUnit   bool // ... as part of its unit
	revived  bool // its chunk was lost (or freed) and is being made again
}

// A Core is the operand state machine of one job.
type Core struct {
	g    *chunk.Graph
	ids  []uint64
	keep map[uint64]bool
	opts Options
	rank []int32 // by key, as the order made it; 4 bytes an op
	// The successors of op k are succ[succOff[k]:succOff[k+1]], in key
	// order: two int32 columns, not a slice an op.
	succOff []int32
	succ    []int32
	ops     []opState
	workers map[string]*workerState
	// wnames[i] is the name of the worker opState.worker i means, wnames[0]
	// "" (none); windex the other way.
	wnames   []string
	windex   map[string]int32
	lastFail map[int]string // why an op last failed, for the ops that did
	locSlab  []Location     // what the next RunOps' inputs are cut from
	freeSlab []Location     // what the next outputs' frees are cut from
	runSlab  []RunOp        // and their runs

	started    bool
	stopping   bool  // cancelled or failed: no new runs
	err        error // why the job stops
	done       bool
	finished   int // ops FINISHED or FREED
	nsent      int // ops whose run is out (sent), which a stopping job waits for
	liveChunks int
	liveBytes  int64
	// workerBytes is liveBytes by the worker holding the chunks.
	workerBytes map[string]int64
	transfer    int64
	spilled     int64
	pending     []int     // entered READY since the last dispatch
	shared      readyHeap // READY ops waiting for any worker (each worker's own: workerState.own)
	// The workers indexed (workers.go): wstate by their index in wnames
	// (nil once down), and in heaps by what dispatch asks of them.
	wstate                        []*workerState
	ownReady, ownAll, idle, roomy workerHeap
	out                           *Output
	outBuf                        Output // what out points to while a call is under way
	holding                       bool   // dispatch waits for Dispatch (see Hold)
	// timing is the worker's measurement of the run the input being
	// stepped reports (see Input.Timing), for the event it makes.
	timing    Timing
	timingKey int
	timed     bool // timing is the input's
	// place's buffers: its op's inputs' holders and bytes, and the
	// workers it weighs.
	holders     []string
	holderBytes []int64
	cands       []string

	// Dispatch units (units.go): unitOf[k] is op k's unit, -1 for none;
	// units[u] its ops in rank order; unitLeft[u] the ops of a unit sent
	// together whose reports are still due.
	unitOf   []int32
	units    [][]int32
	unitLeft []int32

	// With the default order and assignment, the plan graph the order
	// made, which the assignment reads in Start.
	plan *plan.Graph
}

// New returns the state machine of the job that computes g, whose op k
// makes the chunk with global ID ids[k]; chunks named in keep outlive it.
func New(g *chunk.Graph, ids []uint64, keep map[uint64]bool, opts Options) *Core {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	if opts.Depth == 0 {
		opts.Depth = 2
	}
	if opts.RootDepth == 0 {
		opts.RootDepth = 2
	}
	if opts.UnitCost <= 0 {
		opts.UnitCost = 32 << 20
	}
	c := &Core{g: g, ids: ids, keep: keep, opts: opts, workers: make(map[string]*workerState), workerBytes: make(map[string]int64),
		wnames: []string{""}, windex: map[string]int32{"": 0}, lastFail: make(map[int]string)}
	if opts.Order != nil {
		c.rank = int32s(opts.Order(g))
	} else {
		// PlanOrder, on a plan graph that the default assignment reads
		// again in Start.
		c.plan = plan.NewGraph(g)
		c.rank = c.plan.Order()
	}
	c.shared.rank = c.rank
	c.initHeaps()
	c.ops = make([]opState, len(g.Ops))
	for _, op := range g.Ops {
		c.ops[op.Key].waiting = int32(len(op.Inputs))
		c.ops[op.Key].initial = len(op.Inputs) == 0 && op.Stored == 0
		for _, in := range op.Inputs {
			c.ops[in].users++
		}
	}
	c.succOff = make([]int32, len(g.Ops)+1)
	for k := range c.ops {
		c.succOff[k+1] = c.succOff[k] + c.ops[k].users
	}
	c.succ = make([]int32, c.succOff[len(g.Ops)])
	fill := c.succOff[:len(g.Ops)] // advanced as filled, then put back
	for _, op := range g.Ops {
		for _, in := range op.Inputs {
			c.succ[fill[in]] = int32(op.Key)
			fill[in]++
		}
	}
	for k := len(g.Ops) - 1; k > 0; k-- {
		fill[k] = fill[k-1]
	}
	if len(fill) > 0 {
		fill[0] = 0
	}
	return c
}

// successors returns the ops that read op k's chunk.
func (c *Core) successors(k int) []int32 { return c.succ[c.succOff[k]:c.succOff[k+1]] }

// intern returns the index of the worker called name in the Core's table
// of names, adding it.
func (c *Core) intern(name string) int32 {
	i, ok := c.windex[name]
	if !ok {
		i = int32(len(c.wnames))
		c.wnames = append(c.wnames, name)
		c.windex[name] = i
	}
	return i
}

// State returns op k's state.
func (c *Core) State(k int) OpState { return c.ops[k].state }

// Holder returns where op k's chunk is, if it exists.
func (c *Core) Holder(k int) (Location, bool) {
	o := &c.ops[k]
	if o.state != Finished {
		return Location{}, false
	}
	return Location{ID: c.chunkID(k), Worker: c.wnames[o.worker], NBytes: o.nbytes}, true
}

// Done reports whether the job is over, and its error.
func (c *Core) Done() (bool, error) { return c.done, c.err }

// Workers is the number of workers the job can run on.
func (c *Core) Workers() int { return len(c.workers) }

// Stats returns the job's chunks alive in the cluster and the bytes moved
// between workers so far.
func (c *Core) Stats() (liveChunks int, liveBytes, transfer int64) {
	return c.liveChunks, c.liveBytes, c.transfer
}

func (c *Core) chunkID(k int) uint64 {
	if s := c.g.Ops[k].Stored; s != 0 {
		return s
	}
	return c.ids[k]
}

func (c *Core) begin() *Output {
	c.outBuf = Output{}
	c.out = &c.outBuf
	return c.out
}

func (c *Core) end() Output {
	if !c.done {
		if !c.holding {
			c.dispatch()
		}
		c.checkDone()
	}
	out := *c.out
	if n := len(out.Free); n > 0 && n <= len(c.freeSlab) && &out.Free[0] == &c.freeSlab[0] {
		c.freeSlab = c.freeSlab[n:]
	}
	out.Free = out.Free[:len(out.Free):len(out.Free)] // its own: an append must not run into the slab
	if n := len(out.Run); n > 0 && n <= len(c.runSlab) && &out.Run[0] == &c.runSlab[0] {
		c.runSlab = c.runSlab[n:]
	}
	out.Run = out.Run[:len(out.Run):len(out.Run)]
	c.out = nil
	return out
}

// addFree adds l to the output's frees, which are cut from a slab (see end).
func (c *Core) addFree(l Location) {
	if c.out.Free == nil {
		if len(c.freeSlab) < 64 {
			c.freeSlab = make([]Location, 1024)
		}
		c.out.Free = c.freeSlab[:0:len(c.freeSlab)]
	}
	c.out.Free = append(c.out.Free, l)
}

func (c *Core) emit(k int, st OpState, worker string, errText string) {
	o := &c.ops[k]
	o.state = st
	if st == Ready {
		c.pending = append(c.pending, k)
	}
	ev := Event{Key: k, State: st, Worker: worker, Attempt: int(o.attempt), Err: errText,
		LiveChunks: c.liveChunks, LiveBytes: c.liveBytes, WorkerBytes: c.workerBytes[worker], TransferBytes: c.transfer, SpilledBytes: c.spilled}
	if c.timed && k == c.timingKey && (st == Running || st == Finished) {
		ev.Phase = c.timing.Phase
		if c.opts.Observe != nil {
			ev.Timing = &c.timing // valid during the call
		} else {
			t := c.timing // Output.Events outlive the next input
			ev.Timing = &t
		}
	}
	if c.opts.Observe != nil {
		c.opts.Observe(ev)
		return
	}
	c.out.Events = append(c.out.Events, ev)
}

// workerUp adds a worker with the given slots, or updates its slots.
func (c *Core) workerUp(name string, slots int) Output {
	c.begin()
	w, ok := c.workers[name]
	if !ok {
		w = c.addWorker(name)
	}
	w.slots = slots
	if c.opts.Depth > 0 {
		w.limit = max(slots, 1) * c.opts.Depth
		w.rootLimit = max(slots, 1) * c.opts.RootDepth
	}
	c.touch(w)
	return c.end()
}

// startJob makes the stored ops FINISHED and the initial ops READY, and sends
// the READY ops to the workers known so far.
func (c *Core) startJob() Output {
	c.begin()
	if c.started {
		return c.end()
	}
	c.started = true
	for _, op := range c.g.Ops {
		if op.Stored == 0 {
			continue
		}
		loc, ok := Location{}, false
		if c.opts.Stored != nil {
			loc, ok = c.opts.Stored(op.Stored)
		}
		if !ok {
			c.lastFail[op.Key] = fmt.Sprintf("stored chunk %d is gone", op.Stored)
			c.fatal(op.Key, &storedLost{fmt.Sprintf("operand %d: stored chunk %d is gone", op.Key, op.Stored)})
			return c.end()
		}
		o := &c.ops[op.Key]
		o.worker, o.nbytes = c.intern(loc.Worker), loc.NBytes
		c.finish(op.Key, loc.Worker)
	}
	var ws []WorkerLoad
	for _, name := range SortedKeys(c.workers) {
		ws = append(ws, WorkerLoad{Name: name, Slots: c.workers[name].slots})
	}
	var assign assignment
	switch {
	case c.opts.Assign != nil:
		rank := make([]int, len(c.rank))
		for k, r := range c.rank {
			rank[k] = int(r)
		}
		assign.byKey = c.opts.Assign(c.g, rank, ws)
	case c.plan != nil:
		assign = planAssignIndex(c.plan, c.g, c.rank, ws)
	default:
		assign = planAssignIndex(plan.NewGraph(c.g), c.g, c.rank, ws)
	}
	c.plan = nil // read no more
	if c.opts.Planned != nil {
		c.opts.Planned(c.placement(ws, &assign))
	}
	c.formUnits(&assign)
	ninitial := 0
	for k := range c.ops {
		if c.ops[k].initial {
			ninitial++
		}
	}
	c.pending = slices.Grow(c.pending, ninitial) // made once, not grown by copies
	last, lastID := "", int32(0)                 // the names run in long stretches
	for k := range c.ops {
		if o := &c.ops[k]; o.initial {
			if name := assign.at(k); name != last {
				last, lastID = name, c.intern(name)
			}
			o.worker = lastID
			c.emit(k, Ready, "", "")
		}
	}
	return c.end()
}

// dispatchHeld ends a hold: it sends the READY ops to workers with room.
// After an InHold input, the inputs that follow leave the dispatch of
// READY ops to the next InDispatch: a caller that feeds the core many
// inputs at once (the reports of a frame) so dispatches once for them all,
// in rank order, rather than once an input.
func (c *Core) dispatchHeld() Output {
	c.holding = false
	c.begin()
	return c.end()
}

// int32s returns a rank as the Core keeps it.
func int32s(rank []int) []int32 {
	out := make([]int32, len(rank))
	for k, r := range rank {
		out[k] = int32(r)
	}
	return out
}

// AssignedTo is the worker an assignment gives op k, "" for none.
func AssignedTo(assign []string, k int) string {
	if k < len(assign) {
		return assign[k]
	}
	return ""
}

// dispatch sends READY ops to workers with room, in rank order. An initial
// op waits for the worker the assignment gave it while that worker is up;
// any other op goes to the worker with room holding the most bytes of its
// inputs. A worker's report frees room, so the ops beyond the workers' room
// go to the first workers ready for them.
func (c *Core) dispatch() {
	if c.stopping || len(c.workers) == 0 || !c.started {
		return
	}
	for _, k := range c.pending {
		o := &c.ops[k]
		if o.state != Ready || o.sent || c.follows(k) {
			continue
		}
		c.enqueue(k)
	}
	c.pending = c.pending[:0]
	for {
		k, w := c.next()
		if k < 0 {
			return
		}
		c.send(k, w)
	}
}

// follows reports whether the READY op k, an initial op of a unit but not
// its first, is to go with its unit: it has not run, and neither has the
// unit's first op, which waits for a worker. It then waits for no worker of
// its own, and send enqueues it should the first op go alone. So the tens
// of thousands of leaves of a reduction are not queued but their units'
// first ones.
func (c *Core) follows(k int) bool {
	if c.unitOf == nil || !c.ops[k].initial || c.ops[k].attempt != 0 {
		return false
	}
	u := c.unitOf[k]
	if u < 0 {
		return false
	}
	lead := &c.ops[c.units[u][0]]
	return int(c.units[u][0]) != k && lead.attempt == 0 && !lead.sent
}

// place picks the worker for a READY op that is not waiting for its
// assigned worker: among those with room, the one holding the most bytes of
// its inputs, and not the one it last ran on if another has room.
func (c *Core) place(k int) string {
	o := &c.ops[k]
	op := c.g.Ops[k]
	holders, nb := c.holders[:0], c.holderBytes[:0]
	for i, in := range op.Inputs {
		holders = append(holders, c.wnames[c.ops[in].worker])
		nb = append(nb, op.InputBytes(i, c.ops[in].nbytes))
	}
	c.holders, c.holderBytes = holders, nb
	avoid := ""
	if o.attempt > 0 {
		avoid = c.wnames[o.worker] // retry elsewhere when there is elsewhere
	}
	return pickWorker(holders, nb, c.workers, c.candidates(holders), avoid)
}

// send makes RunOp for op k on worker w, or for k's whole unit when k
// leads it and none of it has run.
func (c *Core) send(k int, w string) {
	ws := c.workers[w]
	ws.outstanding++
	if c.ops[k].initial {
		ws.roots++
	}
	c.touch(ws)
	if c.unitOf != nil {
		if u := c.unitOf[k]; u >= 0 && int(c.units[u][0]) == k && c.intact(u) {
			ms := c.units[u]
			c.unitLeft[u] = int32(len(ms))
			for i, m := range ms {
				c.sendOne(int(m), w, true)
				r := &c.out.Run[len(c.out.Run)-1]
				if i == 0 {
					r.Unit = len(ms)
				}
				r.Flush = c.keep[c.ids[m]]
				for _, s := range c.successors(int(m)) {
					r.Flush = r.Flush || c.unitOf[s] != u
				}
			}
			return
		}
	}
	if c.unitOf != nil {
		// k goes alone: the initial ops that were to go with it wait for
		// workers of their own.
		if u := c.unitOf[k]; u >= 0 && int(c.units[u][0]) == k && c.ops[k].attempt == 0 {
			for _, m := range c.units[u][1:] {
				if o := &c.ops[m]; o.initial && o.attempt == 0 && o.state == Ready && !o.sent {
					c.enqueue(int(m))
				}
			}
		}
	}
	c.sendOne(k, w, false)
}

// sendOne makes RunOp for op k on worker w; the caller counts it against
// the worker's room.
func (c *Core) sendOne(k int, w string, inUnit bool) {
	o := &c.ops[k]
	op := c.g.Ops[k]
	n := len(op.Inputs)
	if len(c.locSlab) < n {
		// Locations are taken from slabs: one allocation for many ops.
		c.locSlab = make([]Location, max(n, 256))
	}
	ins := c.locSlab[:n:n]
	c.locSlab = c.locSlab[n:]
	for i, in := range op.Inputs {
		ins[i] = Location{ID: c.chunkID(in), Worker: c.wnames[c.ops[in].worker], NBytes: c.ops[in].nbytes}
		if ins[i].Worker != w {
			c.transfer += op.InputBytes(i, ins[i].NBytes)
		}
	}
	if !o.sent {
		c.nsent++
	}
	o.worker, o.sent, o.inUnit = c.intern(w), true, inUnit
	o.attempt++
	if c.out.Run == nil {
		// Like frees, runs are cut from a slab (see end), large enough
		// for the units of a whole dispatch (a longer one grows by
		// append). A job of a few hundred ops takes a slab of its size:
		// 16384 runs are 1.3 MB of fresh pages, which CLIM-MEAN's 245
		// ops paid at every start, before the first run went out.
		if need := min(4096, len(c.ops)+1); len(c.runSlab) < need {
			c.runSlab = make([]RunOp, 4*need)
		}
		c.out.Run = c.runSlab[:0:len(c.runSlab)]
	}
	c.out.Run = append(c.out.Run, RunOp{Key: k, Worker: w, Attempt: int(o.attempt), Priority: int(c.rank[k]), Inputs: ins})
}

// current reports whether a report from worker about attempt of op k is
// about the op's current run; stale reports are ignored.
func (c *Core) current(k int, worker string, attempt int) bool {
	if k < 0 || k >= len(c.ops) {
		return false
	}
	o := &c.ops[k]
	return o.sent && c.wnames[o.worker] == worker && int(o.attempt) == attempt
}

// settle records that op k's run is no longer out. An op sent in a unit
// frees the worker's room once the unit's last op is settled.
func (c *Core) settle(k int) {
	o := &c.ops[k]
	if o.sent {
		c.nsent--
	}
	o.sent = false
	lead, unit := k, o.inUnit
	if unit {
		o.inUnit = false
		u := c.unitOf[k]
		if c.unitLeft[u]--; c.unitLeft[u] > 0 {
			return
		}
		lead = int(c.units[u][0])
	}
	if w, ok := c.workers[c.wnames[o.worker]]; ok {
		w.outstanding--
		if c.ops[lead].initial {
			w.roots--
		}
		c.touch(w)
	}
}

// opStarted records that the worker began running op k.
func (c *Core) opStarted(k int, worker string, attempt int) Output {
	c.begin()
	if !c.current(k, worker, attempt) {
		return c.end()
	}
	switch st := c.ops[k].state; {
	case st == Ready:
		c.emit(k, Running, worker, "")
	case st == Running && c.timed && c.timing.Phase != NoPhase:
		c.emit(k, Running, worker, "") // a change of phase
	}
	return c.end()
}

// opFinished records that op k finished on worker with a chunk of nbytes.
// A report about a run the core no longer waits for (abandoned, or from
// before a retry) frees the chunk it made, unless that chunk is the one the
// core knows, or a later run of the op is out to the same worker: that run
// replaces the chunk or drops it.
func (c *Core) opFinished(k int, worker string, attempt int, nbytes int64) Output {
	c.begin()
	if !c.current(k, worker, attempt) {
		if k >= 0 && k < len(c.ops) && c.g.Ops[k].Stored == 0 {
			o := &c.ops[k]
			known := o.state == Finished && c.wnames[o.worker] == worker
			later := o.sent && c.wnames[o.worker] == worker
			if !known && !later {
				c.addFree(Location{ID: c.ids[k], Worker: worker, NBytes: nbytes})
			}
		}
		return c.end()
	}
	c.settle(k)
	o := &c.ops[k]
	o.nbytes = nbytes
	c.liveChunks++
	c.hold(worker, nbytes)
	switch o.state {
	case Unscheduled:
		// An op of a unit cannot finish before its inputs: its chunk is
		// not one the core can use.
		c.addFree(Location{ID: c.ids[k], Worker: worker, NBytes: nbytes})
		c.liveChunks--
		c.hold(worker, -nbytes)
	case Ready, Running:
		c.finish(k, worker)
		for _, in := range c.g.Ops[k].Inputs {
			if c.ops[in].users--; c.ops[in].users == 0 {
				c.maybeFree(in)
			}
		}
		if o.users == 0 {
			c.maybeFree(k)
		}
	case Cancelling:
		// It finished before the cancel reached it: its chunk goes too.
		c.addFree(Location{ID: c.ids[k], Worker: worker, NBytes: nbytes})
		c.liveChunks--
		c.hold(worker, -nbytes)
		c.emit(k, Cancelled, worker, "")
	}
	return c.end()
}

// finish makes op k FINISHED and its successors whose inputs are all
// finished READY.
func (c *Core) finish(k int, worker string) {
	c.finished++
	c.ops[k].revived = false
	c.emit(k, Finished, worker, "")
	for _, s := range c.successors(k) {
		if c.ops[s].waiting--; c.ops[s].waiting == 0 && c.ops[s].state == Unscheduled && !c.stopping {
			c.emit(int(s), Ready, "", "")
		}
	}
}

// maybeFree frees op k's chunk unless it must outlive the job or was not
// made by it.
func (c *Core) maybeFree(k int) {
	if c.g.Ops[k].Stored != 0 || c.keep[c.ids[k]] {
		return
	}
	c.free(k)
}

func (c *Core) free(k int) {
	o := &c.ops[k]
	if o.state != Finished || c.g.Ops[k].Stored != 0 {
		return
	}
	name := c.wnames[o.worker]
	c.addFree(Location{ID: c.ids[k], Worker: name, NBytes: o.nbytes})
	c.liveChunks--
	c.hold(name, -o.nbytes)
	c.emit(k, Freed, name, "")
}

// hold counts nbytes more (fewer, when negative) of the job's chunks alive
// on worker.
func (c *Core) hold(worker string, nbytes int64) {
	c.liveBytes += nbytes
	if c.workerBytes[worker] += nbytes; c.workerBytes[worker] == 0 {
		delete(c.workerBytes, worker)
	}
}

func (c *Core) checkDone() {
	if c.done || !c.started {
		return
	}
	if !c.stopping {
		if c.finished == len(c.ops) {
			c.done = true
			c.out.Done = true
		}
		return
	}
	if c.nsent > 0 {
		return
	}
	c.done = true
	c.out.Done, c.out.Err = true, c.err
}

// storedLost is an error that Is ErrStoredLost, with its own text.
type storedLost struct{ text string }

func (e *storedLost) Error() string        { return e.text }
func (e *storedLost) Is(target error) bool { return target == ErrStoredLost }

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// placement is the Core's plan of its job: its rank, its workers, the
// assignment of the initial operands, and where the stored chunks are.
func (c *Core) placement(ws []WorkerLoad, assign *assignment) Placement {
	p := Placement{Rank: c.rank, Workers: ws}
	p.Worker.Grow(len(c.ops))
	for k := range c.ops {
		if c.ops[k].initial {
			p.Worker.Set(k, assign.at(k))
		}
	}
	for _, op := range c.g.Ops {
		// A stored op is never initial: it computes nothing.
		if op.Stored != 0 {
			p.Worker.Set(op.Key, c.wnames[c.ops[op.Key].worker])
		}
	}
	return p
}
