package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// GraphState is the state of a submitted graph.
type GraphState uint8

// Graph states, as the first line of a graph's status file shows them.
const (
	Preparing GraphState = iota
	RunningGraph
	Succeeded
	Failed
	CancelledGraph
)

var graphStateNames = [...]string{"PREPARING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"}

func (s GraphState) String() string {
	if int(s) < len(graphStateNames) {
		return graphStateNames[s]
	}
	return "GraphState(?)"
}

// Ended reports whether the graph has stopped for good.
func (s GraphState) Ended() bool { return s >= Succeeded }

// Status is a snapshot of a graph's execution.
type Status struct {
	State      GraphState
	Operands   int
	Finished   int
	Running    int
	Failed     int
	Elapsed    time.Duration
	PeakBytes  int64
	PeakChunks int
	// WorkerPeaks are the most bytes of the graph's chunks each worker
	// held at once, by worker name in order.
	WorkerPeaks   []WorkerBytes
	TransferBytes int64
	SpilledBytes  int64
	Bytes         int64 // bytes of the chunks finished so far
	TotalBytes    int64 // bytes of all the graph's chunks
	// Work and TotalWork are the cost model's work (core.OpWork) of the
	// operands finished so far and of all: progress's estimate of the
	// time left goes by them.
	Work, TotalWork int64
	// For a graph tiled in stages (a length depends on the data): the
	// stages tiled so far, and each output's shape as known so far,
	// "name (?,)" until its stage is tiled. Zero and nil otherwise.
	Stage  int
	Shapes []string
	// Waiting says what the running graph waits for with nothing able to
	// run it ("for a worker: none connected since ..."); empty otherwise.
	Waiting string
}

// WorkerBytes is a number of bytes on a worker.
type WorkerBytes struct {
	Worker string
	Bytes  int64
}

// A Graph is one submission of a session.
type Graph struct {
	id     int
	src    string
	spec   *spec.Graph // nil for uploads
	chunks *chunk.Graph
	ids    []uint64
	cancel context.CancelFunc
	done   chan struct{}
	start  time.Time

	mu      sync.Mutex
	status  Status
	peaks   map[string]int64 // Status.WorkerPeaks
	states  []core.OpState
	end     time.Time
	err     string
	events  eventLog
	changed chan struct{} // closed at the next event; nil until Events asks

	plan planned // see planview.go

	timings []opTiming         // by key; nil until a report carries one (timing.go)
	moved   map[int32][2]int64 // by key, the bytes a run fetched and spilled, when not 0
	sinceAt map[int32][2]int64 // by key, Since and Stored of the rare report with both (timing.go)

	// specJSON is the JSON form of a graph tiled in stages as submitted:
	// tiling its later stages sets the lengths in the spec's nodes.
	specJSON []byte

	// forgotten says that the full record was dropped (history.go).
	forgotten bool
}

// newGraph makes the graph of cg, whose ops have the chunk IDs ids. A graph
// tiled in stages passes its first; cg runs it (optimized), and its
// outputs after the first.Results carry chunks to the next stage: they are
// not the graph's.
func newGraph(src string, tg *spec.Graph, cg *chunk.Graph, ids []uint64, cancel context.CancelFunc, first *tile.Stage) *Graph {
	if first != nil && !first.Last() {
		cg = &chunk.Graph{Ops: cg.Ops, Outputs: cg.Outputs[:first.Results]}
	}
	g := &Graph{
		src: src, spec: tg, chunks: cg, ids: ids, cancel: cancel,
		done: make(chan struct{}), start: time.Now(),
		states: make([]core.OpState, len(cg.Ops)),
	}
	g.events.start = g.start
	g.status.State = RunningGraph
	g.status.Operands = len(cg.Ops)
	for _, op := range cg.Ops {
		g.status.TotalBytes += int64(op.NBytes())
		g.status.TotalWork += core.OpWork(cg, op)
	}
	if first != nil && !first.Last() {
		g.status.Stage = 1
		g.status.Shapes = outputShapes(tg)
		var err error
		if g.specJSON, err = tg.JSON(); err != nil {
			g.specJSON = []byte("{}\n")
		}
	}
	return g
}

// outputShapes describes the shapes of tg's outputs, "name (?,)".
func outputShapes(tg *spec.Graph) []string {
	var out []string
	for _, o := range tg.Outputs {
		out = append(out, o.Name+" "+tensor.FormatShape(o.Node.Shape))
	}
	return out
}

// stage is the number of stages of g tiled so far.
func (g *Graph) stage() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.status.Stage
}

// next tiles the stage after st with the chunks and probes st made.
func (g *Graph) next(st *tile.Stage, keys [][]uint64, probes []*tensor.Array) (*tile.Stage, error) {
	next, err := st.Next(keys, probes)
	shapes := outputShapes(g.spec)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.status.Stage++
	g.status.Shapes = shapes
	g.mu.Unlock()
	return next, nil
}

// extend adds the ops of a later stage, cg with chunk IDs ids, to g: their
// keys follow the ops g has, and cg's first results outputs are g's. It
// returns the key of cg's first op in g.
func (g *Graph) extend(cg *chunk.Graph, ids []uint64, results int) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	off := len(g.chunks.Ops)
	ops := make([]*chunk.Op, off, off+len(cg.Ops))
	copy(ops, g.chunks.Ops)
	for _, op := range cg.Ops {
		c := *op
		c.Key += off
		c.Inputs = make([]int, len(op.Inputs))
		for i, in := range op.Inputs {
			c.Inputs[i] = in + off
		}
		ops = append(ops, &c)
		g.status.TotalBytes += int64(op.NBytes())
		g.status.TotalWork += core.OpWork(cg, op)
	}
	outs := append([]tensor.TiledTensor(nil), g.chunks.Outputs...)
	for _, o := range cg.Outputs[:results] {
		o.Keys = append([]uint64(nil), o.Keys...)
		for i := range o.Keys {
			o.Keys[i] += uint64(off)
		}
		outs = append(outs, o)
	}
	// In the order the spec fetches them, whichever stage made them.
	order := make(map[string]int, len(g.spec.Outputs))
	for i, o := range g.spec.Outputs {
		order[o.Name] = i
	}
	sort.SliceStable(outs, func(i, j int) bool { return order[outs[i].Name] < order[outs[j].Name] })
	g.chunks = &chunk.Graph{Ops: ops, Outputs: outs}
	g.ids = append(g.ids[:off:off], ids...)
	g.states = append(g.states, make([]core.OpState, len(cg.Ops))...)
	g.status.Operands = len(ops)
	g.wake()
	return off
}

// ID is the graph's number within its session.
func (g *Graph) ID() int { return g.id }

// Spec is the spec text as submitted.
func (g *Graph) Spec() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.src
}

// SpecJSON renders the graph in the spec's JSON form (empty for uploads).
func (g *Graph) SpecJSON() ([]byte, error) {
	g.mu.Lock()
	tg, js, forgotten := g.spec, g.specJSON, g.forgotten
	g.mu.Unlock()
	switch {
	case forgotten:
		return nil, errForgotten
	case tg == nil:
		return []byte("{}\n"), nil
	case js != nil:
		return js, nil
	}
	return tg.JSON()
}

// errForgotten is the error of what a graph no longer keeps.
var errForgotten = errors.New("the graph's record was forgotten (--graph-history)")

// Chunks is the graph's chunk graph. A graph tiled in stages has the ops of
// the stages tiled so far.
func (g *Graph) Chunks() *chunk.Graph {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.chunks
}

// ChunkID is the global chunk ID of op key.
func (g *Graph) ChunkID(key int) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ids[key]
}

// Status returns a snapshot of the graph's state and counters.
func (g *Graph) Status() Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.status
	st.WorkerPeaks = slices.Clone(st.WorkerPeaks) // a forgotten graph's (history.go)
	for w, n := range g.peaks {
		st.WorkerPeaks = append(st.WorkerPeaks, WorkerBytes{w, n})
	}
	slices.SortFunc(st.WorkerPeaks, func(a, b WorkerBytes) int { return strings.Compare(a.Worker, b.Worker) })
	if g.end.IsZero() {
		st.Elapsed = time.Since(g.start)
	} else {
		st.Elapsed = g.end.Sub(g.start)
	}
	return st
}

// Err is why the graph failed; empty unless it did.
func (g *Graph) Err() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Done is closed when the graph has ended.
func (g *Graph) Done() <-chan struct{} { return g.done }

// Wait blocks until the graph has ended or ctx is done, and returns the
// status then.
func (g *Graph) Wait(ctx context.Context) Status {
	select {
	case <-g.done:
	case <-ctx.Done():
	}
	return g.Status()
}

// Cancel asks the graph to stop; Wait tells when it has.
func (g *Graph) Cancel() { g.cancel() }

// Events returns the graph's events from index from on, and a channel that
// is closed when more arrive; ended reports whether the graph has ended (no
// more will come). The events carry their key, state, worker, attempt,
// error and time; the cluster counters are in Status.
func (g *Graph) Events(from int) (evs []core.Event, more <-chan struct{}, ended bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	evs = g.events.from(from)
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return evs, g.changed, g.status.State.Ended()
}

// wake tells the callers of Events that something happened. g.mu is held.
func (g *Graph) wake() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// eventLog is an append-only list of events kept in blocks, so that a
// graph of a million operands grows it without copying it over. An event
// is kept in 12 bytes: its time in microseconds from its block's base (a
// block is begun where a time would not fit), its worker as an index in a
// table of the log's own, its error (and an attempt past 254) in a map of
// the few events that have one; the cluster counters it carried are folded
// into the graph's status as they come. A graph of 10^6 operands logs
// about four events an operand. Events are made whole again when read,
// their times to the microsecond the events file shows.
type eventLog struct {
	start   time.Time
	blocks  []eventSeg
	n       int
	workers []string
	errs    []string
	// The few events with an error (a failure, a note), or an attempt
	// past what a record holds: by index, the error's 1 + index in errs,
	// and the attempt.
	errAt     map[int32]int32
	attemptAt map[int32]int32
}

// An eventSeg holds up to eventBlock events from index first on, their
// times counted from base (nanoseconds after the log's start).
type eventSeg struct {
	first int
	base  int64
	recs  []eventRec
}

// An eventRec is an event in 12 bytes.
type eventRec struct {
	at      int32 // microseconds after the block's base; noTime for none
	key     int32
	worker  uint16 // 1 + index in workers; 0 for none
	attempt uint8  // maxRecAttempt: see eventLog.attemptAt
	// state in the low 4 bits, and above them the phase of a RUNNING
	// event that a worker's report made
	statePhase uint8
}

const (
	eventBlock    = 4096
	maxRecAttempt = math.MaxUint8
	noTime        = math.MinInt32
)

func (l *eventLog) add(ev *core.Event) {
	r := eventRec{at: noTime, key: int32(ev.Key), statePhase: uint8(ev.State)&0xf | uint8(ev.Phase)<<4}
	at := int64(ev.At.Sub(l.start))
	var b *eventSeg
	if nb := len(l.blocks); nb > 0 {
		b = &l.blocks[nb-1]
	}
	if !ev.At.IsZero() && b != nil {
		// Within the block's reach (±35 minutes of its base), or a new
		// block.
		d := at - b.base
		if d < 0 {
			d -= 999 // rounded down, as later times are
		}
		if d /= 1e3; d > noTime && d <= math.MaxInt32 {
			r.at = int32(d)
		}
	}
	if b == nil || len(b.recs) == eventBlock || r.at == noTime && !ev.At.IsZero() {
		base := at
		if ev.At.IsZero() && b != nil {
			base = b.base
		}
		l.blocks = append(l.blocks, eventSeg{first: l.n, base: base, recs: make([]eventRec, 0, eventBlock)})
		b = &l.blocks[len(l.blocks)-1]
		if !ev.At.IsZero() {
			r.at = 0
		}
	}
	if ev.Worker != "" {
		r.worker = uint16(l.worker(ev.Worker) + 1)
	}
	if r.attempt = uint8(min(ev.Attempt, maxRecAttempt)); r.attempt == maxRecAttempt {
		if l.attemptAt == nil {
			l.attemptAt = make(map[int32]int32)
		}
		l.attemptAt[int32(l.n)] = int32(ev.Attempt)
	}
	if ev.Err != "" {
		l.errs = append(l.errs, ev.Err)
		if l.errAt == nil {
			l.errAt = make(map[int32]int32)
		}
		l.errAt[int32(l.n)] = int32(len(l.errs))
	}
	b.recs = append(b.recs, r)
	l.n++
}

// worker returns the index of name in the table of workers, adding it.
func (l *eventLog) worker(name string) int {
	for i, w := range l.workers {
		if w == name {
			return i
		}
	}
	if len(l.workers) == math.MaxUint16-1 {
		l.workers[len(l.workers)-1] = name // a cluster of 65,000 names: keep the log going
		return len(l.workers) - 1
	}
	l.workers = append(l.workers, name)
	return len(l.workers) - 1
}

// from returns the events from index i on.
func (l *eventLog) from(i int) []core.Event {
	if i < 0 {
		i = 0
	}
	if i >= l.n {
		return nil
	}
	out := make([]core.Event, 0, l.n-i)
	// The block holding event i: the last that begins at or before it.
	b0 := sort.Search(len(l.blocks), func(b int) bool { return l.blocks[b].first > i }) - 1
	for b := b0; b < len(l.blocks); b++ {
		blk := &l.blocks[b]
		recs, n := blk.recs, int32(blk.first)
		if b == b0 {
			recs, n = recs[i-blk.first:], int32(i)
		}
		for _, r := range recs {
			ev := core.Event{Key: int(r.key), State: core.OpState(r.statePhase & 0xf), Phase: core.Phase(r.statePhase >> 4), Attempt: int(r.attempt)}
			if r.attempt == maxRecAttempt {
				ev.Attempt = int(l.attemptAt[n])
			}
			if r.at != noTime {
				ev.At = l.start.Add(time.Duration(blk.base + int64(r.at)*1e3))
			}
			if r.worker > 0 {
				ev.Worker = l.workers[r.worker-1]
			}
			if e := l.errAt[n]; e > 0 {
				ev.Err = l.errs[e-1]
			}
			out = append(out, ev)
			n++
		}
	}
	return out
}

// OpStates returns the current state of every operand, by key.
func (g *Graph) OpStates() []core.OpState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]core.OpState(nil), g.states...)
}

func (g *Graph) observe(ev core.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.observeLocked(&ev)
	g.wake()
}

// observeAll records the events of a runner's steps (core.Job.ObserveAll)
// under one lock, and wakes the graph's waiters once for them.
func (g *Graph) observeAll(evs []core.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range evs {
		g.observeLocked(&evs[i])
	}
	g.wake()
}

// observeLocked records ev. g.mu is held.
func (g *Graph) observeLocked(ev *core.Event) {
	if ev.Key >= 0 && ev.Key < len(g.states) {
		prev := g.states[ev.Key]
		g.states[ev.Key] = ev.State
		done := func(s core.OpState) bool { return s == core.Finished || s == core.Freed }
		if prev == core.Running {
			g.status.Running--
		}
		// An op lost with its worker goes back from FINISHED or FREED to be
		// computed again: it counts as finished once, when it is.
		if done(prev) && !done(ev.State) {
			g.status.Finished--
			g.status.Bytes -= int64(g.chunks.Ops[ev.Key].NBytes())
			g.status.Work -= core.OpWork(g.chunks, g.chunks.Ops[ev.Key])
		}
		switch ev.State {
		case core.Running:
			g.status.Running++
		case core.Finished, core.Freed:
			// FREED from READY: an op revived to be made again, let go
			// (its successor's chunk was taken back from a worker).
			if !done(prev) {
				g.status.Finished++
				g.status.Bytes += int64(g.chunks.Ops[ev.Key].NBytes())
				g.status.Work += core.OpWork(g.chunks, g.chunks.Ops[ev.Key])
			}
		case core.Fatal:
			g.status.Failed++
		}
	}
	g.status.PeakChunks = max(g.status.PeakChunks, ev.LiveChunks)
	g.status.PeakBytes = max(g.status.PeakBytes, ev.LiveBytes)
	if ev.Worker != "" && ev.WorkerBytes > g.peaks[ev.Worker] {
		if g.peaks == nil {
			g.peaks = make(map[string]int64)
		}
		g.peaks[ev.Worker] = ev.WorkerBytes
	}
	g.status.TransferBytes = max(g.status.TransferBytes, ev.TransferBytes)
	g.status.SpilledBytes = max(g.status.SpilledBytes, ev.SpilledBytes)
	g.noteTiming(ev)
	g.events.add(ev)
}

// rerun notes that the graph runs again (why): the operands that failed
// in the run before are not failed any more.
func (g *Graph) rerun(why string) {
	g.observe(core.Event{Key: core.NoteKey, At: time.Now(), Err: why})
	g.mu.Lock()
	g.status.Failed = 0
	g.mu.Unlock()
}

// setWaiting records what the graph waits for (see core.Job.Waiting).
func (g *Graph) setWaiting(why string) {
	g.mu.Lock()
	g.status.Waiting = why
	g.wake()
	g.mu.Unlock()
}

// endOf is the state a graph ends in when its run returned err, and the
// error it reports then ("" unless it failed).
func endOf(err error) (GraphState, string) {
	switch {
	case err == nil:
		return Succeeded, ""
	case errors.Is(err, context.Canceled):
		return CancelledGraph, ""
	default:
		return Failed, err.Error()
	}
}

// finish ends the graph as its run returned err: whoever waits on it
// (Wait, Done) sees it ended from here on.
func (g *Graph) finish(err error) {
	state, msg := endOf(err)
	g.mu.Lock()
	g.status.Waiting = ""
	g.status.State = state
	if state == Failed {
		g.err = msg
	}
	g.status.Running = 0
	g.end = time.Now()
	g.wake()
	g.mu.Unlock()
	close(g.done)
}

// A Tensor is an output kept by a session.
type Tensor struct {
	session *Session
	tiled   tensor.TiledTensor // Keys are global chunk IDs
	graph   int                // the graph that made it; 0 for an upload
	lin     *Lineage           // how its chunks are made again; nil for an upload
}

// Lineage is how the tensor's chunks are made again when lost; nil for an
// upload.
func (t *Tensor) Lineage() *Lineage { return t.lin }

// Name is the tensor's name in its session.
func (t *Tensor) Name() string { return t.tiled.Name }

// Tiled describes the tensor's chunks; Keys are global chunk IDs.
func (t *Tensor) Tiled() *tensor.TiledTensor { return &t.tiled }

// Graph is the number of the graph that made the tensor; 0 for an upload.
func (t *Tensor) Graph() int { return t.graph }

// NBytes is the size of the tensor's data.
func (t *Tensor) NBytes() int { return tensor.NumElements(t.tiled.Shape) * t.tiled.DType.Size() }

// Fetch gathers the whole tensor into one array.
func (t *Tensor) Fetch(ctx context.Context) (*tensor.Array, error) {
	parts := make([]*tensor.Array, len(t.tiled.Keys))
	var releases releases
	defer releases.run()
	for i, id := range t.tiled.Keys {
		a, release, err := t.session.engine.runner.Fetch(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("fetch %s chunk %d: %w", t.tiled.Name, i, err)
		}
		releases = append(releases, release)
		parts[i] = a
	}
	return tensor.Gather(&t.tiled, parts)
}

// Chunk returns the tensor's chunk i (C order over its chunk grid) and
// release, which gives back what holds it (see Runner.Fetch): a reader
// streams a tensor chunk by chunk through it without gathering it.
func (t *Tensor) Chunk(ctx context.Context, i int) (*tensor.Array, func(), error) {
	if i < 0 || i >= len(t.tiled.Keys) {
		return nil, nil, fmt.Errorf("tensor %s has no chunk %d of %d", t.tiled.Name, i, len(t.tiled.Keys))
	}
	a, release, err := t.session.engine.runner.Fetch(ctx, t.tiled.Keys[i])
	if err != nil {
		return nil, nil, fmt.Errorf("fetch %s chunk %d: %w", t.tiled.Name, i, err)
	}
	return a, release, nil
}

// ChunkWorker names the worker holding the tensor's chunk i, "" if none
// does (lost, or not made yet).
func (t *Tensor) ChunkWorker(i int) string {
	if i < 0 || i >= len(t.tiled.Keys) {
		return ""
	}
	return t.session.engine.runner.Where(t.tiled.Keys[i])
}

// FetchIndex gathers the elements at the cross product of per-axis indices
// sel (see tensor.GatherIndex), fetching only the chunks that hold them.
func (t *Tensor) FetchIndex(ctx context.Context, sel [][]int) (*tensor.Array, error) {
	var releases releases
	defer releases.run()
	return tensor.GatherIndex(&t.tiled, sel, func(i int) (*tensor.Array, error) {
		a, release, err := t.session.engine.runner.Fetch(ctx, t.tiled.Keys[i])
		if err != nil {
			return nil, fmt.Errorf("fetch %s chunk %d: %w", t.tiled.Name, i, err)
		}
		releases = append(releases, release)
		return a, nil
	})
}

// releases are the release functions of fetched chunks, run once what was
// copied from them is made.
type releases []func()

func (r releases) run() {
	for _, f := range r {
		f()
	}
}
