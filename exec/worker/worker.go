package worker

import (
	"bufio"
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
	"marsfs/exec/asuser"
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
	// Data is the worker's data directory, where the ops that read and
	// write files (from_npy, to_npy) open them, each as the owner its op
	// names (package exec/asuser); nil for none.
	Data *os.Root
	// OrphanGrace is how long the worker keeps the chunks of a scheduler
	// whose control connection broke, for it to come back and adopt them
	// (a pause, a network failure); 2 minutes when 0, none when negative.
	OrphanGrace time.Duration
	// HandOffWait bounds how long Close waits for the scheduler to move
	// the worker's kept chunks to other workers; 30 s when 0, none when
	// negative.
	HandOffWait time.Duration
	// AloneExit, if positive, is how long the worker waits with no
	// scheduler connected (it joins the scheduler's address again every
	// second meanwhile) before it calls OnAlone: a worker of `up` that
	// outlives its up stops by itself when no up comes back.
	AloneExit time.Duration
	OnAlone   func()
}

// DefaultOrphanGrace is Config.OrphanGrace's default.
const DefaultOrphanGrace = 2 * time.Minute

// A Worker runs the ops the scheduler submits and serves its chunks to the
// scheduler and to the other workers.
type Worker struct {
	cfg   Config
	name  string
	files ownerFiles // cfg.Data, opened for each op's owner
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

	slots    []*slot      // the runners' clocks and phases (phases.go)
	sent     atomic.Int64 // chunk bytes served to others
	putBytes atomic.Int64 // chunk bytes put here (uploads)

	mu           sync.Mutex
	opsEnded     int64      // runs ended, done or failed (metrics)
	fetchedBytes int64      // input bytes fetched from other workers (metrics)
	st           *State     // the worker's policy; every call under mu
	runq         chan *Task // started tasks, for the runners
	conns        map[net.Conn]bool
	controls     map[*wire.Conn]bool // the control connections open
	handedOff    chan struct{}       // closed when a scheduler has moved the chunks (MsgHandedOff)
	changed      chan struct{}       // closed at the next change of st (Changed), when taken
	closed       bool
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
	w.wg.Add(2)
	go w.accept()
	go w.rejoin(cfg.Join)
	return w, nil
}

// rejoinEvery is how often a worker with no scheduler connected joins its
// cluster again through the addresses it joined by.
const rejoinEvery = time.Second

// rejoin waits for a scheduler at the addresses the worker joined by
// while none is connected: a scheduler killed and started again at its
// gossip address knows no worker, and the worker's own gossip took the
// one it knew for dead; joining it again introduces them, it connects,
// and the worker offers it the chunks it kept as orphans (MsgHeld).
func (w *Worker) rejoin(addrs []string) {
	defer w.wg.Done()
	if len(addrs) == 0 {
		return
	}
	tick := time.NewTicker(rejoinEvery)
	defer tick.Stop()
	alone := 0 // ticks with no control connection
	since := time.Now()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		n, closed := len(w.controls), w.closed
		w.mu.Unlock()
		if closed {
			return // leaving: no joining again
		}
		if n > 0 {
			alone, since = 0, time.Now()
			continue
		}
		if w.cfg.AloneExit > 0 && w.cfg.OnAlone != nil && time.Since(since) >= w.cfg.AloneExit {
			w.cfg.OnAlone()
			return
		}
		if alone++; alone >= 1 {
			w.node.Rejoin(addrs) // fails while nothing answers there: tried again
		}
	}
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
	if cfg.OrphanGrace == 0 {
		cfg.OrphanGrace = DefaultOrphanGrace
	}
	if cfg.HandOffWait == 0 {
		cfg.HandOffWait = 30 * time.Second
	}
	w := &Worker{cfg: cfg, name: cfg.Name, store: cfg.Store, pool: wire.NewPool(cfg.MaxChunk, cfg.SecretKey), conns: make(map[net.Conn]bool),
		controls: make(map[*wire.Conn]bool), handedOff: make(chan struct{})}
	if cfg.Data != nil {
		// An error (the process's groups unreadable) fails the file ops,
		// not the worker.
		w.files.r, w.files.err = asuser.New(cfg.Data)
	}
	if w.store == nil {
		w.store = NewMemStore()
	}
	w.st = NewState(stateConfig(cfg.Name, cfg.Slots, cfg.Mem, w.store))
	w.ctx, w.stop = context.WithCancel(context.Background())
	w.runq = make(chan *Task, cfg.Slots)
	w.wg.Add(cfg.Slots + 1)
	wake := make(chan struct{}, 1)
	for i := range cfg.Slots {
		w.slots = append(w.slots, &slot{index: i, wake: wake})
		go w.runner(w.slots[i])
	}
	go w.watchPhases(wake)
	if tr, ok := w.store.(Trimmer); ok {
		w.wg.Add(1)
		go w.trim(tr)
	}
	return w, nil
}

// trimIdle is how long freed shared memory stays kept for reuse: within a
// graph, what one stage frees the next takes at once; once nothing took it
// for this long, the host has it back.
const trimIdle = 2 * time.Second

// trim gives back the store's freed memory left idle, every second until
// the worker closes.
func (w *Worker) trim(tr Trimmer) {
	defer w.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-tick.C:
			tr.Trim(trimIdle)
		}
	}
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
	w.st.Put(id)
	w.wake()
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
	w.HandOff()
	return w.Close()
}

// HandOff asks the schedulers connected to move the chunks the worker
// holds for them to other workers, and waits until one says it has, or
// for Config.HandOffWait: a worker that leaves cleanly (SIGTERM) takes no
// kept chunk with it.
func (w *Worker) HandOff() {
	if w.cfg.HandOffWait < 0 || w.store.Len() == 0 {
		return
	}
	w.mu.Lock()
	n := 0
	for cc := range w.controls {
		if cc.Send(&wire.Msg{Kind: wire.MsgLeaving}) == nil {
			n++
		}
	}
	w.mu.Unlock()
	if n == 0 {
		return
	}
	select {
	case <-w.handedOff:
	case <-time.After(w.cfg.HandOffWait):
	}
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
	w.st.Close()
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
	running, queued, quota := w.st.Running(), w.st.Queued(), w.st.QuotaUsed()
	fenced, takenOver := w.st.Fenced(), w.st.TakenOver()
	ops, received := w.opsEnded, w.fetchedBytes
	w.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "name %s\naddr %s\npid %d\nslots %d\nprocs %d\nrunning %d\nqueued %d\nchunks %d\nbytes %d\nmem %d\nsending %d\n",
		w.name, w.addr, os.Getpid(), w.cfg.Slots, runtime.GOMAXPROCS(0), running, queued, w.store.Len(), w.store.Bytes(), w.cfg.Mem, w.sending.Load())
	fmt.Fprintf(&b, "quota_used %d\nquota_limit %d\nmapped_bytes %d\n", quota, w.cfg.Mem, w.mapped.Load())
	fmt.Fprintf(&b, "go_heap_bytes %d\n", goHeapBytes())
	fmt.Fprintf(&b, "ops_run %d\nsent_bytes %d\nreceived_bytes %d\n", ops, w.sent.Load(), received+w.putBytes.Load())
	// The worker's fence (epochs.go): what it refused as stale, and the
	// sessions it has seen taken over, at their latest epochs.
	fmt.Fprintf(&b, "fenced %d\nepochs %s\n", fenced, takenOver)
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
	c, err := wire.Secure(c, w.cfg.SecretKey)
	if err != nil {
		return
	}
	if len(w.cfg.SecretKey) == 0 && wire.OtherUser(c) {
		// No key: only this user's processes on this host may submit
		// ops, read chunks or put them.
		return
	}
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
			var a *tensor.Array
			var why string
			release := func() {}
			if asked := wire.GetID(id[:]); asked == wire.RangeRequest {
				if a, release, why, err = w.chunkRange(br); err != nil {
					return
				}
			} else if x, ok := w.store.Get(asked); ok {
				a = x
			} else {
				why = fmt.Sprintf("worker %s holds no chunk %d", w.name, asked)
			}
			if why == "" {
				w.sending.Add(1)
				err = w.sendChunk(bw, a)
				w.sending.Add(-1)
				w.sent.Add(int64(len(a.Data)))
				release() // the writer copied what it has not written
			} else {
				err = wire.WriteErr(bw, why)
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
			w.putBytes.Add(int64(len(a.Data)))
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
	w.st.ConnOpened()
	w.controls[cc] = true
	// The first message on a control connection says what the worker
	// holds for nobody: a scheduler that lost this worker's connection
	// may be back, and takes back what it lost before it sends work.
	w.offer(cc, true)
	w.mu.Unlock()
	defer cc.Close()
	defer func() {
		w.mu.Lock()
		delete(w.controls, cc)
		w.st.ConnClosed(cc)
		w.apply()
		w.mu.Unlock()
	}()
	var tasks []Task
	var unit []*Task   // a dispatch unit being received
	want := 0          // its size
	var received int64 // when this frame's submits came (one clock read a frame)
	for {
		var m wire.Msg
		if err := dec.Next(&m); err != nil {
			return
		}
		if received == 0 && m.Kind == wire.MsgSubmit {
			received = time.Now().UnixMicro()
		}
		at := received
		if !dec.Buffered() {
			received = 0 // the next frame's submits read the clock anew
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
			t := &wire.Take(&tasks, 1)[0] // cut from a slab, like the decoder's
			*t = Task{RunKey: wire.RunKey{Job: m.Job, Key: m.Key, Attempt: m.Attempt}, Prio: m.Priority, Op: m.Op, ID: m.ID,
				Inputs: m.Inputs, Addrs: m.Addrs, Conn: cc, Flush: m.Flush, Session: m.Session, Epoch: m.Epoch}
			t.received = at
			if len(unit) == 0 && m.Unit > 1 {
				want = m.Unit
				unit = make([]*Task, 0, min(want, 1024))
			}
			var ops []*Task
			if want > 0 {
				if unit = append(unit, t); len(unit) < want {
					continue
				}
				ops, unit, want = unit, nil, 0
			} else {
				ops = []*Task{t}
			}
			w.mu.Lock()
			w.st.Submit(ops)
			w.apply()
			w.mu.Unlock()
		case wire.MsgCancel:
			w.mu.Lock()
			w.st.Cancel(wire.RunKey{Job: m.Job, Key: m.Key, Attempt: m.Attempt})
			w.apply()
			w.mu.Unlock()
		case wire.MsgFree:
			w.mu.Lock()
			err := w.st.FreeFor(cc, m.Session, m.Epoch, m.IDs)
			w.apply()
			w.mu.Unlock()
			if err != nil {
				cc.Send(&wire.Msg{Kind: wire.MsgFenced, Session: m.Session, Epoch: m.Epoch, Err: err.Error()})
			}
		case wire.MsgStatus:
			cc.Send(&wire.Msg{Kind: wire.MsgStatusReply, Seq: m.Seq, Text: w.Status()})
		case wire.MsgAdopt:
			w.mu.Lock()
			taken, err := w.st.AdoptFor(cc, m.Session, m.Epoch, m.IDs)
			w.wake()
			held := &wire.Msg{Kind: wire.MsgHeld, Session: m.Session, Epoch: m.Epoch}
			for _, id := range taken {
				if n, ok := w.size(id); ok {
					held.IDs, held.Sizes = append(held.IDs, id), append(held.Sizes, n)
				}
			}
			w.mu.Unlock()
			if err != nil {
				cc.Send(&wire.Msg{Kind: wire.MsgFenced, Session: m.Session, Epoch: m.Epoch, Err: err.Error()})
			}
			if len(held.IDs) > 0 {
				// Taken from a stale home's connection: the new home
				// takes them back as a worker's offer (adopt.go).
				cc.Send(held)
			}
		case wire.MsgHandedOff:
			w.mu.Lock()
			select {
			case <-w.handedOff:
			default:
				close(w.handedOff)
			}
			w.mu.Unlock()
		}
	}
}

// apply carries out what the state asks for. w.mu is held: what it does
// takes no time (the reports only queue on their connections).
func (w *Worker) apply() {
	defer w.wake()
	rd := w.st.Ready()
	for _, id := range rd.Forget {
		w.store.Delete(id)
	}
	if nu, ok := w.store.(NextUseStore); ok {
		for _, u := range rd.NextUse {
			nu.SetNextUse(u.ID, u.Rank)
		}
	}
	for _, t := range rd.Interrupt {
		t.run.cancel()
	}
	for _, t := range rd.Cancelled {
		t.Conn.Send(&wire.Msg{Kind: wire.MsgCancelled, Job: t.Job, Key: t.Key, Attempt: t.Attempt, ID: t.ID})
	}
	for _, r := range rd.Refused {
		t := r.Task
		t.Conn.Send(&wire.Msg{Kind: wire.MsgFailed, Job: t.Job, Key: t.Key, Attempt: t.Attempt, ID: t.ID, Err: r.Err, Final: true})
	}
	for _, t := range rd.Start {
		t.run.ctx, t.run.cancel = context.WithCancel(w.ctx)
		w.runq <- t // never blocks: it holds at most Slots tasks
	}
	if gen := rd.Orphaned; gen != 0 {
		// Chunks whose connection broke: offered to the connections open,
		// dropped after the grace unless adopted.
		for cc := range w.controls {
			w.offer(cc, false)
		}
		if w.cfg.OrphanGrace < 0 {
			w.st.DropOrphans(gen)
			w.apply()
		} else {
			time.AfterFunc(w.cfg.OrphanGrace, func() {
				w.mu.Lock()
				defer w.mu.Unlock()
				if !w.closed {
					w.st.DropOrphans(gen)
					w.apply()
				}
			})
		}
	}
}

// offer tells a scheduler on control connection cc of the chunks the
// worker holds for no connection, with their sizes, for it to adopt those
// it lost; always, it says so even when there are none. w.mu is held.
func (w *Worker) offer(cc *wire.Conn, always bool) {
	ids := w.st.Orphans()
	if len(ids) == 0 && !always {
		return
	}
	m := &wire.Msg{Kind: wire.MsgHeld, IDs: make([]uint64, 0, len(ids)), Sizes: make([]int64, 0, len(ids))}
	for _, id := range ids {
		if n, ok := w.size(id); ok {
			m.IDs = append(m.IDs, id)
			m.Sizes = append(m.Sizes, n)
		}
	}
	cc.Send(m)
}

// size is the data length of chunk id in the store.
func (w *Worker) size(id uint64) (int64, bool) {
	if s, ok := w.store.(interface{ Size(uint64) (int64, bool) }); ok {
		return s.Size(id)
	}
	a, ok := w.store.Get(id)
	if !ok {
		return 0, false
	}
	return int64(len(a.Data)), true
}

// runState is what the Worker keeps of a started task: the context its
// kernel runs under.
type runState struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// runner runs the tasks the state starts until the worker closes. Slots
// runners live as long as the worker, so that a task does not pay for a
// goroutine and the growth of its stack.
//
// The ops of a dispatch unit run one after the other in the slot, and their
// reports go out together when the unit ends, or every reportEvery while it
// runs: one message to the scheduler for many ops. The report of an op whose
// chunk others wait for (and those before it) goes out within soonWait,
// most often with the unit's end (see wire.Conn.SendSoon). Only the first op
// of a run of a unit reports its start.
func (w *Worker) runner(sl *slot) {
	defer w.wg.Done()
	var reports []*wire.Msg
	var slab []wire.Msg // what reports are cut from: one allocation for many
	for t := range w.runq {
		t.started = sl.restart()
		conn, since := t.Conn, t.started // µs
		for first := true; t != nil; first = false {
			ran := t
			m := &wire.Take(&slab, 1)[0]
			var next, rest *Task
			*m, next, rest = w.run(sl, ran, first)
			if next != nil {
				next.started = ran.stored // it follows in the slot
			}
			reports = append(reports, m)
			// The unit's end goes out now; when it yields its slot, or
			// others wait for ran's chunk, soon (see wire.Conn.SendSoon).
			now := next == nil && rest == nil || ran.stored-since >= reportEvery.Microseconds()
			if now || ran.Flush || rest != nil {
				w.report(conn, reports, !now)
				clear(reports)
				reports, since = reports[:0], ran.stored
			}
			if rest != nil {
				// The unit yields its slot: it goes back to the queue
				// only now, so that no other slot reports its next op
				// before the ops before it.
				w.mu.Lock()
				w.st.Yield(rest)
				w.apply()
				w.mu.Unlock()
			}
			t = next
		}
		sl.cur.Store(nil)
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
	var ids []uint64
	for _, m := range ms {
		if m.Kind == wire.MsgDone {
			ids = append(ids, m.ID)
		}
	}
	w.mu.Lock()
	w.st.Unreported(ids)
	w.apply()
	w.mu.Unlock()
}

// run runs task t and returns the report of how it ended. When t's unit has
// more ops to run, it returns the next too: already counted as running in
// t's slot, or, when a more urgent op waits, as rest, for the queue. first
// says whether t starts the slot's run.
func (w *Worker) run(sl *slot, t *Task, first bool) (report wire.Msg, next, rest *Task) {
	ctx := t.run.ctx
	t.slot = int32(sl.index)
	sl.begin(t)
	tm := &core.Timing{Received: t.received, Started: t.started, Slot: sl.index} // t.started is set: the slot's clock
	if first {
		// It waits for the reports of the unit's first ops, to share their
		// frame or be dropped with its end.
		t.Conn.SendSoon(startedReport(t, core.Timing{Received: tm.Received, Started: tm.Started, Slot: tm.Slot,
			Phase: core.Loading, Since: tm.Started}))
	}
	ctx, buf := withOutBuf(ctx, w.store, t.Op)
	if w.cfg.Data != nil {
		ctx = kernel.WithFiles(ctx, w.files)
	}
	defer buf.drop() // unless stored
	out, err := w.compute(ctx, sl, t, tm)
	// Storing a small chunk (a map insert, or a copy of a few KB) is not
	// worth a clock read, which costs as much here: it is counted in
	// computing. A larger one is sealed or copied into shared memory.
	if buf != nil || int64(t.Op.NBytes()) >= timedBytes || tm.Loaded == 0 {
		tm.Computed = sl.enter(core.Storing)
		if tm.Loaded == 0 {
			tm.Loaded = tm.Computed // it failed loading
		}
	}
	outcome := Computed
	if err != nil {
		outcome = Failed
	}
	w.mu.Lock()
	cancelled := t.Cancelled()
	store, mine := w.st.Ended(t, outcome)
	if store {
		if err = buf.store(w.store, t.ID, out); err == nil {
			w.st.Stored(t)
		} else {
			w.st.Free([]uint64{t.ID}) // nothing stored, nothing left
		}
	}
	next, rest = w.st.Next(t)
	if next != nil && t.run.ctx.Err() == nil {
		// The unit's next op runs in the same context: cancelling the op
		// that runs cancels it, and the op after gets a new one.
		next.run = t.run
	} else {
		t.run.cancel()
		if next != nil {
			next.run.ctx, next.run.cancel = context.WithCancel(w.ctx)
		}
	}
	w.apply()
	w.opsEnded++ // under mu, taken anyway: no atomic an op
	w.fetchedBytes += tm.Fetched
	w.mu.Unlock()
	for _, release := range t.pins {
		release()
	}
	tm.Stored = sl.now()
	t.stored = tm.Stored
	if tm.Computed == 0 {
		tm.Computed = tm.Stored
	}
	// Its output's memory was taken when the kernel asked for it, within
	// computing: the phase is told as the first after the queue, and
	// loading as following it (see core.Timing).
	tm.Allocated = tm.Started
	if buf != nil && buf.took > 0 {
		took := min(buf.took.Microseconds(), tm.Computed-tm.Loaded)
		tm.Allocated += took
		tm.Loaded += took
	}
	m := wire.Msg{Job: t.Job, Key: t.Key, Attempt: t.Attempt, ID: t.ID}
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
		m.Kind, m.NBytes, m.Spilled, m.Timing = wire.MsgDone, int64(out.NBytes()), w.newSpill(), *tm
	}
	return m, next, rest
}

// compute loads the task's inputs, from the store or from their workers,
// and runs its kernel.
func (w *Worker) compute(ctx context.Context, sl *slot, t *Task, tm *core.Timing) (*tensor.Array, error) {
	in := make([]*tensor.Array, len(t.Inputs))
	if err := w.fetchSmall(ctx, t, in, tm); err != nil {
		return nil, err
	}
	for i, loc := range t.Inputs {
		if in[i] != nil {
			continue
		}
		r := t.Op.InputRange(i)
		// The chunk is read here when it is here: at its location, or
		// as another copy (an upload's second), which then maps or
		// fetches nothing.
		if a, ok := w.localInput(t, loc.ID, loc.NBytes, !r.Whole()); ok {
			v, err := chunk.View(a, r)
			if err != nil {
				return nil, fmt.Errorf("input chunk %d: %w", loc.ID, err)
			}
			in[i] = v
			continue
		}
		if loc.Worker == w.name {
			return nil, fmt.Errorf("input chunk %d is not on worker %s", loc.ID, w.name)
		}
		a, err := w.fetchInput(ctx, loc, r, t.Addrs[i], &t.pins)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &fetchError{peer: loc.Worker, err: fmt.Errorf("fetch chunk %d from %s: %w", loc.ID, loc.Worker, err)}
		}
		in[i] = a
		tm.Fetched += int64(a.NBytes())
	}
	// Reading small chunks the worker holds is not worth a clock read (see
	// timedBytes): their loading is counted in computing. Fetching or
	// mapping, and reading a chunk of shared memory that may have been
	// spilled, are timed.
	timed := false
	for _, loc := range t.Inputs {
		if loc.Worker != w.name || loc.NBytes >= timedBytes {
			timed = true
			break
		}
	}
	if timed {
		tm.Loaded = sl.enter(core.Computing)
	} else {
		tm.Loaded = tm.Started
		sl.enterAt(core.Computing, tm.Loaded)
	}
	return runKernel(ctx, t.Op, in)
}

// fetchSmall fetches into in the task's inputs that are too small to map
// and that it reads from a peer along with others: those of each peer in
// one exchange (see dataPool.fetchAll). A combine of a tree reduction reads
// several scalars from one peer.
func (w *Worker) fetchSmall(ctx context.Context, t *Task, in []*tensor.Array, tm *core.Timing) error {
	if len(t.Inputs) < 2 {
		return nil
	}
	// A part of a chunk (chunk.Range) is fetched on its own.
	small := func(j int) bool {
		loc := t.Inputs[j]
		return loc.Worker != w.name && (loc.NBytes < wire.MapMin || w.cfg.NoMap) && t.Op.InputRange(j).Whole()
	}
	for i, loc := range t.Inputs {
		if !small(i) || in[i] != nil {
			continue
		}
		var idx []int
		for j := i; j < len(t.Inputs); j++ {
			if l := t.Inputs[j]; small(j) && l.Worker == loc.Worker && in[j] == nil {
				idx = append(idx, j)
			}
		}
		if len(idx) < 2 {
			continue
		}
		ids := make([]uint64, len(idx))
		for k, j := range idx {
			ids[k] = t.Inputs[j].ID
		}
		got := make([]*tensor.Array, len(idx))
		if err := w.pool.FetchAll(ctx, t.Addrs[i], ids, got); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &fetchError{peer: loc.Worker, err: fmt.Errorf("fetch chunks %v from %s: %w", ids, loc.Worker, err)}
		}
		for k, j := range idx {
			in[j] = got[k]
			tm.Fetched += int64(got[k].NBytes())
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

// chunkRange reads the rest of a range request (see wire.RangeRequest)
// from br and returns the part of the chunk it names as a 1-D array, what
// releases it once sent; or, when it cannot be
// answered, why (the chunk is not held, the range is outside it); or an
// error when the request could not be read (the connection is then out
// of step). A spilled chunk is not brought back for a part of it: the
// part is read from the spill file's pages.
func (w *Worker) chunkRange(br *bufio.Reader) (a *tensor.Array, release func(), why string, err error) {
	var req [24]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return nil, nil, "", err
	}
	id, off, n := wire.GetID(req[:8]), wire.GetID(req[8:16]), wire.GetID(req[16:])
	release = func() {}
	ok := false
	if ps, pins := w.store.(PinStore); pins {
		a, release, ok = ps.PinPrivate(id)
	} else {
		a, ok = w.store.Get(id)
	}
	if !ok {
		return nil, nil, fmt.Sprintf("worker %s holds no chunk %d", w.name, id), nil
	}
	sz := uint64(a.DType.Size())
	if total := uint64(len(a.Data)) / max(sz, 1); off > total || n > total-off {
		release()
		return nil, nil, fmt.Sprintf("range of %d elements at %d of chunk %d of %d", n, off, id, total), nil
	}
	return &tensor.Array{DType: a.DType, Shape: []int{int(n)}, Data: a.Data[off*sz : (off+n)*sz]}, release, "", nil
}

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

// ownerFiles gives the file kernels the data directory as each op's owner
// sees it.
type ownerFiles struct {
	r   *asuser.Root
	err error // why there is no r
}

func (f ownerFiles) As(o chunk.Owner) (kernel.Dir, error) {
	if f.err != nil {
		return nil, fmt.Errorf("the data directory: %w", f.err)
	}
	d, err := f.r.For(o)
	if err != nil {
		return nil, err
	}
	return d, nil
}
