package worker

import (
	"bufio"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"marsfs/cluster"
	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
)

// Config configures a worker process.
type Config struct {
	Name string // unique in the cluster; "worker-HOST-PID" when empty
	// Listen is the host:port of the control and chunk service; port 0
	// picks a free port, and "127.0.0.1:0" is used when empty. When the host
	// is unspecified, the worker advertises the Gossip host or 127.0.0.1.
	Listen string
	Gossip string   // memberlist bind host:port; "127.0.0.1:0" when empty
	Join   []string // gossip addresses to join through (the scheduler's)
	Slots  int      // kernels run at once; GOMAXPROCS when <= 0
	// Mem is the memory quota: an op is admitted to run only when its
	// inputs and output fit beside those of the ops running (and, with a
	// heap store, the chunks held); the others wait in priority order. An
	// op that could never fit fails for good with an error naming the
	// sizes. 0 means no bound.
	Mem int64
	// SecretKey is the cluster key (see DeriveKey): it encrypts gossip and
	// authenticates every connection to the worker's service. Without it
	// the worker listens on loopback only.
	SecretKey []byte
	Fast      bool      // cluster timings for tests (see cluster.Config)
	LogOutput io.Writer // memberlist's log; discarded when nil
	Store     Store     // where chunks live; a MemStore when nil
	// MaxChunk is the largest chunk accepted from the network; 16 GiB when 0.
	MaxChunk int64
	// NoMap fetches every input chunk over TCP, also from workers on this
	// host whose chunks are in shared memory and could be mapped.
	NoMap bool
}

// A Worker runs the ops the scheduler submits and serves its chunks to the
// scheduler and to the other workers.
type Worker struct {
	cfg   Config
	name  string
	addr  string
	store Store
	ln    net.Listener
	node  *cluster.Node
	pool  *wire.Pool      // connections to other workers' chunk services
	ctx   context.Context // done when the worker closes
	stop  context.CancelFunc
	wg    sync.WaitGroup

	sending atomic.Int64 // chunk frames being sent
	spilled atomic.Int64 // the store's spilled bytes last reported
	mapped  atomic.Int64 // bytes of input chunks mapped from workers on this host
	remote  sync.Map     // names of workers found on other hosts

	mu      sync.Mutex
	queue   taskQueue
	running map[wire.RunKey]*task
	runq    chan *task             // started tasks, for the runners
	owner   map[uint64]wire.RunKey // the latest run submitted for each chunk ID
	uses    map[uint64][]int       // ranks of the tasks reading each chunk held (see noteUses)
	// made names the control connection each chunk held was made for (nil
	// for an upload). The scheduler forgets a worker's chunks when their
	// connection breaks, so dropConn frees them: nobody else can name them.
	made   map[uint64]*wire.Conn
	nctl   int // control connections open
	conns  map[net.Conn]bool
	closed bool
}

type task struct {
	wire.RunKey
	prio      int
	seq       uint64 // submission order, to break priority ties
	op        *chunk.Op
	id        uint64
	inputs    []core.Location
	addrs     []string
	ctl       *wire.Conn
	ctx       context.Context // of the run, once started
	cancel    context.CancelFunc
	cancelled bool
	index     int      // in the queue, -1 when not queued
	pins      []func() // release the inputs read from the store
	// rest holds the ops of t's dispatch unit that run after t, in order,
	// in the slot that runs t.
	rest []*task
	// flush: others wait for t's chunk, so its report goes out at once.
	flush bool
}

// taskQueue is a heap of tasks, lowest priority value first.
type taskQueue []*task

func (q taskQueue) Len() int           { return len(q) }
func (q taskQueue) Less(i, j int) bool { return q.less(q[i], q[j]) }

// less orders tasks by priority, then by submission.
func (taskQueue) less(a, b *task) bool {
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	return a.seq < b.seq
}
func (q taskQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *taskQueue) Push(x any) { t := x.(*task); t.index = len(*q); *q = append(*q, t) }
func (q *taskQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	t.index = -1
	return t
}

// Start starts a worker: it listens, joins the cluster as a worker and
// serves until Close.
func Start(ctx context.Context, cfg Config) (*Worker, error) {
	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	w, err := New(cfg)
	if err != nil {
		return nil, err
	}
	cfg = w.cfg
	fail := func(err error) (*Worker, error) {
		w.Close()
		return nil, err
	}
	if err := wire.CheckListen("worker "+cfg.Name, listen, cfg.SecretKey); err != nil {
		return fail(err)
	}
	if cfg.Gossip != "" {
		if err := wire.CheckListen("worker "+cfg.Name+" gossip", cfg.Gossip, cfg.SecretKey); err != nil {
			return fail(err)
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fail(fmt.Errorf("worker %s: %w", cfg.Name, err))
	}
	w.ln = ln
	w.addr = advertise(ln.Addr().(*net.TCPAddr), cfg.Gossip)
	node, err := cluster.Join(ctx, cluster.Config{
		Name: cfg.Name, BindAddr: cfg.Gossip, Join: cfg.Join, SecretKey: cfg.SecretKey, Fast: cfg.Fast, LogOutput: cfg.LogOutput,
		Meta: cluster.Meta{Role: cluster.RoleWorker, Addr: w.addr, Slots: cfg.Slots, PID: os.Getpid()},
	})
	if err != nil {
		return fail(err)
	}
	w.node = node
	w.wg.Add(1)
	go w.accept()
	return w, nil
}

// New returns a worker that listens on no port and joins no cluster: it
// serves the control connections handed to ServeControl and holds its
// chunks for a scheduler in the same process (see sched.NewLocal), so its
// inputs must all be its own chunks.
func New(cfg Config) (*Worker, error) {
	if cfg.Slots <= 0 {
		cfg.Slots = runtime.GOMAXPROCS(0)
	}
	if cfg.MaxChunk <= 0 {
		cfg.MaxChunk = 16 << 30
	}
	if cfg.Mem < 0 {
		return nil, fmt.Errorf("worker: negative memory bound %d", cfg.Mem)
	}
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = fmt.Sprintf("worker-%s-%d", host, os.Getpid())
	}
	w := &Worker{cfg: cfg, name: cfg.Name, store: cfg.Store, pool: wire.NewPool(cfg.MaxChunk, cfg.SecretKey),
		running: make(map[wire.RunKey]*task), owner: make(map[uint64]wire.RunKey), made: make(map[uint64]*wire.Conn), conns: make(map[net.Conn]bool)}
	if w.store == nil {
		w.store = NewMemStore()
	}
	w.ctx, w.stop = context.WithCancel(context.Background())
	w.runq = make(chan *task, cfg.Slots)
	w.wg.Add(cfg.Slots)
	for range cfg.Slots {
		go w.runner()
	}
	return w, nil
}

// ServeControl serves a scheduler's control connection until it closes or
// the worker does.
func (w *Worker) ServeControl(c net.Conn) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		c.Close()
		return
	}
	w.conns[c] = true
	w.wg.Add(1)
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.conns, c)
		w.mu.Unlock()
		c.Close()
		w.wg.Done()
	}()
	w.serveControl(c, bufio.NewReader(c))
}

// Put stores a as chunk id, as an upload: no job made it, and it stays
// until the scheduler frees it.
func (w *Worker) Put(id uint64, a *tensor.Array) error {
	if err := w.store.Put(id, a); err != nil {
		return err
	}
	w.mu.Lock()
	w.made[id] = nil
	w.mu.Unlock()
	return nil
}

// advertise returns the address others dial to reach a listener at a.
func advertise(a *net.TCPAddr, gossip string) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
		if h, _, err := net.SplitHostPort(gossip); err == nil && h != "" {
			if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
				host = h
			}
		}
	}
	return net.JoinHostPort(host, fmt.Sprint(a.Port))
}

// Run runs a worker until ctx is done, then leaves the cluster and
// stops, waiting for every goroutine it started.
func Run(ctx context.Context, cfg Config) error {
	w, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return w.Close()
}

// Name is the worker's name in the cluster.
func (w *Worker) Name() string { return w.name }

// Addr is the address of the worker's control and chunk service.
func (w *Worker) Addr() string { return w.addr }

// GossipAddr is the worker's memberlist address ("" for a worker of New).
func (w *Worker) GossipAddr() string {
	if w.node == nil {
		return ""
	}
	return w.node.GossipAddr()
}

// Store is the worker's chunk store.
func (w *Worker) Store() Store { return w.store }

// Close leaves the cluster, interrupts the running kernels, closes every
// connection and waits for the worker's goroutines to end.
func (w *Worker) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	var err error
	if w.node != nil {
		err = w.node.Leave(time.Second)
	}
	w.stop()
	if w.ln != nil {
		w.ln.Close()
	}
	w.mu.Lock()
	for c := range w.conns {
		c.Close()
	}
	close(w.runq) // pump starts nothing once closed
	w.mu.Unlock()
	w.wg.Wait()
	w.pool.Close()
	return err
}

// Status describes the worker as "key value" lines.
func (w *Worker) Status() string {
	w.mu.Lock()
	running, queued, quota := len(w.running), len(w.queue), w.quotaUsed()
	w.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "name %s\naddr %s\npid %d\nslots %d\nprocs %d\nrunning %d\nqueued %d\nchunks %d\nbytes %d\nmem %d\nsending %d\n",
		w.name, w.addr, os.Getpid(), w.cfg.Slots, runtime.GOMAXPROCS(0), running, queued, w.store.Len(), w.store.Bytes(), w.cfg.Mem, w.sending.Load())
	fmt.Fprintf(&b, "quota_used %d\nquota_limit %d\nmapped_bytes %d\n", quota, w.cfg.Mem, w.mapped.Load())
	// A store that knows more of itself (shared memory, spill) says so.
	if st, ok := w.store.(interface{ WriteStatus(io.Writer) error }); ok {
		st.WriteStatus(&b)
	}
	return b.String()
}

func (w *Worker) accept() {
	defer w.wg.Done()
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			c.Close()
			return
		}
		w.conns[c] = true
		w.wg.Add(1)
		w.mu.Unlock()
		go func() {
			defer w.wg.Done()
			w.serve(c)
			w.mu.Lock()
			delete(w.conns, c)
			w.mu.Unlock()
			c.Close()
		}()
	}
}

func (w *Worker) serve(c net.Conn) {
	br := bufio.NewReader(c)
	kind, err := wire.ServerAuth(c, br, w.cfg.SecretKey)
	if err != nil {
		return
	}
	switch kind {
	case wire.ConnControl:
		w.serveControl(c, br)
	case wire.ConnFetch:
		bw := bufio.NewWriter(c)
		var id [8]byte
		for {
			if _, err := io.ReadFull(br, id[:]); err != nil {
				return
			}
			a, ok := w.store.Get(wire.GetID(id[:]))
			if ok {
				w.sending.Add(1)
				err = w.sendChunk(bw, a)
				w.sending.Add(-1)
			} else {
				err = wire.WriteErr(bw, fmt.Sprintf("worker %s holds no chunk %d", w.name, wire.GetID(id[:])))
			}
			// A client may ask for several chunks at once: they are
			// answered together.
			if err != nil || br.Buffered() < len(id) && bw.Flush() != nil {
				return
			}
		}
	case wire.ConnLocate:
		w.serveLocate(c, br)
	case wire.ConnPut:
		bw := bufio.NewWriter(c)
		var id [8]byte
		for {
			if _, err := io.ReadFull(br, id[:]); err != nil {
				return
			}
			a, err := wire.ReadChunk(br, w.cfg.MaxChunk)
			if err != nil {
				wire.WriteErr(bw, err.Error())
				bw.Flush()
				return
			}
			if err := w.Put(wire.GetID(id[:]), a); err != nil {
				err = wire.WriteErr(bw, err.Error())
			} else {
				err = bw.WriteByte(0)
			}
			if err != nil || bw.Flush() != nil {
				return
			}
		}
	}
}

func (w *Worker) serveControl(c net.Conn, br *bufio.Reader) {
	cc := wire.NewConn(c)
	dec := wire.NewDecoder(br)
	w.mu.Lock()
	w.nctl++
	w.mu.Unlock()
	defer cc.Close()
	defer w.dropConn(cc)
	var seq uint64
	var tasks []task
	var unit []*task // a dispatch unit being received
	want := 0        // its size
	for {
		var m wire.Msg
		if err := dec.Next(&m); err != nil {
			return
		}
		if len(unit) > 0 && m.Kind != wire.MsgSubmit {
			return // a unit cut short: the scheduler is out of step
		}
		switch m.Kind {
		case wire.MsgSubmit:
			if m.Op == nil || len(m.Inputs) != len(m.Op.Inputs) || len(m.Addrs) != len(m.Inputs) {
				cc.Send(&wire.Msg{Kind: wire.MsgFailed, Job: m.Job, Key: m.Key, Attempt: m.Attempt, Err: "malformed submit"})
				continue
			}
			seq++
			t := &wire.Take(&tasks, 1)[0] // cut from a slab, like the decoder's
			*t = task{RunKey: wire.RunKey{Job: m.Job, Key: m.Key, Attempt: m.Attempt}, prio: m.Priority, seq: seq, op: m.Op, id: m.ID,
				inputs: m.Inputs, addrs: m.Addrs, ctl: cc, index: -1, flush: m.Flush}
			if len(unit) == 0 && m.Unit > 1 {
				want = m.Unit
				unit = make([]*task, 0, min(want, 1024))
			}
			if want > 0 {
				if unit = append(unit, t); len(unit) < want {
					continue
				}
				ops := unit
				unit, want = nil, 0
				// An op the quota can never admit fails alone; the unit's
				// ops that read it fail when they find no input.
				kept := ops[:0]
				for _, u := range ops {
					if err := w.refuse(u); err != nil {
						cc.Send(&wire.Msg{Kind: wire.MsgFailed, Job: u.Job, Key: u.Key, Attempt: u.Attempt, ID: u.id, Err: err.Error(), Final: true})
						continue
					}
					kept = append(kept, u)
				}
				if len(kept) == 0 {
					continue
				}
				for i := range kept {
					kept[i].rest = kept[i+1:]
				}
				t = kept[0]
			} else if err := w.refuse(t); err != nil {
				cc.Send(&wire.Msg{Kind: wire.MsgFailed, Job: m.Job, Key: m.Key, Attempt: m.Attempt, ID: m.ID, Err: err.Error(), Final: true})
				continue
			}
			w.mu.Lock()
			w.owner[t.id] = t.RunKey
			for _, r := range t.rest {
				w.owner[r.id] = r.RunKey
			}
			heap.Push(&w.queue, t)
			w.noteUses(t, true)
			for _, r := range t.rest {
				w.noteUses(r, true)
			}
			w.pump()
			w.mu.Unlock()
		case wire.MsgCancel:
			w.cancel(wire.RunKey{Job: m.Job, Key: m.Key, Attempt: m.Attempt})
		case wire.MsgFree:
			w.mu.Lock()
			for _, id := range m.IDs {
				w.forget(id)
			}
			w.mu.Unlock()
		case wire.MsgStatus:
			cc.Send(&wire.Msg{Kind: wire.MsgStatusReply, Seq: m.Seq, Text: w.Status()})
		}
	}
}

// dropConn cancels the tasks submitted over a control connection that closed:
// nobody is left to hear of their results. It frees the chunks made for it,
// and once no control connection is left, every chunk held: a scheduler
// whose connection broke has forgotten them (it recomputes what it still
// needs), and a scheduler that died cannot free them.
func (w *Worker) dropConn(cc *wire.Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nctl--
	for id, by := range w.made {
		if by == cc || w.nctl == 0 {
			w.forget(id)
		}
	}
	kept := w.queue[:0]
	for _, t := range w.queue {
		if t.ctl != cc {
			t.index = len(kept)
			kept = append(kept, t)
		} else {
			w.disown(t)
			for _, r := range t.rest {
				w.disown(r)
			}
		}
	}
	clear(w.queue[len(kept):])
	w.queue = kept
	heap.Init(&w.queue)
	for _, t := range w.running {
		if t.ctl == cc {
			t.cancelled = true
			t.cancel()
			for _, r := range t.rest {
				if !r.cancelled {
					r.cancelled = true
					w.disown(r)
				}
			}
		}
	}
}

// forget drops the chunk held under id. w.mu is held.
func (w *Worker) forget(id uint64) {
	delete(w.made, id)
	w.store.Delete(id)
}

func (w *Worker) cancel(k wire.RunKey) {
	w.mu.Lock()
	var dropped *task
	if t, ok := w.running[k]; ok {
		t.cancelled = true
		t.cancel()
	} else if dropped = w.dropQueued(k); dropped == nil {
		// An op of a unit waiting behind another: its slot skips it.
		for _, t := range w.running {
			if r := unitMember(t, k); r != nil && !r.cancelled {
				r.cancelled = true
				w.disown(r)
				dropped = r
			}
		}
	}
	w.mu.Unlock()
	if dropped != nil {
		dropped.ctl.Send(&wire.Msg{Kind: wire.MsgCancelled, Job: k.Job, Key: k.Key, Attempt: k.Attempt, ID: dropped.id})
	}
}

// dropQueued removes the op k waits in the queue, alone, leading its unit
// (the unit's next op then leads it) or within it, and returns its task.
// w.mu is held.
func (w *Worker) dropQueued(k wire.RunKey) *task {
	for _, t := range w.queue {
		if t.RunKey == k {
			heap.Remove(&w.queue, t.index)
			w.disown(t)
			if len(t.rest) > 0 {
				next := t.rest[0]
				heap.Push(&w.queue, next)
			}
			return t
		}
		if r := unitMember(t, k); r != nil && !r.cancelled {
			r.cancelled = true
			w.disown(r)
			return r
		}
	}
	return nil
}

// unitMember returns the op k among those of t's unit after t, or nil.
func unitMember(t *task, k wire.RunKey) *task {
	for _, r := range t.rest {
		if r.RunKey == k {
			return r
		}
	}
	return nil
}

// disown ends the claim of task t, dropped from the queue, on its chunk: a
// chunk an earlier run left under its ID is stale. w.mu is held.
func (w *Worker) disown(t *task) {
	w.noteUses(t, false)
	if w.owner[t.id] == t.RunKey {
		delete(w.owner, t.id)
		w.forget(t.id)
	}
}

// pump starts queued tasks while slots and memory allow. w.mu is held.
func (w *Worker) pump() {
	for len(w.queue) > 0 && len(w.running) < w.cfg.Slots && !w.closed {
		t := w.queue[0]
		if !w.admit(t) {
			return
		}
		heap.Pop(&w.queue)
		t.ctx, t.cancel = context.WithCancel(w.ctx)
		w.running[t.RunKey] = t
		w.runq <- t // never blocks: it holds at most Slots tasks
	}
}

// runner runs the tasks pump starts until the worker closes. Slots runners
// live as long as the worker, so that a task does not pay for a goroutine
// and the growth of its stack.
//
// The ops of a dispatch unit run one after the other in the slot, and their
// reports go out together when the unit ends, or every reportEvery while it
// runs: one message to the scheduler for many ops. The report of an op whose
// chunk others wait for (and those before it) goes out within soonWait,
// most often with the unit's end (see ctlConn.sendSoon). Only the first op
// of a run of a unit reports its start.
func (w *Worker) runner() {
	defer w.wg.Done()
	var reports []*wire.Msg
	var slab []wire.Msg // what reports are cut from: one allocation for many
	for t := range w.runq {
		ctl, since := t.ctl, time.Now()
		for first := true; t != nil; first = false {
			ran := t
			m := &wire.Take(&slab, 1)[0]
			var next, rest *task
			*m, next, rest = w.run(ran.ctx, ran, first)
			reports = append(reports, m)
			// The unit's end goes out now; when it yields its slot, or
			// others wait for ran's chunk, soon (see ctlConn.sendSoon).
			now := next == nil && rest == nil || time.Since(since) >= reportEvery
			if now || ran.flush || rest != nil {
				w.report(ctl, reports, !now)
				clear(reports)
				reports, since = reports[:0], time.Now()
			}
			if rest != nil {
				// The unit yields its slot: it goes back to the queue
				// only now, so that no other slot reports its next op
				// before the ops before it.
				w.mu.Lock()
				heap.Push(&w.queue, rest)
				w.pump()
				w.mu.Unlock()
			}
			t = next
		}
	}
}

// reportEvery bounds how long the reports of a unit's ops wait to go out.
const reportEvery = time.Millisecond

// report sends the reports of a slot's ops, now or soon. If the scheduler
// is gone, it will never free the chunks they made: they go.
func (w *Worker) report(cc *wire.Conn, ms []*wire.Msg, soon bool) {
	var err error
	if soon {
		err = cc.SendSoon(ms...)
	} else {
		err = cc.SendAll(ms)
	}
	if err == nil {
		return
	}
	w.mu.Lock()
	for _, m := range ms {
		if m.Kind != wire.MsgDone {
			continue
		}
		if _, again := w.owner[m.ID]; !again {
			w.forget(m.ID)
		}
	}
	w.mu.Unlock()
}

// run runs task t and returns the report of how it ended. When t's unit has
// more ops to run, it returns the next too: already counted as running in
// t's slot, or, when a more urgent op waits, as rest, for the queue. first
// says whether t starts the slot's run.
func (w *Worker) run(ctx context.Context, t *task, first bool) (report wire.Msg, next, rest *task) {
	if first {
		// It waits for the reports of the unit's first ops, to share their
		// frame or be dropped with its end.
		t.ctl.SendSoon(&wire.Msg{Kind: wire.MsgStarted, Job: t.Job, Key: t.Key, Attempt: t.Attempt})
	}
	ctx, buf := withOutBuf(ctx, w.store, t.op)
	defer buf.drop() // unless stored
	out, err := w.compute(ctx, t)
	w.mu.Lock()
	delete(w.running, t.RunKey)
	w.noteUses(t, false)
	cancelled := t.cancelled
	// Only the latest run of an op here may touch its chunk: an earlier
	// one, cancelled but still running, must not replace or drop it.
	mine := w.owner[t.id] == t.RunKey
	if mine {
		delete(w.owner, t.id)
		if err == nil && !cancelled {
			if err = buf.store(w.store, t.id, out); err == nil {
				w.made[t.id] = t.ctl
			}
		} else {
			w.forget(t.id) // what an earlier run left is stale
		}
	}
	for i, r := range t.rest {
		if !r.cancelled && !w.closed {
			next = r
			next.rest = t.rest[i+1:]
			break
		}
	}
	if next != nil && len(w.queue) > 0 && w.queue.less(w.queue[0], next) {
		// A more urgent op arrived (one that frees the chunks waiting for
		// it): the rest of the unit queues behind it, once the reports of
		// the ops before it are out (see runner).
		rest = next
		next = nil
	}
	if next != nil && ctx.Err() == nil {
		// The unit's next op runs in the same context: cancelling the op
		// that runs cancels it, and the op after gets a new one.
		next.ctx, next.cancel = t.ctx, t.cancel
	} else {
		t.cancel()
		if next != nil {
			next.ctx, next.cancel = context.WithCancel(w.ctx)
		}
	}
	if next != nil {
		w.running[next.RunKey] = next
	} else {
		w.pump()
	}
	w.mu.Unlock()
	for _, release := range t.pins {
		release()
	}
	m := wire.Msg{Job: t.Job, Key: t.Key, Attempt: t.Attempt, ID: t.id}
	switch {
	case cancelled || !mine:
		m.Kind = wire.MsgCancelled
	case err != nil:
		m.Kind, m.Err, m.Final = wire.MsgFailed, err.Error(), errors.Is(err, kernel.ErrKernel)
		var fe *fetchError
		if errors.As(err, &fe) {
			m.Peer = fe.peer
		}
	default:
		m.Kind, m.NBytes, m.Spilled = wire.MsgDone, int64(out.NBytes()), w.newSpill()
	}
	return m, next, rest
}

// compute loads the task's inputs, from the store or from their workers,
// and runs its kernel.
func (w *Worker) compute(ctx context.Context, t *task) (*tensor.Array, error) {
	in := make([]*tensor.Array, len(t.inputs))
	if err := w.fetchSmall(ctx, t, in); err != nil {
		return nil, err
	}
	for i, loc := range t.inputs {
		if in[i] != nil {
			continue
		}
		if loc.Worker == w.name {
			a, ok := w.localInput(t, loc.ID, loc.NBytes)
			if !ok {
				return nil, fmt.Errorf("input chunk %d is not on worker %s", loc.ID, w.name)
			}
			in[i] = a
			continue
		}
		a, err := w.fetchInput(ctx, loc, t.addrs[i], &t.pins)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &fetchError{peer: loc.Worker, err: fmt.Errorf("fetch chunk %d from %s: %w", loc.ID, loc.Worker, err)}
		}
		in[i] = a
	}
	return runKernel(ctx, t.op, in)
}

// fetchSmall fetches into in the task's inputs that are too small to map
// and that it reads from a peer along with others: those of each peer in
// one exchange (see dataPool.fetchAll). A combine of a tree reduction reads
// several scalars from one peer.
func (w *Worker) fetchSmall(ctx context.Context, t *task, in []*tensor.Array) error {
	if len(t.inputs) < 2 {
		return nil
	}
	small := func(loc core.Location) bool {
		return loc.Worker != w.name && (loc.NBytes < wire.MapMin || w.cfg.NoMap)
	}
	for i, loc := range t.inputs {
		if !small(loc) || in[i] != nil {
			continue
		}
		var idx []int
		for j := i; j < len(t.inputs); j++ {
			if l := t.inputs[j]; small(l) && l.Worker == loc.Worker && in[j] == nil {
				idx = append(idx, j)
			}
		}
		if len(idx) < 2 {
			continue
		}
		ids := make([]uint64, len(idx))
		for k, j := range idx {
			ids[k] = t.inputs[j].ID
		}
		got := make([]*tensor.Array, len(idx))
		if err := w.pool.FetchAll(ctx, t.addrs[i], ids, got); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &fetchError{peer: loc.Worker, err: fmt.Errorf("fetch chunks %v from %s: %w", ids, loc.Worker, err)}
		}
		for k, j := range idx {
			in[j] = got[k]
		}
	}
	return nil
}

// A fetchError is an input that could not be fetched from the worker peer:
// most often a peer that just died, which the scheduler has not yet heard.
type fetchError struct {
	peer string
	err  error
}

func (e *fetchError) Error() string { return e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

// SendPause, when set (by tests, in worker processes), is called halfway
// through sending a chunk of 1 MiB or more, the first half flushed.
var SendPause func()

// sendChunk writes a's chunk frame to bw.
func (w *Worker) sendChunk(bw *bufio.Writer, a *tensor.Array) error {
	if SendPause == nil || len(a.Data) < 1<<20 {
		return wire.WriteChunk(bw, a)
	}
	half := *a
	half.Data = a.Data[:len(a.Data)/2]
	if err := wire.WriteChunk(bw, &half); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	SendPause()
	_, err := bw.Write(a.Data[len(a.Data)/2:])
	return err
}

// runKernel runs op's kernel, turning a panic into an error: a kernel given
// arguments it does not expect must fail its op, not the worker.
func runKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (out *tensor.Array, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, kernelPanic(fmt.Sprintf("%s kernel panicked: %v", op.Kind, r))
		}
	}()
	return kernel.Run(ctx, op, in)
}

// kernelPanic is the error of a kernel that panicked: like the errors
// kernels return, it would happen again on any worker.
type kernelPanic string

func (e kernelPanic) Error() string        { return string(e) }
func (e kernelPanic) Is(target error) bool { return target == kernel.ErrKernel }

// Slots is the number of ops the worker runs at once.
func (w *Worker) Slots() int { return w.cfg.Slots }
