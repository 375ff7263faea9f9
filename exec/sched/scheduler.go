package sched

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"marsfs/cluster"
	"marsfs/exec/core"
	"marsfs/exec/custody"
	"marsfs/exec/ident"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/tensor"
)

// Config configures a Scheduler.
type Config struct {
	// Name is the scheduler's cluster name: when empty, "scheduler" for
	// the first scheduler of a cluster (Join empty), "scheduler-SPACE"
	// for one joining it.
	Name   string
	Gossip string // memberlist bind host:port; "127.0.0.1:0" when empty
	// Addr is the 9P address of the scheduler's tree, published for the
	// other schedulers, which forward to it the requests for its
	// sessions; empty when it serves none over TCP.
	Addr string
	Join []string // gossip addresses of an existing cluster, if any
	// SecretKey is the cluster key (see DeriveKey): it encrypts gossip and
	// authenticates the connections to the workers. Without it the
	// scheduler's gossip stays on loopback.
	SecretKey []byte
	Fast      bool // cluster timings for tests (see cluster.Config)
	LogOutput io.Writer
	// MaxAttempts bounds the runs of a failing op; 3 when 0.
	MaxAttempts int
	// NoWorkerWait bounds how long a job waits with no worker to run it
	// (none has joined, or every one left) before it fails saying so; 30 s
	// when 0. A worker that comes back in time takes the job up.
	NoWorkerWait time.Duration
	// CancelWait bounds how long a cancelled job waits for its workers to
	// confirm; 1 s when 0. Chunks reported after it are freed on arrival.
	CancelWait time.Duration
	// Expect names the kept chunks a scheduler before this one knew (its
	// journal, --state-dir), where they were: they count as lost until a
	// worker offers them back (MsgHeld) with the size named here, and
	// are then taken back (adopt.go) rather than made again. Those of
	// ExpectUploads are uploads', which want two copies.
	Expect        []core.Location
	ExpectUploads []uint64
	// OnMsg, if not nil, is given each message another scheduler sent
	// this one (Send); see cluster.Config.OnMsg.
	OnMsg func(msg []byte)
	// MaxChunk is the largest chunk accepted from the network; 16 GiB when 0.
	MaxChunk int64
	// Depth bounds the ops sent to a worker and not yet reported, per slot
	// (see CoreOptions.Depth); 32 when 0: deep enough that reports and
	// submissions travel in batches.
	Depth int
	// UnitOps bounds the ops of a dispatch unit (see CoreOptions.UnitOps);
	// 256 when 0, and no units when negative. Every unit costs a frame
	// each way on the control connection, some tens of microseconds of
	// CPU on each side on loopback: a unit of 256 tiny ops spreads them
	// thin, and UnitCost still bounds a unit of larger ones.
	UnitOps int
	// UnitCost bounds a unit's estimated bytes (see CoreOptions.UnitCost).
	UnitCost int64
	// NoMap reads every chunk over TCP, also from workers on this host
	// whose chunks are in shared memory and could be mapped.
	NoMap bool
	// Logf, if not nil, logs what the scheduler does of note: chunks
	// taken back from a worker that came back, or moved off one leaving.
	Logf func(format string, args ...any)
}

// WorkerInfo describes a worker the scheduler knows.
type WorkerInfo struct {
	Name      string
	Addr      string // control and chunk service
	Gossip    string
	Slots     int
	PID       int
	State     string // "alive", "left" or "failed"
	Connected bool   // the scheduler's control connection is up
}

// A Scheduler runs jobs on the worker processes of a cluster. It implements
// Runner and is safe for concurrent use.
type Scheduler struct {
	cfg    Config
	space  ident.Space // this scheduler's share of the cluster's numbers
	node   *cluster.Node
	pool   *wire.Pool
	remote sync.Map     // names of workers found on other hosts: their chunks are not mapped
	mapped mappedChunks // chunks mapped from workers on this host, shared by their readers
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup

	dispatched atomic.Uint64 // runs of ops sent to workers (metrics.go)
	// workersLost counts the connected workers dropped (they died, were
	// declared failed, or left); recopied the second copies of uploaded
	// chunks made again after a copy was lost (metrics.go).
	workersLost atomic.Uint64
	recopied    atomic.Uint64
	// fencedFrees counts the frees and claims workers refused, having
	// seen a later epoch of their session (MsgFenced).
	fencedFrees atomic.Uint64

	mu      sync.Mutex
	workers map[string]*remoteWorker // connecting or connected
	jobs    map[uint64]*mailbox
	nextJob uint64
	// dir is the chunk directory (exec/custody's rules): the kept
	// chunks and their copies (an upload two), the lost, the offers of
	// chunks this scheduler did not lose (for Claim). Its instructions
	// gather in dout, taken under mu (takeOut) and carried out after
	// (carry, directory.go).
	dir     *custody.Directory
	dout    custody.Output
	born    time.Time       // the directory's clock counts from here
	copying map[uint64]bool // uploaded chunks being copied (copyAgain)
	// offered names the workers that said what they held on connecting
	// (WaitExpected).
	offered map[string]bool
	seq     uint64
	status  map[uint64]chan string
	closed  bool
	// changed is closed, and replaced, when the chunk directory changes:
	// a kept chunk lost, taken back or freed, a worker's offer heard.
	// Waiters (Changed) wait on it rather than poll.
	changed chan struct{}
}

type remoteWorker struct {
	name, addr string
	slots      int
	cc         *wire.Conn // nil while connecting
	// leaving: the worker said it is leaving (MsgLeaving): no chunk is
	// put or moved onto it.
	leaving bool
	// refused says why the worker may not work here (another user's,
	// on a keyless cluster); it stays in workers, unconnected, so that
	// it is not dialed again.
	refused string
	// local is the worker when it runs in this process (NewLocal): its
	// chunks are read and put through its store, not over the network,
	// and no member table lists it.
	local *worker.Worker
	// probing: the failure detector declared the worker dead, and it is
	// being asked on its connection whether it is; vouched is when it
	// last answered such a question (see vouch).
	probing bool
	vouched time.Time
}

// An input is something that happened to a job, queued for its Run loop.
type input struct {
	up, down bool   // worker up or down
	why      string // down: how the worker went, for the job's events
	note     string // neither up nor down, nor a report: a note for the job's events (Announce)
	worker   string
	slots    int
	msg      wire.Msg // a worker's report when neither up nor down
}

// A mailbox is an unbounded queue of inputs with a wake-up channel, so that
// connection readers never block on a busy job.
type mailbox struct {
	mu     sync.Mutex
	items  []input
	spare  []input // the slice take returned last, to fill next
	wake   chan struct{}
	closed bool // the job has ended: nobody takes what is put
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

func (m *mailbox) put(in input) { m.putAll([]input{in}) }

// putAll queues ins for the job. It reports false, queuing nothing, when
// the job has ended (close): a reader that looked the mailbox up before
// then must free the chunks ins report itself (see freeLate).
func (m *mailbox) putAll(ins []input) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.items = append(m.items, ins...)
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return true
}

// close ends the mailbox of a job that has ended: it returns what was
// queued and not taken, and later puts are refused.
func (m *mailbox) close() []input {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	items := m.items
	m.items, m.spare = nil, nil
	return items
}

// freeLate frees the chunks reported in ins, which came after their job
// ended: nobody will use or free them.
func (s *Scheduler) freeLate(ins []input) {
	for _, in := range ins {
		if in.msg.Kind == wire.MsgDone {
			if cc, _ := s.conn(in.worker); cc != nil {
				cc.Send(&wire.Msg{Kind: wire.MsgFree, IDs: []uint64{in.msg.ID}})
			}
		}
	}
}

// take returns the inputs queued so far. The slice it returns is valid
// until the next call.
func (m *mailbox) take() []input {
	m.mu.Lock()
	defer m.mu.Unlock()
	items := m.items
	clear(m.spare)
	m.items, m.spare = m.spare[:0], items
	return items
}

// New joins the cluster as its scheduler (starting a cluster when
// cfg.Join is empty) and connects to every worker that joins.
func New(ctx context.Context, cfg Config) (*Scheduler, error) {
	if cfg.Gossip != "" {
		if err := wire.CheckListen("scheduler gossip", cfg.Gossip, cfg.SecretKey); err != nil {
			return nil, err
		}
	}
	// The first scheduler of a cluster takes space 0; one joining draws
	// another (see package ident), which the member table then confirms.
	var space ident.Space
	if len(cfg.Join) > 0 {
		var err error
		if space, err = ident.Pick(func(ident.Space) bool { return false }, rand.Uint32); err != nil {
			return nil, err
		}
		if cfg.Name == "" {
			cfg.Name = "scheduler-" + space.String()
		}
	}
	s := newScheduler(cfg, space)
	cfg = s.cfg
	node, err := cluster.Join(ctx, cluster.Config{
		Name: cfg.Name, BindAddr: cfg.Gossip, Join: cfg.Join, SecretKey: cfg.SecretKey, Fast: cfg.Fast, LogOutput: cfg.LogOutput, OnMsg: cfg.OnMsg,
		Meta: cluster.Meta{Role: cluster.RoleScheduler, Addr: cfg.Addr, PID: os.Getpid(), Space: uint32(space)},
	})
	if err != nil {
		return nil, err
	}
	if err := checkUnique(node, cfg.Name, space); err != nil {
		node.Close()
		return nil, err
	}
	s.node = node
	s.wg.Add(1)
	go s.watch()
	return s, nil
}

// Send sends msg to the live member named name, for its OnMsg.
func (s *Scheduler) Send(name string, msg []byte) error { return s.node.Send(name, msg) }

// checkUnique refuses a scheduler whose name or space another scheduler
// of the member table (which Join filled) already holds: their chunks or
// sessions would share numbers.
func checkUnique(node *cluster.Node, name string, space ident.Space) error {
	for _, m := range node.Members() {
		if m.Name == name && m.Gossip != node.GossipAddr() {
			return fmt.Errorf("scheduler name %s is taken in the cluster (by %s)", name, m.Gossip)
		}
		if m.Name != name && m.Meta.Role == cluster.RoleScheduler && ident.Space(m.Meta.Space) == space {
			return fmt.Errorf("scheduler space %v is taken in the cluster (by %s): start it again to draw another", space, m.Name)
		}
	}
	return nil
}

// Name is the scheduler's name in the cluster.
func (s *Scheduler) Name() string { return s.cfg.Name }

// Space is the scheduler's share of the cluster's chunk, job and session
// numbers: its engine numbers chunks and sessions in it (engine.SetSpace).
func (s *Scheduler) Space() ident.Space { return s.space }

// newScheduler returns a scheduler of cfg, with cfg's defaults set, that
// knows no worker yet and numbers its jobs in space.
func newScheduler(cfg Config, space ident.Space) *Scheduler {
	if cfg.Name == "" {
		cfg.Name = "scheduler"
	}
	if cfg.MaxChunk <= 0 {
		cfg.MaxChunk = 16 << 30
	}
	if cfg.NoWorkerWait <= 0 {
		cfg.NoWorkerWait = 30 * time.Second
	}
	if cfg.CancelWait <= 0 {
		cfg.CancelWait = time.Second
	}
	if cfg.Depth == 0 {
		cfg.Depth = 32
	}
	if cfg.UnitOps == 0 {
		cfg.UnitOps = 256
	}
	s := &Scheduler{cfg: cfg, workers: make(map[string]*remoteWorker), jobs: make(map[uint64]*mailbox),
		copying: make(map[uint64]bool), status: make(map[uint64]chan string), pool: wire.NewPool(cfg.MaxChunk, cfg.SecretKey), born: time.Now()}
	s.space, s.nextJob = space, space.Start(rand.Uint64)
	s.offered = make(map[string]bool)
	s.dir = custody.NewDirectory(&s.dout)
	s.dir.OfferLife = int64(claimWithin)
	s.dir.Expect(0, expected(cfg.Expect, cfg.ExpectUploads))
	s.ctx, s.stop = context.WithCancel(context.Background())
	return s
}

// GossipAddr is the address workers join the cluster through ("" for a
// scheduler of NewLocal).
func (s *Scheduler) GossipAddr() string {
	if s.node == nil {
		return ""
	}
	return s.node.GossipAddr()
}

// Members returns the cluster's member table (nil for a scheduler of
// NewLocal).
func (s *Scheduler) Members() []cluster.Member {
	if s.node == nil {
		return nil
	}
	return s.node.Members()
}

// localWorker returns the in-process worker called name, or nil.
func (s *Scheduler) localWorker(name string) *worker.Worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.workers[name]; ok {
		return w.local
	}
	return nil
}

// Close leaves the cluster and closes the connections to the workers. Jobs
// still running fail.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	var err error
	if s.node != nil {
		err = s.node.Leave(time.Second)
	}
	s.mu.Lock()
	var local []*worker.Worker
	for _, w := range s.workers {
		if w.cc != nil {
			w.cc.Close()
		}
		if w.local != nil {
			local = append(local, w.local)
		}
	}
	s.mu.Unlock()
	for _, w := range local {
		w.Close()
	}
	s.wg.Wait()
	s.pool.Close()
	return err
}

// watch follows the member table, connecting to workers that join and
// dropping those that leave.
func (s *Scheduler) watch() {
	defer s.wg.Done()
	for {
		ch := s.node.Changed()
		alive := map[string]bool{}
		state := map[string]cluster.State{}
		for _, m := range s.node.Members() {
			state[m.Name] = m.State
			if m.Meta.Role != cluster.RoleWorker || m.State != cluster.Alive || m.Meta.Addr == "" {
				continue
			}
			alive[m.Name] = true
			s.mu.Lock()
			if _, ok := s.workers[m.Name]; !ok && !s.closed {
				w := &remoteWorker{name: m.Name, addr: m.Meta.Addr, slots: max(m.Meta.Slots, 1)}
				s.workers[m.Name] = w
				s.wg.Add(1)
				go s.connect(w)
			}
			s.mu.Unlock()
		}
		s.mu.Lock()
		var gone []*remoteWorker
		for name, w := range s.workers {
			if !alive[name] {
				gone = append(gone, w)
			}
		}
		s.mu.Unlock()
		for _, w := range gone {
			why := "left the cluster"
			if state[w.name] == cluster.Failed {
				if s.vouch(w) {
					continue
				}
				why = "failed (the cluster's failure detector declared it dead)"
			}
			s.drop(w, why)
		}
		select {
		case <-ch:
		case <-time.After(time.Second):
			// Redial workers still alive whose connection dropped.
		case <-s.ctx.Done():
			return
		}
	}
}

// connect dials a worker's control service and reads its reports until the
// connection fails.
func (s *Scheduler) connect(w *remoteWorker) {
	defer s.wg.Done()
	if len(s.cfg.SecretKey) == 0 {
		// Without a key, the kernel's word on who runs the worker is
		// the only proof: another user's worker would be given this
		// user's chunks (issue 20). (Such a worker refuses this
		// scheduler too, for the same reason, but without saying why.)
		if who, ok := s.otherUser(w.addr); !ok {
			why := fmt.Sprintf("was refused: it runs as %s, not as this scheduler's user, and the cluster has no key (a key, --key-file or $MARSFS_KEY, admits workers by key)", who)
			s.logf("worker %s %s", w.name, why)
			s.refuse(w, why)
			return
		}
	}
	var c net.Conn
	var err error
	for try := 0; try < 5; try++ {
		ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
		c, err = wire.Dial(ctx, w.addr, wire.ConnControl, s.cfg.SecretKey)
		cancel()
		if err == nil || s.ctx.Err() != nil {
			break
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		s.drop(w, "could not be reached: "+err.Error())
		return
	}
	s.serve(w, c)
}

// serve reads the reports of worker w on its control connection c until
// the connection fails, then forgets the worker.
func (s *Scheduler) serve(w *remoteWorker, c net.Conn) {
	cc := wire.NewConn(c)
	dec := wire.NewDecoder(bufio.NewReaderSize(c, 64<<10))
	// The worker's first message says what it holds for nobody (see
	// adopt.go): the jobs hear of the worker and of the chunks it brings
	// back together, and take these back before they send anyone work to
	// make them again.
	var held wire.Msg
	if err := dec.Next(&held); err != nil || held.Kind != wire.MsgHeld {
		cc.Close()
		s.drop(w, fmt.Sprintf("did not say what it holds on connecting (%v)", err))
		return
	}
	held.IDs, held.Sizes = slices.Clone(held.IDs), slices.Clone(held.Sizes)
	s.mu.Lock()
	if s.closed || s.workers[w.name] != w {
		s.mu.Unlock()
		cc.Close()
		return
	}
	w.cc = cc
	s.dir.WorkerUp(w.name) // an upload left with one copy gets its second
	up := s.takeOut()
	for _, mb := range s.jobs {
		in := []input{{up: true, worker: w.name, slots: w.slots}}
		if len(held.IDs) > 0 {
			in = append(in, input{worker: w.name, msg: held})
		}
		mb.putAll(in)
	}
	s.mu.Unlock()
	s.carry(up)
	if len(held.IDs) > 0 {
		s.adoptHeld(w, cc, &held)
	}
	s.mu.Lock()
	s.offered[w.name] = true
	s.notify()
	s.mu.Unlock()
	// The reports of one frame go to their jobs together, so that a job
	// takes them in one go.
	var mb *mailbox
	var batch []input
	var job uint64 // the job of the last report, if known
	var known, ok bool
	var to *mailbox // job's mailbox, if ok
	for {
		var m wire.Msg
		if err := dec.Next(&m); err != nil {
			break
		}
		switch m.Kind {
		case wire.MsgStatusReply:
			s.mu.Lock()
			if ch, ok := s.status[m.Seq]; ok {
				ch <- m.Text
				delete(s.status, m.Seq)
			}
			s.mu.Unlock()
		case wire.MsgHeld:
			// Chunks orphaned since the connection opened (another
			// connection of the worker broke): kept chunks only.
			s.adoptHeld(w, cc, &m)
		case wire.MsgFenced:
			// A free or claim of a session another scheduler holds
			// now at a later epoch: nothing was done, and the fence
			// (cmd/marsfs fence.go) gives the session up once it
			// hears of the move.
			s.logf("worker %s: %s", w.name, m.Err)
			s.mu.Lock()
			s.fencedFrees.Add(1)
			s.notify()
			s.mu.Unlock()
		case wire.MsgLeaving:
			s.mu.Lock()
			w.leaving = true
			s.dir.WorkerLeaving(w.name)
			if !s.closed {
				s.wg.Add(1)
				go s.handOff(w, cc)
			}
			s.mu.Unlock()
		default:
			// The job of the frame's last report is looked up once a frame.
			if !known || m.Job != job {
				s.mu.Lock()
				to, ok = s.jobs[m.Job]
				s.mu.Unlock()
				job, known = m.Job, true
			}
			switch {
			case ok:
				if to != mb && len(batch) > 0 {
					if !mb.putAll(batch) {
						s.freeLate(batch)
					}
					batch = batch[:0]
				}
				mb = to
				batch = append(batch, input{worker: w.name, msg: m})
			case m.Kind == wire.MsgDone:
				// The job is over: nobody will use or free this chunk.
				cc.Send(&wire.Msg{Kind: wire.MsgFree, IDs: []uint64{m.ID}})
			}
		}
		if !dec.Buffered() {
			known = false
			if len(batch) > 0 {
				if !mb.putAll(batch) {
					s.freeLate(batch)
				}
				batch = batch[:0]
			}
		}
	}
	if len(batch) > 0 && !mb.putAll(batch) { // what came before a malformed message
		s.freeLate(batch)
	}
	s.drop(w, "lost its connection (it died, or the network failed)")
}

// otherUser asks the kernel who owns the worker's socket at addr, on a
// TCP connection opened for nothing else: it reports false, and who, when
// that is another user than this process's.
func (s *Scheduler) otherUser(addr string) (string, bool) {
	ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", true // unreachable: the dial that follows says so
	}
	defer c.Close()
	return wire.PeerUser(c), !wire.OtherUser(c)
}

// refuse forgets worker w, which may not work for this scheduler, and
// keeps it from being dialed again while the member table lists it.
func (s *Scheduler) refuse(w *remoteWorker, why string) {
	s.mu.Lock()
	w.refused = why
	s.mu.Unlock()
}

// drop forgets a worker: its jobs learn it is down (why) and its chunks are
// gone.
func (s *Scheduler) drop(w *remoteWorker, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.workers[w.name] != w {
		return
	}
	delete(s.workers, w.name)
	if w.cc != nil {
		s.workersLost.Add(1)
		w.cc.Close()
		for _, mb := range s.jobs {
			mb.put(input{down: true, worker: w.name, why: why})
		}
	}
	s.loseCopies(w.name)
}

// vouchWait is how long a worker the failure detector declared dead has
// to answer on its connection; vouchFor is how long its answer keeps it
// before it is asked again, while the detector still says dead.
const (
	vouchWait = 3 * time.Second
	vouchFor  = 5 * time.Second
)

// vouch reports whether worker w, which the failure detector declared
// dead, is kept for now: it is asked on its connection (a status request)
// and dropped only if it does not answer within vouchWait. The detector
// declares a process dead after a second or a few of silence on UDP, which
// a process starved of CPU (every core busy with kernels) can keep, and
// dropping a live worker loses all its chunks, which are then computed
// again. A paused or cut-off worker does not answer and goes as before,
// vouchWait later; one that crashed has already gone with its connection.
func (s *Scheduler) vouch(w *remoteWorker) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.cc == nil || s.closed || s.workers[w.name] != w {
		return false
	}
	if w.probing || !w.vouched.IsZero() && time.Since(w.vouched) < vouchFor {
		return true
	}
	w.probing = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_, ok := s.workerStatus(w, vouchWait)
		s.mu.Lock()
		w.probing = false
		if ok {
			w.vouched = time.Now()
		}
		s.mu.Unlock()
		if !ok {
			s.drop(w, fmt.Sprintf("failed (the cluster's failure detector declared it dead, and it did not answer on its connection within %v)", vouchWait))
			return
		}
		s.logf("worker %s: the failure detector declared it dead, but it answers on its connection: kept", w.name)
	}()
	return true
}

// Run implements Runner.
func (s *Scheduler) Run(ctx context.Context, job *core.Job) error {
	if len(job.IDs) != len(job.Graph.Ops) {
		return fmt.Errorf("run: %d chunk IDs for %d ops", len(job.IDs), len(job.Graph.Ops))
	}
	mb := newMailbox()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("scheduler closed")
	}
	s.nextJob++
	jobID := s.nextJob
	s.jobs[jobID] = mb
	s.notify()
	var ups []input
	for _, w := range s.workers {
		if w.cc != nil {
			ups = append(ups, input{up: true, worker: w.name, slots: w.slots})
		}
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.jobs, jobID)
		s.mu.Unlock()
		// Chunks reported after the job ended are nobody's: free them,
		// and have a reader that looked the job up before it ended free
		// what it brings after this (putAll refuses it).
		s.freeLate(mb.close())
	}()

	// Events are stamped with the time their input was taken.
	var now time.Time
	var observe func(core.Event)
	evs := &eventBatch{job: job}
	if job.Observe != nil || job.ObserveAll != nil {
		observe = func(ev core.Event) {
			ev.At = now
			evs.add(ev)
		}
	}
	defer evs.flush()
	machine := core.New(job.Graph, job.IDs, job.Keep, core.Options{MaxAttempts: s.cfg.MaxAttempts, Stored: s.locate, Depth: s.cfg.Depth, Planned: job.Plan, Order: job.Order,
		UnitOps: s.cfg.UnitOps, UnitCost: s.cfg.UnitCost, Observe: observe})
	now = time.Now()
	sort.Slice(ups, func(i, j int) bool { return ups[i].worker < ups[j].worker })
	for _, in := range ups {
		s.apply(jobID, job, mb, machine.Step(core.Input{Kind: core.InWorkerUp, Worker: in.worker, Slots: in.slots}))
	}
	s.apply(jobID, job, mb, machine.Step(core.Input{Kind: core.InStart}))
	evs.flush()

	var abandon <-chan time.Time
	var outs []core.Output
	var keyOf map[uint64]int // the ops by chunk ID, made when a worker comes back
	cancelled := false
	// A job with no worker to run it waits NoWorkerWait for one, then
	// fails: never a graph RUNNING for ever with nobody to run it.
	var noWorker <-chan time.Time
	var alone time.Time // since when the job has had no worker
	for {
		evs.flush() // what the last step gave, before the job's record is looked at
		if done, _ := machine.Done(); done {
			break
		}
		switch {
		case machine.Workers() > 0 || cancelled:
			if noWorker != nil {
				noWorker = nil
				evs.note(core.Event{At: time.Now(), Err: "a worker is connected again: the graph goes on"})
				if job.Waiting != nil {
					job.Waiting("")
				}
			}
		case noWorker == nil:
			alone = time.Now()
			noWorker = time.After(s.cfg.NoWorkerWait)
			why := fmt.Sprintf("for a worker: none connected since %s; the graph fails at %s unless one joins",
				alone.UTC().Format("15:04:05"), alone.Add(s.cfg.NoWorkerWait).UTC().Format("15:04:05"))
			evs.note(core.Event{At: alone, Err: "waiting " + why})
			if job.Waiting != nil {
				job.Waiting(why)
			}
		}
		var stop <-chan struct{}
		now = time.Now()
		if !cancelled {
			stop = ctx.Done()
			if s.ctx.Err() != nil {
				cancelled = true
				s.apply(jobID, job, mb, machine.Step(core.Input{Kind: core.InCancel}))
				abandon = time.After(s.cfg.CancelWait)
				continue
			}
		}
		select {
		case <-mb.wake:
			now = time.Now()
			// What the core answers to all the inputs taken goes out
			// together: a message a worker, not one an input.
			outs = outs[:0]
			machine.Step(core.Input{Kind: core.InHold})
			ins := mb.take()
			for i := range ins {
				if ins[i].note != "" {
					evs.note(core.Event{At: now, Err: ins[i].note})
					continue
				}
				if ins[i].msg.Kind == wire.MsgHeld {
					evs.flush() // adoptInJob notes what it takes back
					outs = s.adoptInJob(job, machine, &keyOf, &ins[i], now, outs)
					continue
				}
				if ci, ok := coreInput(&ins[i]); ok {
					outs = append(outs, machine.Step(ci))
					if ins[i].up || ins[i].down {
						evs.flush()
						noteWorker(job, &ins[i], now)
					}
				}
			}
			outs = append(outs, machine.Step(core.Input{Kind: core.InDispatch}))
			evs.flush()
			s.apply(jobID, job, mb, outs...)
			clear(outs)
		case <-stop:
			now = time.Now()
			cancelled = true
			s.apply(jobID, job, mb, machine.Step(core.Input{Kind: core.InCancel}))
			abandon = time.After(s.cfg.CancelWait)
		case <-s.ctx.Done():
			// The scheduler closes: handled at the top of the loop.
		case <-abandon:
			now = time.Now()
			s.apply(jobID, job, mb, machine.Step(core.Input{Kind: core.InAbandon}))
		case <-noWorker:
			now = time.Now()
			cancelled = true
			why := fmt.Sprintf("no worker to run the graph: none has been connected for %v (every worker left or died, or none joined)", now.Sub(alone).Round(10*time.Millisecond))
			s.apply(jobID, job, mb, machine.Step(core.Input{Kind: core.InFail, Err: why}))
			abandon = time.After(s.cfg.CancelWait)
		}
	}
	// The job's last frees go now: whoever ran it may look at the
	// workers next.
	s.mu.Lock()
	for _, w := range s.workers {
		if w.cc != nil {
			w.cc.Flush()
		}
	}
	s.mu.Unlock()
	_, err := machine.Done()
	if err == nil {
		s.mu.Lock()
		for k, id := range job.IDs {
			if job.Keep[id] && job.Graph.Ops[k].Stored == 0 {
				if loc, ok := machine.Holder(k); ok {
					// Made again, if it was lost; lost, if its worker
					// went since.
					s.dir.Place(0, custody.Chunk{ID: id, NBytes: loc.NBytes, Workers: []string{loc.Worker}})
				}
			}
		}
		s.notify()
		out := s.takeOut()
		s.mu.Unlock()
		s.carry(out)
		return nil
	}
	if errors.Is(err, core.ErrCancelled) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errors.New("scheduler closed")
	}
	return err
}

// Announce tells every running job of something that happened to the
// cluster (up started a worker again in place of one that died): the
// graphs' events show it as a note.
func (s *Scheduler) Announce(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, mb := range s.jobs {
		mb.put(input{note: text})
	}
}

// note gives the job's observer ev as a note about the job (see
// core.NoteKey).
func note(job *core.Job, ev core.Event) {
	ev.Key = core.NoteKey
	switch {
	case job.Observe != nil:
		job.Observe(ev)
	case job.ObserveAll != nil:
		job.ObserveAll([]core.Event{ev})
	}
}

// noteWorker notes a worker's coming or going in the job's events: a
// graph's events say why its operands went back to be run again.
func noteWorker(job *core.Job, in *input, now time.Time) {
	switch {
	case in.up:
		note(job, core.Event{At: now, Worker: in.worker, Err: fmt.Sprintf("worker %s joined (%d slots)", in.worker, in.slots)})
	case in.down:
		why := in.why
		if why == "" {
			why = "left"
		}
		note(job, core.Event{At: now, Worker: in.worker, Err: fmt.Sprintf("worker %s %s", in.worker, why)})
	}
}

// coreInput is what a worker's report, or its coming or going, tells the
// job's Core.
func coreInput(in *input) (core.Input, bool) {
	switch {
	case in.up:
		return core.Input{Kind: core.InWorkerUp, Worker: in.worker, Slots: in.slots}, true
	case in.down:
		return core.Input{Kind: core.InWorkerDown, Worker: in.worker}, true
	}
	m := &in.msg
	ci := core.Input{Worker: in.worker, Key: m.Key, Attempt: m.Attempt}
	switch m.Kind {
	case wire.MsgStarted:
		ci.Kind, ci.Timing = core.InStarted, &m.Timing
	case wire.MsgDone:
		m.Timing.Spilled = m.Spilled
		ci.Kind, ci.NBytes, ci.Spilled, ci.Timing = core.InFinished, m.NBytes, m.Spilled, &m.Timing
	case wire.MsgFailed:
		ci.Kind, ci.Err = core.InFailed, m.Err
		if m.Final {
			ci.Kind = core.InFailedFinal
		} else if m.Peer != "" {
			ci.Kind, ci.Peer = core.InFailedFetch, m.Peer
		}
	case wire.MsgCancelled:
		ci.Kind = core.InCancelDone
	default:
		return ci, false
	}
	return ci, true
}

// apply carries out the core's instructions for job jobID, the outputs in
// order. Each worker gets what is for it in one batch, in the order the
// core gave it: frees and cancels before the runs of each output.
func (s *Scheduler) apply(jobID uint64, job *core.Job, mb *mailbox, outs ...core.Output) {
	type batch struct {
		worker string
		cc     *wire.Conn
		ms     []*wire.Msg
		frees  int      // IDs to free
		ids    []uint64 // the IDs to free so far
		first  int      // the first of ids in the last free message
		runsOf int      // 1 + the index of the output whose runs ms has last
		urgent bool     // ms has more than frees
	}
	var batches []*batch // in the order the workers first appear
	of := func(name string) *batch {
		for _, b := range batches {
			if b.worker == name {
				return b
			}
		}
		b := &batch{worker: name}
		b.cc, _ = s.conn(name)
		batches = append(batches, b)
		return b
	}
	addrs := map[string]string{}
	addr := func(name string) string {
		a, ok := addrs[name]
		if !ok {
			_, a = s.conn(name)
			addrs[name] = a
		}
		return a
	}
	// The IDs a worker is to free are cut from one slab a worker: its
	// frees in a row go in one message.
	for _, out := range outs {
		for _, f := range out.Free {
			of(f.Worker).frees++
		}
	}
	for _, b := range batches {
		b.ids = make([]uint64, 0, b.frees)
	}
	runs := 0
	for _, out := range outs {
		runs += len(out.Run)
	}
	if runs > 0 {
		s.dispatched.Add(uint64(runs))
	}
	for oi, out := range outs {
		for _, f := range out.Free {
			if job.Keep[f.ID] && s.holds(f.ID, f.Worker) {
				continue // taken back by the directory meanwhile (custody.Directory.Holds)
			}
			b := of(f.Worker)
			b.ids = append(b.ids, f.ID) // within its capacity
			if n := len(b.ms); n > 0 && b.ms[n-1].Kind == wire.MsgFree {
				b.ms[n-1].IDs = b.ids[b.first:len(b.ids):len(b.ids)]
			} else {
				b.first = len(b.ids) - 1
				b.ms = append(b.ms, &wire.Msg{Kind: wire.MsgFree, Session: job.Session, Epoch: job.Epoch, IDs: b.ids[b.first:len(b.ids):len(b.ids)]})
			}
		}
		for _, c := range out.Cancel {
			b := of(c.Worker)
			b.urgent = true
			b.ms = append(b.ms, &wire.Msg{Kind: wire.MsgCancel, Job: jobID, Key: c.Key, Attempt: c.Attempt})
		}
		// A worker's runs go as one message, which the encoder expands.
		for _, r := range out.Run {
			b := of(r.Worker)
			if b.runsOf != oi+1 {
				b.runsOf, b.urgent = oi+1, true
				b.ms = append(b.ms, &wire.Msg{Kind: wire.MsgSubmit, Runs: &wire.RunBatch{Job: jobID, Session: job.Session, Epoch: job.Epoch, Worker: r.Worker, Runs: out.Run,
					G: job.Graph, Ids: job.IDs, Addrs: addrs}})
			}
			for _, in := range r.Inputs {
				addr(in.Worker)
			}
		}
	}
	for _, b := range batches {
		err := errors.New("no connection")
		if b.cc != nil {
			// Frees alone are not urgent: they wait for the worker's
			// next frame, or a millisecond (see wire.Conn.SendSoon).
			if !b.urgent {
				err = b.cc.SendSoon(b.ms...)
			} else {
				err = b.cc.SendAll(b.ms)
			}
		}
		if err == nil {
			continue
		}
		for _, m := range b.ms {
			if m.Runs == nil {
				continue
			}
			for _, r := range m.Runs.Runs {
				if r.Worker == b.worker {
					mb.put(input{worker: b.worker, msg: wire.Msg{Kind: wire.MsgFailed, Job: jobID, Key: r.Key, Attempt: r.Attempt,
						Err: fmt.Sprintf("submit to %s: %v", b.worker, err)}})
				}
			}
		}
	}
}

// conn returns the control connection and the address of a worker.
func (s *Scheduler) conn(name string) (*wire.Conn, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.workers[name]
	if !ok {
		return nil, ""
	}
	return w.cc, w.addr
}

func (s *Scheduler) locate(id uint64) (core.Location, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.dir.Chunk(id)
	if !ok {
		return core.Location{}, false
	}
	return core.Location{ID: id, Worker: c.Workers[0], NBytes: c.NBytes}, true
}

// Fetch implements Runner: it reads the chunk from the worker holding it.
func (s *Scheduler) Fetch(ctx context.Context, id uint64) (*tensor.Array, func(), error) {
	loc, ok := s.locate(id)
	if !ok {
		return nil, nil, fmt.Errorf("no chunk %d", id)
	}
	if lw := s.localWorker(loc.Worker); lw != nil {
		if p, ok := lw.Store().(worker.PinStore); ok {
			if a, release, ok := p.Pin(id); ok {
				return a, release, nil
			}
		} else if a, ok := lw.Store().Get(id); ok {
			return a, func() {}, nil
		}
		return nil, nil, fmt.Errorf("worker %s holds no chunk %d", loc.Worker, id)
	}
	_, addr := s.conn(loc.Worker)
	if addr == "" {
		return nil, nil, fmt.Errorf("chunk %d: worker %s is gone", id, loc.Worker)
	}
	if a, release, ok := s.fetchLocal(ctx, loc, addr); ok {
		return a, release, nil
	}
	a, err := s.pool.Fetch(ctx, addr, id)
	if err != nil {
		return nil, nil, fmt.Errorf("fetch chunk %d from %s: %w", id, loc.Worker, err)
	}
	return a, func() {}, nil
}

// Changed returns a channel closed at the next change of the chunk
// directory or of the workers and jobs: a kept chunk lost with its worker,
// taken back, claimed or freed, a worker's offer heard (which is when its
// connection is up), a worker dropped, a job begun. Take it, check the
// state, then wait on it: no change between the two is missed.
func (s *Scheduler) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// notify wakes the waiters of Changed. s.mu is held.
func (s *Scheduler) notify() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// holds says whether the directory places chunk id on worker w.
func (s *Scheduler) holds(id uint64, w string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir.Holds(id, w)
}

// Where implements Runner.
func (s *Scheduler) Where(id uint64) string {
	loc, _ := s.locate(id)
	return loc.Worker
}

// Free implements Runner: the workers holding the chunks drop them.
func (s *Scheduler) Free(ids []uint64) { s.FreeFor(0, 0, ids) }

// FreeFor is Free for session sess, held here at epoch: a worker that has
// seen a later epoch of the session (another scheduler took it over)
// refuses the free, and keeps the chunks for their new home (see
// worker.State's fence). This scheduler forgets them all the same.
func (s *Scheduler) FreeFor(sess int, epoch uint64, ids []uint64) {
	s.mu.Lock()
	s.dir.Drop(sess, custody.Epoch(epoch), ids)
	s.notify()
	out := s.takeOut()
	s.mu.Unlock()
	s.carry(out)
}

// Workers lists the workers of the member table, by name.
func (s *Scheduler) Workers() []WorkerInfo {
	var out []WorkerInfo
	if s.node == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, name := range core.SortedKeys(s.workers) {
			w := s.workers[name]
			out = append(out, WorkerInfo{Name: name, Slots: w.slots, PID: os.Getpid(), State: "alive", Connected: w.cc != nil})
		}
		return out
	}
	for _, m := range s.node.Members() {
		if m.Meta.Role != cluster.RoleWorker {
			continue
		}
		cc, _ := s.conn(m.Name)
		out = append(out, WorkerInfo{Name: m.Name, Addr: m.Meta.Addr, Gossip: m.Gossip, Slots: m.Meta.Slots,
			PID: m.Meta.PID, State: m.State.String(), Connected: cc != nil})
	}
	return out
}

// WaitWorkers waits until n workers are connected or ctx is done.
func (s *Scheduler) WaitWorkers(ctx context.Context, n int) error {
	for {
		var ch <-chan struct{}
		if s.node != nil {
			ch = s.node.Changed()
		}
		connected := s.Changed() // a connection up is a change too
		k := 0
		for _, w := range s.Workers() {
			if w.Connected {
				k++
			}
		}
		if k >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d workers connected: %w", k, n, ctx.Err())
		case <-ch:
		case <-connected:
		}
	}
}

// WorkerStatus asks a worker for its status text ("key value" lines).
func (s *Scheduler) WorkerStatus(name string) (string, bool) {
	s.mu.Lock()
	w, ok := s.workers[name]
	if ok && w.refused != "" {
		s.mu.Unlock()
		return "refused: the worker " + w.refused + "\n", true
	}
	s.mu.Unlock()
	if !ok {
		return "", false
	}
	return s.workerStatus(w, 2*time.Second)
}

// workerStatus asks worker w for its status on its connection, and waits
// for the answer at most wait.
func (s *Scheduler) workerStatus(w *remoteWorker, wait time.Duration) (string, bool) {
	s.mu.Lock()
	if w.cc == nil {
		s.mu.Unlock()
		return "", false
	}
	s.seq++
	seq, cc := s.seq, w.cc
	ch := make(chan string, 1)
	s.status[seq] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.status, seq)
		s.mu.Unlock()
	}()
	if cc.Send(&wire.Msg{Kind: wire.MsgStatus, Seq: seq}) != nil {
		return "", false
	}
	select {
	case text := <-ch:
		return text, true
	case <-time.After(wait):
		return "", false
	case <-s.ctx.Done():
		return "", false
	}
}

// fetchLocal reads chunk loc.ID by mapping it (see mappedChunks), and
// returns what lets it go.
func (s *Scheduler) fetchLocal(ctx context.Context, loc core.Location, addr string) (*tensor.Array, func(), bool) {
	if s.cfg.NoMap {
		return nil, nil, false
	}
	return s.mapped.get(ctx, &s.remote, loc, addr, s.cfg.SecretKey)
}
