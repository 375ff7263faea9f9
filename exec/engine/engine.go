package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/ident"
	"marsfs/exec/journal"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// An Engine holds the sessions of a marsfs server and runs their graphs on
// a Runner. It is safe for concurrent use.
type Engine struct {
	runner Runner
	nextID atomic.Uint64 // global chunk IDs; 0 means "none"

	mu       sync.Mutex
	sessions map[int]*Session
	nextSess int
	closed   bool
	maxOps   int  // bound on liveOps; 0 for none
	data     Data // the data directory specs name files in; nil for none
	liveOps  int  // chunk operands tiled for the graphs not yet ended

	// The full records of ended graphs (history.go): how many a session
	// keeps, those kept in the order they ended, and their operands.
	history int
	full    []ended
	fullOps int
	stale   int // forgotten graphs still in full, about

	// Restores of lost chunks (lineage.go): one runs at a time (restoring
	// holds its turn); recomputing counts the chunks being made again;
	// background restores, started by State, end with ctx.
	restoring   chan struct{}
	recomputing map[uint64]int
	// unrestorable holds why the last restore of a chunk failed, until
	// one succeeds or the chunk is freed.
	unrestorable map[uint64]string
	restores     int
	recomputed   int // lost chunks made again by restores that succeeded
	unmade       int // lost chunks whose restore failed
	ctx          context.Context
	cancel       context.CancelFunc
	background   sync.WaitGroup

	// journal keeps the sessions for a scheduler started after this one
	// dies (journal.go); nil without --state-dir.
	journal *journal.Dir
	logf    func(format string, args ...any)
	fence   Fence // SetFence; nil for none (fence.go)
}

// New returns an engine that runs graphs on r.
func New(r Runner) *Engine {
	e := &Engine{runner: r, sessions: make(map[int]*Session), restoring: make(chan struct{}, 1), recomputing: make(map[uint64]int),
		unrestorable: make(map[uint64]string), logf: func(string, ...any) {}, history: DefaultHistory}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	return e
}

// OpCost is what the process running an engine holds live for a chunk
// operand of a running graph, at most: its tiled op, its fused op, the
// scheduler's state of it, its chunk's ID and location and the graph's
// record of it. sched's BenchmarkScale measured 246-248 bytes live at the
// heap's peak over graphs of 10^6 and 10^7 operands (326 at 10^5, where
// the fixed costs weigh), and 488-492 with the garbage not yet collected:
// the garbage is bounded apart, by the soft limit marsfs up sets on the
// scheduler's heap (twice the share --ops is cut from).
const OpCost = 256

// A Data is the data directory the files specs name are in, as each
// session's owner sees it.
type Data interface {
	// Session returns the directory as the owner of a session, the
	// identity ident, sees it (every path relative to it, none leading
	// out), and the owner the graph's file ops act as on the workers;
	// or why that identity may open no file.
	Session(ident string) (fs.FS, chunk.Owner, error)
}

// SetData gives the engine a data directory: the files specs name
// (from_npy) are opened in data, by paths relative to it, as the
// session's owner.
func (e *Engine) SetData(data Data) {
	e.mu.Lock()
	e.data = data
	e.mu.Unlock()
}

// SetMaxOps bounds the chunk operands that the graphs of all sessions,
// tiled and not yet ended, hold at once: a spec whose tiling would pass
// what is left is refused at submit, saying so with the numbers, and the
// process, with every session's tensors, lives on. 0 sets no bound.
func (e *Engine) SetMaxOps(n int) {
	e.mu.Lock()
	e.maxOps = n
	e.mu.Unlock()
}

// opsLeft is how many chunk operands a graph may tile now, 0 for no bound.
func (e *Engine) opsLeft() (left, held, bound int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.maxOps == 0 {
		return 0, e.liveOps, 0
	}
	return max(1, e.maxOps-e.liveOps), e.liveOps, e.maxOps
}

// holdOps counts n more chunk operands held (negative: given back).
func (e *Engine) holdOps(n int) {
	e.mu.Lock()
	e.liveOps += n
	e.mu.Unlock()
}

// LiveOps is the number of chunk operands the graphs not yet ended hold.
func (e *Engine) LiveOps() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.liveOps
}

// SetSpace makes the engine number its chunks and sessions in space, its
// scheduler's share of the cluster's numbers (see package exec/ident), so
// that no other scheduler's chunk or session can have the same number;
// chunks from a random start in it (ident.Space.Start). It must be called
// before the first session is made.
func (e *Engine) SetSpace(space ident.Space) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.sessions) > 0 || e.nextSess != 0 || e.nextID.Load() != 0 {
		panic("engine: SetSpace after use")
	}
	e.nextSess = space.FirstSession()
	e.nextID.Store(space.Start(rand.Uint64))
}

// NewSession creates a session owned by owner.
func (e *Engine) NewSession(owner string) (*Session, error) {
	return e.NewSessionAt(owner, e.NextSession())
}

// NextSession hands out a fresh session number of the engine's space
// (see SetSpace), for a session to be made here (NewSessionAt) or on the
// scheduler the ring makes its home.
func (e *Engine) NextSession() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextSess++
	return e.nextSess
}

// NewSessionAt creates session id, owned by owner: id comes from
// NextSession, here or on another scheduler that chose this one as its
// home.
func (e *Engine) NewSessionAt(owner string, id int) (*Session, error) {
	e.mu.Lock()
	d := e.journal
	e.mu.Unlock()
	var log *journal.Log
	if d != nil {
		var err error
		if log, err = d.Create(id, owner); err != nil {
			e.logf("session %d: not made: %v", id, err)
			return nil, notDurable(id, "new session", err)
		}
	}
	s, err := e.newSession(owner, id, log)
	if err != nil && log != nil {
		log.Close()
		d.Remove(id)
	}
	return s, err
}

// newSession makes session id, journaled in log (nil for none).
func (e *Engine) newSession(owner string, id int, log *journal.Log) (*Session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("engine closed")
	}
	if _, ok := e.sessions[id]; ok || id <= 0 {
		return nil, fmt.Errorf("session %d exists", id)
	}
	s := &Session{
		log:     log,
		engine:  e,
		id:      id,
		owner:   owner,
		tensors: make(map[string]*Tensor),
		refs:    make(map[uint64]int),
		lines:   make(map[uint64]*Lineage),
		opt:     fuse.Options{Fuse: true, FuseExpr: true},
	}
	e.sessions[s.id] = s
	return s, nil
}

// Session returns the open session with the given ID.
func (e *Engine) Session(id int) (*Session, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.sessions[id]
	return s, ok
}

// Sessions returns the open sessions in ID order.
func (e *Engine) Sessions() []*Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*Session, 0, len(e.sessions))
	for _, s := range e.sessions {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Close closes every session, cancelling their graphs and freeing their chunks.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	e.background.Wait()
	for _, s := range e.Sessions() {
		s.Close()
	}
}

func (e *Engine) drop(s *Session) {
	e.mu.Lock()
	delete(e.sessions, s.id)
	e.mu.Unlock()
	e.dropHistory(s)
}

// newIDs returns n fresh global chunk IDs.
func (e *Engine) newIDs(n int) uint64 {
	return e.nextID.Add(uint64(n)) - uint64(n) + 1
}

// ErrClosed is returned by the methods of a closed session.
var ErrClosed = errors.New("session closed")

// A Session is one client's workspace: its graphs and the tensors they keep.
type Session struct {
	engine *Engine
	id     int
	owner  string

	mu      sync.Mutex
	graphs  []*Graph
	full    []*Graph // the ended graphs kept in full, oldest first; under engine.mu (history.go)
	tensors map[string]*Tensor
	refs    map[uint64]int // kept chunk IDs → tensors holding them
	// lines holds the lineage of each kept chunk a graph made (not of
	// uploads): while the chunk is held, it can be made again.
	lines   map[uint64]*Lineage
	lastErr string
	closed  bool
	moved   *MovedError  // given up to the scheduler holding it now (fence.go)
	opt     fuse.Options // graph optimizations (SetOptions)
	log     *journal.Log // the session's journal; nil for none
}

// ID is the session's number in /sessions.
func (s *Session) ID() int { return s.id }

// Owner is the identity that created the session.
func (s *Session) Owner() string { return s.owner }

// Error returns the message of the session's last refused write.
func (s *Session) Error() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// SetError records msg as the session's last refused write.
func (s *Session) SetError(msg string) {
	s.mu.Lock()
	s.lastErr = msg
	s.mu.Unlock()
}

// Env returns a snapshot of the session's tensors (those whose graphs
// succeeded, and uploads), for a spec to name them.
func (s *Session) Env() spec.Env {
	env, _ := s.snapshot(false)
	return env
}

// Parse parses src as Submit would, against the session's tensors and the
// engine's data directory, without submitting it: what a writer of a spec
// learns of it before the whole is written.
func (s *Session) Parse(src string) (*spec.Graph, error) {
	data, _ := s.files()
	return lang.ParseData(src, s.Env(), data)
}

// files returns the data directory as the session's owner sees it, and
// the owner its file ops act as: a directory that refuses every path with
// the reason when the owner may open no file, nil when the engine has no
// data directory.
func (s *Session) files() (fs.FS, chunk.Owner) {
	s.engine.mu.Lock()
	d := s.engine.data
	s.engine.mu.Unlock()
	if d == nil {
		return nil, chunk.Owner{}
	}
	data, o, err := d.Session(s.owner)
	if err != nil {
		return refusedFS{err}, chunk.Owner{}
	}
	return data, o
}

// refusedFS is the data directory of an owner who may open no file.
type refusedFS struct{ err error }

func (r refusedFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: r.err}
}

// Prefix starts the check of a spec written a piece at a time, against the
// session's tensors now and its data directory as its owner sees it
// (lang.Prefix): each piece is built once, and Submit builds the whole
// text again.
func (s *Session) Prefix() *lang.Prefix {
	data, _ := s.files()
	left, _, _ := s.engine.opsLeft()
	return lang.NewPrefixWith(s.Env(), lang.Options{Data: data, MaxChunks: left})
}

// snapshot returns the session's tensors, and with lease a lease on all
// their chunks: a spec being submitted names the tensors of its snapshot,
// whose chunks must outlive the graphs that replace them until the new
// graph holds them itself.
func (s *Session) snapshot(lease bool) (spec.Env, *Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := make(spec.Env, len(s.tensors))
	var l *Lease
	if lease {
		l = &Lease{s: s}
	}
	for name, t := range s.tensors {
		env[name] = &t.tiled
		if lease {
			for _, id := range t.tiled.Keys {
				s.refs[id]++
			}
			l.ids = append(l.ids, t.tiled.Keys...)
		}
	}
	return env, l
}

// A Lease holds chunks of a session alive, whatever later graphs bind to
// the names of their tensors, until it is released: a reader of a tensor
// takes one so that it reads to the end the tensor it opened.
type Lease struct {
	s    *Session
	ids  []uint64
	once sync.Once
}

// Lease takes a lease on the tensor's chunks. It fails when they are gone
// already: the tensor was replaced, and nothing held it.
func (t *Tensor) Lease() (*Lease, error) {
	s := t.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.moved != nil {
		return nil, s.moved
	}
	if s.closed {
		return nil, ErrClosed
	}
	for _, id := range t.tiled.Keys {
		if s.refs[id] <= 0 {
			return nil, fmt.Errorf("tensor %s of graph %d was replaced", t.tiled.Name, t.graph)
		}
	}
	for _, id := range t.tiled.Keys {
		s.refs[id]++
	}
	return &Lease{s: s, ids: t.tiled.Keys}, nil
}

// Release ends the lease; the chunks no tensor, graph or other lease holds
// are freed. A second Release does nothing.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	l.once.Do(func() { l.s.release(l.ids) })
}

// Submit parses, tiles and starts src. A bad spec returns its error (a
// *syntax.Error), records it as the session's error, and creates no
// graph; an accepted one empties the session's error.
func (s *Session) Submit(src string) (*Graph, error) {
	g, err := s.submit(src)
	if err != nil {
		s.SetError(err.Error())
		return nil, err
	}
	s.SetError("") // the error file tells of the last refusal since
	return g, nil
}

func (s *Session) submit(src string) (*Graph, error) { return s.submitAt(0, src, nil) }

// resubmit runs again, as graph number id, a spec that was running when
// the scheduler before this one stopped (Restore), against env, the
// tensors it was submitted against.
func (s *Session) resubmit(id int, src string, env spec.Env) error {
	_, err := s.submitAt(id, src, env)
	return err
}

// submitAt submits src as a new graph against the session's tensors, or,
// with slot > 0, as graph number slot again against env.
func (s *Session) submitAt(slot int, src string, env spec.Env) (*Graph, error) {
	if s.isClosed() {
		return nil, s.closedErr()
	}
	var lease *Lease
	if env == nil {
		env, lease = s.snapshot(true)
	}
	// Start holds the chunks the graph reads; until then the lease does.
	defer lease.Release()
	data, owner := s.files()
	// A tensor may have at most as many chunks as the operands left:
	// the parser refuses more before it makes their sizes.
	left, held, bound := s.engine.opsLeft()
	tg, err := lang.ParseWith(src, env, lang.Options{Data: data, MaxChunks: left})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	opt := s.opt
	s.mu.Unlock()
	// What FuseExpr would fuse column by column is tiled fused.
	st, err := tile.StagesWith(tg, env, tile.Options{Fused: opt.FuseExpr, MaxOps: left, Owner: owner})
	if errors.Is(err, tile.ErrTooManyOps) {
		return nil, fmt.Errorf("the graph needs more than the %d chunk operands left of the %d this server holds at once (%d held by graphs running; each costs up to %d B): use larger chunks (chunks=), or wait for running graphs to end",
			left, bound, held, OpCost)
	}
	if err != nil {
		return nil, err
	}
	return s.Start(src, tg, fuse.Optimize(st.Graph, opt), Stages{first: st, opt: opt, held: len(st.Graph.Ops), inputs: inputsOf(env), slot: slot})
}

// Upload makes a tensor called name from a, chunked with the default
// chunking, replacing any tensor of that name.
func (s *Session) Upload(ctx context.Context, name string, a *tensor.Array) error {
	if err := a.Check(); err != nil {
		return err
	}
	chunks := spec.DefaultChunks(a.Shape, a.DType)
	u, err := s.BeginUpload(name, a.DType, a.Shape, chunks)
	if err != nil {
		return err
	}
	offs, grid := tensor.ChunkOffsets(chunks), tensor.GridShape(chunks)
	for k := range u.tiled.Keys {
		idx := tensor.Unravel(k, grid)
		shape := tensor.ChunkShape(chunks, grid, k)
		sel := make([]tensor.Slice, len(shape))
		for ax := range sel {
			sel[ax] = tensor.Slice{Start: offs[ax][idx[ax]], Step: 1, Len: shape[ax]}
		}
		c := tensor.NewArray(a.DType, shape)
		tensor.CopyStrided(c, make([]int, len(shape)), a, sel)
		if err := u.Put(ctx, k, c); err != nil {
			u.Abort()
			return err
		}
	}
	return u.Commit()
}

// CheckName reports why name cannot name a tensor, if it cannot.
func CheckName(name string) error { return checkName(name) }

// An Upload makes a tensor of a session from its chunks, put one by one
// as they arrive: the session holds none of the data, only where the
// chunks went. Until Commit the tensor has no name; Abort frees what was
// put.
type Upload struct {
	s     *Session
	tiled tensor.TiledTensor // Keys are the chunks' global IDs
	mu    sync.Mutex
	put   []bool
	n     int  // chunks put
	ended bool // committed or aborted
}

// BeginUpload starts the upload of a tensor called name, of dtype dt and
// the given shape, cut into chunks (a list of chunk sizes an axis).
func (s *Session) BeginUpload(name string, dt tensor.DType, shape []int, chunks [][]int) (*Upload, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, s.closedErr()
	}
	tt := tensor.TiledTensor{Name: name, Shape: shape, DType: dt, Chunks: chunks}
	for ax, cs := range chunks {
		sum := 0
		for _, c := range cs {
			sum += c
		}
		if ax >= len(shape) || sum != shape[ax] {
			return nil, fmt.Errorf("upload %s: chunks %v do not cut shape %v", name, chunks, shape)
		}
	}
	if len(chunks) != len(shape) {
		return nil, fmt.Errorf("upload %s: chunks %v do not cut shape %v", name, chunks, shape)
	}
	n := tensor.NumElements(tensor.GridShape(chunks))
	first := s.engine.newIDs(n)
	tt.Keys = make([]uint64, n)
	for k := range tt.Keys {
		tt.Keys[k] = first + uint64(k)
	}
	return &Upload{s: s, tiled: tt, put: make([]bool, n)}, nil
}

// Tiled describes the tensor being uploaded; Keys are its chunks' IDs.
func (u *Upload) Tiled() *tensor.TiledTensor { return &u.tiled }

// Put stores a as the chunk of grid index k (C order over the chunk grid)
// on a worker. a is not kept: the caller may reuse it once Put returns.
func (u *Upload) Put(ctx context.Context, k int, a *tensor.Array) error {
	grid := tensor.GridShape(u.tiled.Chunks)
	if k < 0 || k >= len(u.tiled.Keys) {
		return fmt.Errorf("upload %s: no chunk %d", u.tiled.Name, k)
	}
	if shape := tensor.ChunkShape(u.tiled.Chunks, grid, k); a.DType != u.tiled.DType || !slices.Equal(a.Shape, shape) {
		return fmt.Errorf("upload %s: chunk %d is %v%v, want %v%v", u.tiled.Name, k, a.DType, a.Shape, u.tiled.DType, shape)
	}
	u.mu.Lock()
	if u.ended || u.put[k] {
		u.mu.Unlock()
		return fmt.Errorf("upload %s: chunk %d put twice, or after the end", u.tiled.Name, k)
	}
	u.mu.Unlock()
	if err := u.s.engine.runner.Put(ctx, u.tiled.Keys[k], a); err != nil {
		return fmt.Errorf("upload %s: %w", u.tiled.Name, err)
	}
	u.mu.Lock()
	u.put[k] = true
	u.n++
	u.mu.Unlock()
	return nil
}

// Commit names the tensor, replacing any tensor of that name, once every
// chunk is put.
func (u *Upload) Commit() error {
	u.mu.Lock()
	if u.ended {
		u.mu.Unlock()
		return fmt.Errorf("upload %s has ended", u.tiled.Name)
	}
	if u.n != len(u.tiled.Keys) {
		u.mu.Unlock()
		u.Abort()
		return fmt.Errorf("upload %s: %d of %d chunks put", u.tiled.Name, u.n, len(u.tiled.Keys))
	}
	u.ended = true
	u.mu.Unlock()
	s := u.s
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.engine.free(s, u.tiled.Keys)
		return ErrClosed
	}
	t := &Tensor{session: s, tiled: u.tiled}
	if err := s.journalWrite("upload "+u.tiled.Name, journal.Record{Kind: journal.KindUpload, Tensor: s.journalTensor(t)}); err != nil {
		s.mu.Unlock()
		s.engine.free(s, u.tiled.Keys)
		return err
	}
	for _, id := range t.tiled.Keys {
		s.refs[id]++
	}
	var freed []uint64
	if old, ok := s.tensors[u.tiled.Name]; ok {
		freed = s.unref(old.tiled.Keys)
	}
	s.tensors[u.tiled.Name] = t
	s.mu.Unlock()
	s.engine.free(s, freed)
	return nil
}

// Abort frees the chunks put so far; the upload makes no tensor.
func (u *Upload) Abort() {
	u.mu.Lock()
	if u.ended {
		u.mu.Unlock()
		return
	}
	u.ended = true
	var ids []uint64
	for k, ok := range u.put {
		if ok {
			ids = append(ids, u.tiled.Keys[k])
		}
	}
	u.mu.Unlock()
	u.s.engine.free(u.s, ids)
}

func checkName(name string) error {
	if name == "" {
		return errors.New("empty tensor name")
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("bad tensor name %q: want a letter or _ then letters, digits or _", name)
		}
	}
	return nil
}

// Stages is how a graph tiled in stages goes on after its first: the stage
// that runs first (nil for a graph tiled at once) and the optimizations
// for the next.
type Stages struct {
	first *tile.Stage
	opt   fuse.Options
	held  int // chunk operands the first stage tiled, held until the graph ends
	// inputs names the tensors the spec was parsed against, for the
	// journal; slot, if not 0, is the number of a graph run again after a
	// restart.
	inputs map[string]uint64
	slot   int
}

// ids assigns global chunk IDs to the ops of cg: a stored op's chunk keeps
// its ID, every other op gets a fresh one.
func (e *Engine) ids(cg *chunk.Graph) []uint64 {
	ids := make([]uint64, len(cg.Ops))
	fresh := 0
	for _, op := range cg.Ops {
		if op.Stored == 0 {
			fresh++
		}
	}
	next := e.newIDs(fresh)
	for k, op := range cg.Ops {
		if op.Stored != 0 {
			ids[k] = op.Stored
		} else {
			ids[k] = next
			next++
		}
	}
	return ids
}

// keepSet holds the IDs of the chunks of cg's outputs.
func keepSet(cg *chunk.Graph, ids []uint64) map[uint64]bool {
	keep := make(map[uint64]bool)
	for _, o := range cg.Outputs {
		if chunk.IsSink(o.Name) {
			continue // a written file: nothing to keep
		}
		for _, k := range o.Keys {
			keep[ids[k]] = true
		}
	}
	return keep
}

// Start registers a graph for cg and runs it in the background; a graph
// tiled in stages runs its later stages after cg (see runStages).
func (s *Session) Start(src string, tg *spec.Graph, cg *chunk.Graph, sts Stages) (*Graph, error) {
	ids := s.engine.ids(cg)
	keep := keepSet(cg, ids)
	ctx, cancel := context.WithCancel(context.Background())
	g := newGraph(src, tg, cg, ids, cancel, sts.first)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		return nil, ErrClosed
	}
	if sts.slot > 0 {
		g.id = sts.slot
		s.graphs[g.id-1] = g // the graph rebuilt from the journal
		g.observe(core.Event{Key: core.NoteKey, At: time.Now(), Err: "running again: it was running when the scheduler before this one stopped"})
	} else {
		g.id = len(s.graphs) + 1
		// Under s.mu, so that records come in the order of graph numbers;
		// before the graph is the session's, so that one the journal
		// cannot record never runs.
		if err := s.journalWrite("submit", journal.Record{Kind: journal.KindSubmit, Graph: g.id, Spec: src, Inputs: sts.inputs}); err != nil {
			s.mu.Unlock()
			cancel()
			return nil, err
		}
		s.graphs = append(s.graphs, g)
	}
	// Hold the stored chunks this graph reads until it ends, so that a
	// concurrent replacement of their tensor cannot free them under it.
	var held []uint64
	for _, op := range cg.Ops {
		if op.Stored != 0 {
			s.refs[op.Stored]++
			held = append(held, op.Stored)
		}
	}
	s.mu.Unlock()
	s.engine.holdOps(sts.held)

	go func() {
		job := &core.Job{Graph: cg, IDs: ids, Keep: keep, Observe: g.observe, ObserveAll: g.observeAll, Plan: g.setPlacement, Waiting: g.setWaiting}
		job.Session, job.Epoch = s.fenceTag()
		err := s.restoreInputs(ctx, g, held)
		for try := 1; err == nil; try++ {
			err = s.engine.runner.Run(ctx, job)
			// A chunk of an earlier tensor lost while the graph ran fails
			// it (no op of the job makes it): it is made again from its
			// lineage, and the graph runs again.
			if err == nil || try == restoreTries || ctx.Err() != nil || !errors.Is(err, core.ErrStoredLost) && !s.lostAny(held) {
				break
			}
			g.rerun(fmt.Sprintf("chunks of earlier graphs it reads were lost while it ran (%v): they are made again and the graph runs again", err))
			s.waitLost(ctx, held)
			err = s.restoreInputs(ctx, g, held)
		}
		var kept []uint64
		if err == nil && sts.first != nil && !sts.first.Last() {
			kept, err = s.runStages(ctx, g, sts, cg, ids)
		}
		if err == nil {
			s.keep(g)
		}
		// Before the graph ends, so that a client who sees it ended sees
		// the chunks only its stages needed gone.
		s.freeStaged(g, kept, err == nil)
		// Recorded before it ends, so that whoever saw it end sees the
		// records past the bounds forgotten.
		s.recorded(g)
		// The operands are given back before it ends too, so that
		// whoever saw it end sees them free for the next graph.
		s.engine.holdOps(-sts.held)
		// Journaled before it ends, so that whoever saw it end finds
		// its end in the journal (a restart does not run it again).
		s.journalEnd(g, err)
		g.finish(err)
		s.release(held)
	}()
	return g, nil
}

// lostAny reports whether a chunk of ids is lost.
func (s *Session) lostAny(ids []uint64) bool {
	for _, id := range ids {
		if s.engine.runner.Where(id) == "" {
			return true
		}
	}
	return false
}

// A changeNotifier is a Runner that says when its chunk directory
// changes (sched.Scheduler): Changed's channel is closed at the next
// change.
type changeNotifier interface {
	Changed() <-chan struct{}
}

// lossWait bounds how long a graph that failed on a lost input waits for
// the runner to forget a chunk of ids (see waitLost).
const lossWait = time.Second

// waitLost waits, at most lossWait, for the runner to count a chunk of
// ids lost: a job that failed because a chunk it read was lost may hear
// of the loss (its worker's failed fetches) before the runner forgets the
// worker's chunks. It waits on the runner's changes, not a clock; a
// runner that tells none is not waited for.
func (s *Session) waitLost(ctx context.Context, ids []uint64) {
	cn, ok := s.engine.runner.(changeNotifier)
	if !ok {
		return
	}
	timer := time.NewTimer(lossWait)
	defer timer.Stop()
	for {
		changed := cn.Changed()
		if s.lostAny(ids) {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// restoreInputs makes the chunks of earlier tensors that graph g reads
// (held) and that were lost with their workers again, from their
// lineage, before g runs; g's events say so.
func (s *Session) restoreInputs(ctx context.Context, g *Graph, held []uint64) error {
	var lost []uint64
	for _, id := range held {
		if s.engine.runner.Where(id) == "" {
			lost = append(lost, id)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	g.observe(core.Event{Key: core.NoteKey, At: time.Now(), Err: fmt.Sprintf("recomputing %d %s of earlier graphs lost with their workers", len(lost), plural(len(lost), "chunk"))})
	if err := s.engine.restoreAll(ctx, lost, s.lineOf); err != nil {
		return err
	}
	g.observe(core.Event{Key: core.NoteKey, At: time.Now(), Err: fmt.Sprintf("recomputed %d lost %s", len(lost), plural(len(lost), "chunk"))})
	return nil
}

// runStages runs the stages of g after the first (cg, with chunk IDs
// ids), which has run: it fetches the probes, tiles the next stage with
// them, and runs it, until the last. It returns the IDs of the chunks the
// stages that ran kept (their outputs, and the chunks later stages read).
func (s *Session) runStages(ctx context.Context, g *Graph, sts Stages, cg *chunk.Graph, ids []uint64) ([]uint64, error) {
	var kept []uint64
	st := sts.first
	for {
		for _, o := range cg.Outputs {
			for _, k := range o.Keys {
				if cg.Ops[k].Stored == 0 {
					kept = append(kept, ids[k])
				}
			}
		}
		if st.Last() {
			return kept, nil
		}
		var keys [][]uint64
		for _, o := range cg.Outputs[st.Results:] {
			ks := make([]uint64, len(o.Keys))
			for i, k := range o.Keys {
				ks[i] = ids[k]
			}
			keys = append(keys, ks)
		}
		probes := make([]*tensor.Array, len(st.Probes))
		var releases releases
		for i, p := range st.Probes {
			a, release, err := s.engine.runner.Fetch(ctx, ids[cg.Outputs[p].Keys[0]])
			if err != nil {
				releases.run()
				return kept, fmt.Errorf("stage %d: %w", g.stage(), err)
			}
			releases = append(releases, release)
			probes[i] = a
		}
		next, err := g.next(st, keys, probes)
		releases.run()
		if err != nil {
			return kept, err
		}
		st, cg = next, fuse.Optimize(next.Graph, sts.opt)
		ids = s.engine.ids(cg)
		off := g.extend(cg, ids, st.Results)
		observe := func(ev core.Event) {
			if ev.Key != core.NoteKey {
				ev.Key += off
			}
			g.observe(ev)
		}
		observeAll := func(evs []core.Event) {
			for i := range evs {
				if evs[i].Key != core.NoteKey {
					evs[i].Key += off
				}
			}
			g.observeAll(evs)
		}
		job := &core.Job{Graph: cg, IDs: ids, Keep: keepSet(cg, ids), Observe: observe, ObserveAll: observeAll, Plan: g.addPlacement(off), Waiting: g.setWaiting}
		job.Session, job.Epoch = s.fenceTag()
		if err := s.runStage(ctx, g, job); err != nil {
			return kept, err
		}
	}
}

// runStage runs job, a stage of g after the first. A chunk it reads that
// was lost while it ran (made by an earlier stage, such as a sorted block
// whose ranges the sample sort's merges read, or by an earlier graph)
// fails it, as no op of the job makes it: the chunk is made again from
// the ops that made it (g's own, through a lineage of g's stages so far,
// or its tensor's), and the stage runs again, as Start does for the
// first.
func (s *Session) runStage(ctx context.Context, g *Graph, job *core.Job) error {
	var held []uint64
	for _, op := range job.Graph.Ops {
		if op.Stored != 0 {
			held = append(held, op.Stored)
		}
	}
	for try := 1; ; try++ {
		err := s.engine.runner.Run(ctx, job)
		if err == nil || try == restoreTries || ctx.Err() != nil || !errors.Is(err, core.ErrStoredLost) && !s.lostAny(held) {
			return err
		}
		g.rerun(fmt.Sprintf("chunks of earlier stages it reads were lost while stage %d ran (%v): they are made again and the stage runs again", g.stage(), err))
		s.waitLost(ctx, held)
		lin := stagesLineage(g, held, s.lineOf)
		lineOf := func(id uint64) *Lineage {
			if l := s.lineOf(id); l != nil {
				return l
			}
			return lin
		}
		if err := s.engine.restoreAll(ctx, held, lineOf); err != nil {
			return err
		}
	}
}

// stagesLineage is the lineage of the chunks of ids that g's stages made
// so far (those it has not made are left to parent).
func stagesLineage(g *Graph, ids []uint64, parent func(uint64) *Lineage) *Lineage {
	g.mu.Lock()
	defer g.mu.Unlock()
	want := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var keys []int
	for k, op := range g.chunks.Ops {
		if op.Stored == 0 && want[g.ids[k]] {
			keys = append(keys, k)
		}
	}
	return newLineage(g.chunks, g.ids, keys, parent)
}

// freeStaged frees the chunks the stages of g kept for the stages after
// them: all of them when the graph failed, and those that are not its
// outputs when it succeeded (its outputs are the session's now).
func (s *Session) freeStaged(g *Graph, kept []uint64, ok bool) {
	if len(kept) == 0 {
		return
	}
	out := make(map[uint64]bool)
	if ok {
		for _, o := range g.chunks.Outputs {
			if chunk.IsSink(o.Name) {
				continue // a written file's commit: freed
			}
			for _, k := range o.Keys {
				out[g.ids[k]] = true
			}
		}
	}
	var free []uint64
	for _, id := range kept {
		if !out[id] {
			free = append(free, id)
			out[id] = true // once
		}
	}
	s.engine.free(s, free)
}

// keep turns the outputs of a finished graph into session tensors.
func (s *Session) keep(g *Graph) {
	s.mu.Lock()
	var freed []uint64
	// The tensors the spec deleted (del a), as Drop does; before the
	// outputs, one of which may bind the name again.
	if g.spec != nil {
		for _, name := range g.spec.Drops {
			if t, ok := s.tensors[name]; ok {
				delete(s.tensors, name)
				s.journalNote(journal.Record{Kind: journal.KindDrop, Name: name}, true)
				freed = append(freed, s.unref(t.tiled.Keys)...)
			}
		}
	}
	var keys []int
	for _, o := range g.chunks.Outputs {
		if !chunk.IsSink(o.Name) {
			for _, k := range o.Keys {
				keys = append(keys, int(k))
			}
		}
	}
	lin := newLineage(g.chunks, g.ids, keys, func(id uint64) *Lineage { return s.lines[id] })
	for _, o := range g.chunks.Outputs {
		if chunk.IsSink(o.Name) {
			continue
		}
		t := &Tensor{session: s, tiled: o, graph: g.id, lin: lin}
		t.tiled.Keys = make([]uint64, len(o.Keys))
		for i, k := range o.Keys {
			t.tiled.Keys[i] = g.ids[k]
			s.refs[g.ids[k]]++
			s.lines[g.ids[k]] = lin
		}
		if old, ok := s.tensors[o.Name]; ok {
			freed = append(freed, s.unref(old.tiled.Keys)...)
		}
		s.tensors[o.Name] = t
		s.journalNote(journal.Record{Kind: journal.KindKeep, Tensor: s.journalTensor(t)}, false)
	}
	s.mu.Unlock()
	s.engine.free(s, freed)
}

// release drops the hold a graph had on the stored chunks it read.
func (s *Session) release(ids []uint64) {
	s.mu.Lock()
	freed := s.unref(ids)
	s.mu.Unlock()
	s.engine.free(s, freed)
}

// unref drops one reference to each of ids and returns those left with
// none. s.mu must be held.
func (s *Session) unref(ids []uint64) []uint64 {
	var freed []uint64
	for _, id := range ids {
		if _, held := s.refs[id]; !held {
			continue // the session closed and freed every chunk
		}
		if s.refs[id]--; s.refs[id] <= 0 {
			delete(s.refs, id)
			delete(s.lines, id)
			freed = append(freed, id)
		}
	}
	return freed
}

// Graphs returns the session's graphs, oldest first.
func (s *Session) Graphs() []*Graph {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Graph(nil), s.graphs...)
}

// Graph returns graph number id (1-based).
func (s *Session) Graph(id int) (*Graph, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 1 || id > len(s.graphs) {
		return nil, false
	}
	return s.graphs[id-1], true
}

// Tensors returns the names of the session's tensors, sorted.
func (s *Session) Tensors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.tensors))
	for n := range s.tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Pending returns, by name, the outputs of the session's graphs that have
// not ended, each with the last graph to make it: a tensor's name is there
// from the submit, before the graph that keeps it has run.
func (s *Session) Pending() map[string]*Graph {
	s.mu.Lock()
	graphs := append([]*Graph(nil), s.graphs...)
	s.mu.Unlock()
	out := map[string]*Graph{}
	for _, g := range graphs {
		if g.spec == nil {
			continue
		}
		select {
		case <-g.Done(): // ended: its outputs are kept, or not at all
			continue
		default:
		}
		for _, o := range g.spec.Outputs {
			out[o.Name] = g
		}
	}
	return out
}

// Tensor returns the session tensor called name.
func (s *Session) Tensor(name string) (*Tensor, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tensors[name]
	return t, ok
}

// ErrNoTensor is a name the session has no tensor of.
var ErrNoTensor = errors.New("no such tensor")

// Drop forgets the tensor called name. Its chunks are freed once no graph
// reading them runs and no reader holds a lease on them. A drop the
// journal cannot record is refused (*WriteError), the tensor kept.
func (s *Session) Drop(name string) error {
	s.mu.Lock()
	t, ok := s.tensors[name]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNoTensor, name)
	}
	if err := s.journalWrite("drop "+name, journal.Record{Kind: journal.KindDrop, Name: name}); err != nil {
		s.mu.Unlock()
		return err
	}
	delete(s.tensors, name)
	freed := s.unref(t.tiled.Keys)
	s.mu.Unlock()
	s.engine.free(s, freed)
	return nil
}

// Options returns the graph optimizations the session's next submissions
// use.
func (s *Session) Options() fuse.Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opt
}

// SetOptions sets the graph optimizations of the session's next
// submissions.
func (s *Session) SetOptions(opt fuse.Options) {
	s.mu.Lock()
	s.opt = opt
	s.mu.Unlock()
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close cancels the session's graphs, waits for them to end, and frees
// every chunk the session holds, cluster-wide. With a journal, the
// session's file is removed first: a close the journal cannot record
// (the removal fails) is refused (*WriteError), and the session goes on.
func (s *Session) Close() error {
	detached := s.engine.detached()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	if s.log != nil && !detached {
		if err := s.log.Remove(); err != nil {
			s.mu.Unlock()
			s.engine.logf("session %d: close refused: %v", s.id, err)
			return notDurable(s.id, "close", err)
		}
		s.log = nil
	}
	s.closed = true
	graphs := append([]*Graph(nil), s.graphs...)
	s.mu.Unlock()
	for _, g := range graphs {
		g.Cancel()
	}
	for _, g := range graphs {
		g.Wait(context.Background())
	}
	if detached {
		// The scheduler stops, the session stays in its journal: its
		// chunks stay on the workers for the next one to take back.
		s.mu.Lock()
		if s.log != nil {
			s.log.Close()
		}
		s.mu.Unlock()
		s.engine.drop(s)
		return nil
	}
	s.mu.Lock()
	ids := make([]uint64, 0, len(s.refs))
	for id := range s.refs {
		ids = append(ids, id)
	}
	s.refs = map[uint64]int{}
	s.lines = map[uint64]*Lineage{}
	s.tensors = map[string]*Tensor{}
	s.mu.Unlock()
	s.engine.free(s, ids)
	s.engine.drop(s)
	return nil
}
