package sim

import (
	"container/heap"

	"fmt"
	"marsfs/exec/core"
	"math/rand/v2"
)

// Config describes one simulated run.
type Config struct {
	Seed       uint64
	Schedulers int // 1 to 5
	Workers    int // up to 1,000
	Slots      int // a worker's slots; 2 when 0
	Sessions   int // clients, one session each
	Graphs     int // specs each client submits
	// Scale multiplies the specs' sizes (1 when 0).
	Scale int
	// Faults turns the fault schedule on: until FaultsUntil, a fault
	// about every FaultEvery.
	Faults      bool
	FaultsUntil int64
	FaultEvery  int64
	// DetectAfter is the silence after which membership declares a
	// scheduler or worker failed; 5 s when 0.
	DetectAfter int64
	// LeaseTerm is custody's lease; 2 s when 0.
	LeaseTerm int64
	// Deadline ends the run: what still waits then waits forever.
	Deadline int64
	// Think bounds the time a client waits between two requests (drawn
	// up to it; none when 0), so that the work spans the faults.
	Think int64
	// UnitOps is core.Options.UnitOps (0: the scheduler's 256).
	UnitOps int
	// Specs, when not empty, replace the clients' specs: client i
	// submits Specs[(g-1+i) % len] as its graph g.
	Specs []string
	// Assign and Order, when not nil, replace the Core's initial
	// assignment and run order (exec/plan's), to compare policies.
	Assign core.AssignFunc
	Order  core.OrderFunc
	// Trace, when not nil, is told what happens.
	Trace func(at int64, what string)
	// NoWorkerFence has the workers carry out every claim, free and
	// submission whatever epoch it carries, to show what their fence
	// guards against (TestWorkerFenceNeeded).
	NoWorkerFence bool
}

const (
	ms = int64(1e6)
	s  = int64(1e9)
)

func (c *Config) defaults() {
	if c.Schedulers == 0 {
		c.Schedulers = 1
	}
	if c.Workers == 0 {
		c.Workers = 3
	}
	if c.Slots == 0 {
		c.Slots = 2
	}
	if c.Sessions == 0 {
		c.Sessions = 2
	}
	if c.Graphs == 0 {
		c.Graphs = 2
	}
	if c.Scale == 0 {
		c.Scale = 1
	}
	if c.DetectAfter == 0 {
		c.DetectAfter = 5 * s
	}
	if c.LeaseTerm == 0 {
		c.LeaseTerm = 2 * s
	}
	if c.FaultEvery == 0 {
		c.FaultEvery = 2 * s
	}
	if c.FaultsUntil == 0 {
		c.FaultsUntil = 30 * s
	}
	if c.Deadline == 0 {
		c.Deadline = c.FaultsUntil + 120*s
	}
	if c.UnitOps == 0 {
		c.UnitOps = 256
	}
}

// A World is one simulated cluster.
type World struct {
	cfg Config
	rng *rand.Rand
	// frng draws the faults, apart from rng (latencies, fsyncs, think
	// times): a change to what the machines send leaves a seed's faults
	// as they were, so that a regression seed keeps its scenario.
	frng    *rand.Rand
	now     int64
	q       events
	seq     uint64
	scheds  []*schedNode
	workers []*workerNode
	byName  map[string]*node
	wmap    map[string]*workerNode
	clients []*client
	err     error
	// open holds the first finding of a kind not yet fixed (a client
	// that never finished): reported, and failed on only with -strict.
	open     error
	steps    int
	restarts int
	epochs   map[[2]uint64]string // the home of each session's epoch
	stats    Stats
}

// Stats are what a run measured.
type Stats struct {
	Steps          int
	End            int64 // when the last client finished
	Makespan       int64 // sum over graphs of submit-to-end, and the longest
	LongestGraph   int64
	Graphs         int
	BytesMoved     int64 // between workers, for inputs and copies
	Faults         []string
	Takeovers      int
	SubmitAckNs    []int64 // each submit: from the request that was acknowledged to its acknowledgement
	WriteNs        []int64 // each write: from the client's first request to its acknowledgement, retries and moves included
	WorkerBusy     map[string]int64
	Acked, Refused int
	// UploadsLost counts the uploads whose every copy died with its
	// worker before another was made: beyond what marsfs promises.
	UploadsLost int
	// GraphsFailed counts the graphs whose Core gave up under the faults.
	GraphsFailed int
	// Open is the first finding of a kind still open, if any.
	Open error
	// PeakLive is the most chunks of one job alive at once, and PeakLiveBytes
	// their bytes.
	PeakLive      int
	PeakLiveBytes int64
	// CoreNs is the real time this process spent in the Cores (New and
	// Step), and CoreOps the operands of the jobs they ran.
	CoreNs  int64
	CoreOps int
}

// A node is a process: a scheduler or a worker.
type node struct {
	name   string
	alive  bool
	paused bool
	cut    bool
	inc    int      // incarnation: a restart makes a new one
	held   []func() // what came while paused
}

type event struct {
	at  int64
	seq uint64
	fn  func()
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if e[i].at != e[j].at {
		return e[i].at < e[j].at
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// at runs fn at time t.
func (w *World) at(t int64, fn func()) {
	w.seq++
	heap.Push(&w.q, event{at: max(t, w.now), seq: w.seq, fn: fn})
}

// on runs fn on node n after d, if n is still the same incarnation and
// alive then; while it is paused, fn waits for it to go on.
func (w *World) on(n *node, d int64, fn func()) {
	inc := n.inc
	w.at(w.now+d, func() { w.run(n, inc, fn) })
}

func (w *World) run(n *node, inc int, fn func()) {
	if !n.alive || n.inc != inc {
		return
	}
	if n.paused {
		n.held = append(n.held, fn)
		return
	}
	fn()
}

// send carries a message of nbytes from a to b, running deliver on b; it
// is lost when either end is cut off (at sending or arriving) or b is
// killed meanwhile. Latency is 100-200 µs and bandwidth 1.25 GB/s.
func (w *World) send(a, b *node, nbytes int64, deliver func()) {
	if a.cut || b.cut {
		return
	}
	d := 100*1000 + w.rng.Int64N(100*1000) + nbytes*4/5
	inc := b.inc
	w.at(w.now+d, func() {
		if a.cut || b.cut {
			return
		}
		w.run(b, inc, deliver)
	})
}

func (w *World) trace(format string, args ...any) {
	if w.cfg.Trace != nil {
		w.cfg.Trace(w.now, fmt.Sprintf(format, args...))
	}
}

// stall records a finding of a kind still open (see World.open).
func (w *World) stall(format string, args ...any) {
	if w.open == nil {
		w.open = fmt.Errorf("seed %d at %.3fs: %s", w.cfg.Seed, float64(w.now)/1e9, fmt.Sprintf(format, args...))
	}
}

// fail records the first invariant broken.
func (w *World) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("seed %d at %.3fs: %s", w.cfg.Seed, float64(w.now)/1e9, fmt.Sprintf(format, args...))
	}
}

// New builds the cluster of cfg.
func New(cfg Config) *World {
	cfg.defaults()
	w := &World{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), frng: rand.New(rand.NewPCG(cfg.Seed^0xf4a7, cfg.Seed)), byName: map[string]*node{}, wmap: map[string]*workerNode{}}
	w.stats.WorkerBusy = map[string]int64{}
	for i := range cfg.Workers {
		wk := newWorker(w, fmt.Sprintf("w%04d", i))
		w.workers = append(w.workers, wk)
		w.wmap[wk.name] = wk
		w.byName[wk.name] = &wk.node
	}
	for i := range cfg.Schedulers {
		name := "scheduler"
		if i > 0 {
			name = fmt.Sprintf("scheduler-%d", i)
		}
		sn := newSched(w, name)
		w.scheds = append(w.scheds, sn)
		w.byName[name] = &sn.node
	}
	for _, sn := range w.scheds {
		sn.boot(nil)
	}
	for i := range cfg.Sessions {
		w.clients = append(w.clients, newClient(w, i+1))
	}
	return w
}

// Run runs the world to its end and returns the first invariant broken.
// Stats.Open is the first finding of a kind still open.
func (w *World) Run() (Stats, error) {
	for _, c := range w.clients {
		c := c
		w.at(s+int64(c.id)*7*ms, c.next)
	}
	for _, sn := range w.scheds {
		sn := sn
		w.at(100*ms, func() { sn.tick() })
	}
	w.at(500*ms, w.membership)
	if w.cfg.Faults {
		w.at(w.cfg.FaultEvery, w.fault)
	}
	for w.q.Len() > 0 && w.err == nil {
		e := heap.Pop(&w.q).(event)
		if e.at > w.cfg.Deadline {
			break
		}
		w.now = e.at
		e.fn()
		w.steps++
		if w.err == nil {
			w.check()
		}
		if w.done() {
			break
		}
	}
	if w.err == nil {
		w.final()
	}
	w.stats.Steps = w.steps
	w.stats.Open = w.open
	return w.stats, w.err
}

// done reports whether every client finished and the faults are over.
func (w *World) done() bool {
	if w.cfg.Faults && w.now < w.cfg.FaultsUntil {
		return false
	}
	for _, c := range w.clients {
		if !c.finished {
			return false
		}
	}
	if w.stats.End == 0 {
		w.stats.End = w.now
	}
	return true
}

// liveScheds lists the schedulers alive, in order.
func (w *World) liveScheds() []*schedNode {
	var l []*schedNode
	for _, sn := range w.scheds {
		if sn.alive {
			l = append(l, sn)
		}
	}
	return l
}

func (w *World) sched(name string) *schedNode {
	for _, sn := range w.scheds {
		if sn.name == name {
			return sn
		}
	}
	return nil
}

func (w *World) worker(name string) *workerNode { return w.wmap[name] }
