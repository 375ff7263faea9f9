package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/journal"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// This file holds the engine's side of the scheduler's journal (package
// exec/journal, --state-dir): what each session does is written to its
// file as it happens, and an engine started on the files of one that
// died rebuilds the sessions from them (Restore).
//
// What is written, and when:
//   - a session made: its file, opened with its number and owner;
//   - a spec accepted: its text, its graph number and the tensor versions
//     it was parsed against (synced before Submit returns);
//   - a graph's end: the tensors it kept, with their chunk IDs, sizes and
//     workers, then its state (synced);
//   - an upload committed, a tensor dropped (synced);
//   - a session closed by its client: its file removed.
//
// Nothing a client waits on is acknowledged before it is durable: a
// submit, an upload, a drop and a close are journaled (synced) before
// they change the session, and one the journal cannot record (its disk
// full or failing) is refused with a *WriteError, the session as it was:
// a submit refused starts no graph, an upload refused names no tensor
// and frees its chunks, a drop or a close refused drops or closes
// nothing. What follows from an acknowledged write (a graph's end, the
// tensors it kept) is noted (journal.Log.Note): kept in the journal's
// state even when its write fails, and written with the next record that
// is, so that the session's journal goes on once there is room again.

// compactAt is the size past which a session's file is written again
// from its state, at a graph's end.
const compactAt = 4 << 20

// SetJournal makes the engine keep a journal of its sessions in d, and
// logs through logf what goes wrong with it. It must be called before the
// first session is made (and before Restore).
func (e *Engine) SetJournal(d *journal.Dir, logf func(format string, args ...any)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.journal, e.logf = d, logf
}

// A WriteError is a write to a session that was refused, with nothing of
// it done: Op says which ("submit", "upload x", "drop x", "close", "new
// session"), Err why: here, that the journal could not record it; any
// other reason a session must refuse a write before it changes anything
// (a home that has lost the session) is one too. Err wraps the system's
// errno where there is one (ENOSPC, EIO), which a file server answers the
// write with (fs: EIO where there is none).
type WriteError struct {
	Session int
	Op      string
	Err     error
}

func (e *WriteError) Error() string { return e.Op + " refused: " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// notDurable is the error of a write the journal could not record.
func notDurable(session int, op string, err error) *WriteError {
	return &WriteError{Session: session, Op: op, Err: fmt.Errorf("the state dir's journal could not record it, so it was not done: %w", err)}
}

// journalWrite writes r, synced, to the session's file, if it keeps one,
// before the write op it records changes anything: an error refuses op.
// s.mu is held, so that records come in the order things happened to the
// session.
func (s *Session) journalWrite(op string, r journal.Record) error {
	if s.moved != nil {
		return &WriteError{Session: s.id, Op: op, Err: s.moved}
	}
	if s.log == nil {
		return nil
	}
	// Not while another scheduler may hold the session (fence.go): the
	// fence answers from its own state, never waiting on s.mu.
	if err := s.engine.Serve(context.Background(), s.id); err != nil {
		s.engine.logf("session %d: %s refused: %v", s.id, op, err)
		return &WriteError{Session: s.id, Op: op, Err: err}
	}
	if err := s.log.Append(r, true); err != nil {
		s.engine.logf("session %d: %s refused: %v", s.id, op, err)
		return notDurable(s.id, op, err)
	}
	return nil
}

// journalNote writes r, which has happened already, to the session's
// file, if it keeps one; a write that fails is logged, and r reaches the
// file with the next write that succeeds. s.mu is held.
func (s *Session) journalNote(r journal.Record, sync bool) {
	if s.log == nil {
		return
	}
	if err := s.log.Note(r, sync); err != nil {
		s.engine.logf("session %d: journal: %v: until a later write succeeds, a restart finds the session without it", s.id, err)
	}
}

// journalTensor describes t for the journal; s.mu is held.
func (s *Session) journalTensor(t *Tensor) *journal.Tensor {
	tt := &t.tiled
	jt := &journal.Tensor{Name: tt.Name, DType: tt.DType.String(), Shape: slices.Clone(tt.Shape), Splits: tt.Chunks, Graph: t.graph}
	grid := tensor.GridShape(tt.Chunks)
	for k, id := range tt.Keys {
		c := journal.Chunk{ID: id, NBytes: int64(tensor.NumElements(tensor.ChunkShape(tt.Chunks, grid, k)) * tt.DType.Size())}
		if w := s.engine.runner.Where(id); w != "" {
			c.Workers = []string{w}
		}
		jt.Chunks = append(jt.Chunks, c)
	}
	return jt
}

// inputsOf names the tensor versions of env for a submit record.
func inputsOf(env spec.Env) map[string]uint64 {
	in := make(map[string]uint64, len(env))
	for name, tt := range env {
		var id uint64
		if len(tt.Keys) > 0 {
			id = tt.Keys[0]
		}
		in[name] = id
	}
	return in
}

// journalEnd writes the end of graph g, whose run returned err, and
// compacts the file if it grew. It is called before the graph ends
// (Graph.finish), so that whoever saw it end finds its end in the
// journal: a scheduler restarted then does not run it again.
func (s *Session) journalEnd(g *Graph, err error) {
	if s.engine.detached() {
		return
	}
	state, msg := endOf(err)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return
	}
	s.journalNote(journal.Record{Kind: journal.KindGraphEnd, Graph: g.id, State: state.String(), Err: msg}, true)
	if s.log.Size() > compactAt {
		if err := s.log.Compact(); err != nil {
			s.engine.logf("session %d: journal: compaction: %v: the file is left as it was", s.id, err)
		}
	}
}

// detached says whether the engine is closing with a journal: the
// sessions stay in it for the next scheduler (their graphs, cancelled,
// are not recorded as ended, and their chunks are not freed).
func (e *Engine) detached() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed && e.journal != nil
}

// A LostSession is a session whose journal could not be read back.
type LostSession struct {
	Session int
	Err     error
}

// Restored is what Restore did.
type Restored struct {
	Sessions int           // rebuilt
	Lost     []LostSession // not rebuilt, and why
	Rerun    int           // graphs that were running, started again
	Chunks   int           // chunks of kept and uploaded tensors the sessions name
}

// Restore rebuilds the sessions of the journal loaded: their tensors
// (their chunks taken back from the workers that held them, when the
// runner was told to expect them: see sched.Config.Expect; the rest made
// again from lineage when read), their graphs (those that ended as
// they ended; those that were running, started again), and journals that
// go on. A session whose file was damaged is not rebuilt: it is returned
// among Lost, and its file is left for a human to look at; a session
// read back but not rebuilt is lost too, and its chunks freed.
func (e *Engine) Restore(loaded []journal.Loaded) (Restored, error) {
	var out Restored
	for _, l := range loaded {
		if l.Err != nil {
			out.Lost = append(out.Lost, LostSession{Session: l.Session, Err: l.Err})
			continue
		}
		st := l.State
		if st.Closed {
			e.journal.Remove(st.Session)
			continue
		}
		s, envs, err := e.restoreSession(st)
		if err != nil {
			out.Lost = append(out.Lost, LostSession{Session: st.Session, Err: err})
			chunks, _ := st.Chunks()
			e.freeLost(st.Session, st.Epoch, chunks)
			continue
		}
		out.Sessions++
		chunks, _ := st.Chunks()
		out.Chunks += len(chunks)
		n, err := s.rerun(st, envs)
		out.Rerun += n
		if err != nil {
			e.logf("session %d: %v", st.Session, err)
		}
	}
	return out, nil
}

// freeLost tells the workers to free the chunks of a session read back
// whole but not restored: nothing will read them again, and a runner told
// to expect them (sched.Config.Expect) has taken back those it was
// offered; it forgets the others, which their workers drop after their
// orphan grace, as they drop those of a session whose file is damaged
// (no one expects them).
func (e *Engine) freeLost(sess int, epoch uint64, chunks []journal.Chunk) {
	ids := make([]uint64, len(chunks))
	for i, c := range chunks {
		ids[i] = c.ID
	}
	// At the journal's epoch: a worker that has seen a later one (another
	// scheduler holds the session now) keeps them for it.
	if f, ok := e.runner.(fencedFreer); ok {
		f.FreeFor(sess, epoch, ids)
		return
	}
	e.runner.Free(ids)
}

// restoreSession makes session st.Session again: its tensors, lineage and
// the graphs that ended; its journal goes on in a compacted file. It
// returns, for each graph that was running, the tensors it was submitted
// against: it runs again against them, not against what it, or a graph
// after it, kept since.
func (e *Engine) restoreSession(st *journal.State) (*Session, map[int]spec.Env, error) {
	log, err := e.journal.Resume(st)
	if err != nil {
		return nil, nil, err
	}
	s, err := e.newSession(st.Owner, st.Session, log)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	e.mu.Lock()
	if st.Session > e.nextSess && st.Session/1_000_000 == e.nextSess/1_000_000 {
		e.nextSess = st.Session // the numbers of this space go on after it
	}
	e.mu.Unlock()
	// Tensors as journaled, with the lineage of what graphs kept: the
	// graph's spec tiled again against what it read.
	tensors := map[*journal.Tensor]*Tensor{}
	lines := map[int]*Lineage{} // by graph: nil when none could be made
	made := func(jt *journal.Tensor) (*Tensor, error) {
		if t, ok := tensors[jt]; ok {
			return t, nil
		}
		dt, err := tensor.ParseDType(jt.DType)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", jt.Name, err)
		}
		t := &Tensor{session: s, graph: jt.Graph, tiled: tensor.TiledTensor{Name: jt.Name, DType: dt, Shape: jt.Shape, Chunks: jt.Splits}}
		for _, c := range jt.Chunks {
			t.tiled.Keys = append(t.tiled.Keys, c.ID)
		}
		tensors[jt] = t
		return t, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, jg := range st.Graphs {
		g := newGraph(jg.Spec, nil, &chunk.Graph{}, nil, func() {}, nil)
		g.id = len(s.graphs) + 1
		if g.id != jg.ID {
			return nil, nil, fmt.Errorf("graph %d journaled as number %d", g.id, jg.ID)
		}
		s.graphs = append(s.graphs, g)
		if jg.Running() {
			continue // rerun makes it
		}
		g.restored(jg.State, jg.Err)
	}
	lineage := func(gid int) *Lineage {
		return s.lineageOf(st, gid, made, lines)
	}
	for _, name := range slices.Sorted(maps.Keys(st.Tensors)) {
		jt := st.Tensors[name]
		t, err := made(jt)
		if err != nil {
			return nil, nil, err
		}
		if jt.Graph != 0 {
			t.lin = lineage(jt.Graph)
		}
		for _, id := range t.tiled.Keys {
			s.refs[id]++
			if t.lin != nil {
				s.lines[id] = t.lin
			}
		}
		s.tensors[name] = t
	}
	envs := map[int]spec.Env{}
	for _, jg := range st.Graphs {
		if !jg.Running() {
			continue
		}
		env := spec.Env{}
		for name, jt := range jg.Inputs {
			t, err := made(jt)
			if err != nil {
				return nil, nil, err
			}
			env[name] = &t.tiled
			// A version replaced since is made again from its lineage
			// if its chunks are gone: the graph's start looks it up.
			if jt.Graph != 0 {
				if lin := lineage(jt.Graph); lin != nil {
					for _, id := range t.tiled.Keys {
						if _, ok := s.lines[id]; !ok {
							s.lines[id] = lin
						}
					}
				}
			}
		}
		envs[jg.ID] = env
	}
	return s, envs, nil
}

// madeBy returns the tensors of st that graph gid made: those the session
// names, and those later graphs read, replaced since.
func madeBy(st *journal.State, gid int) map[string]*journal.Tensor {
	out := map[string]*journal.Tensor{}
	for _, t := range st.Tensors {
		if t.Graph == gid {
			out[t.Name] = t
		}
	}
	for _, g := range st.Graphs {
		for _, t := range g.Inputs {
			if t.Graph == gid {
				out[t.Name] = t
			}
		}
	}
	return out
}

// lineageOf tiles graph gid's spec again against the tensors it read, and
// returns the lineage of the tensors it kept, those the session names and
// those later graphs read; nil when it cannot (the spec tiles in stages,
// or not as it did). The lineages of the graphs whose tensors it read are
// made first: their chunks may be gone too. lines memoizes by graph.
// s.mu is held.
func (s *Session) lineageOf(st *journal.State, gid int, made func(*journal.Tensor) (*Tensor, error), lines map[int]*Lineage) *Lineage {
	if lin, ok := lines[gid]; ok {
		return lin
	}
	lines[gid] = nil // until made: a history has no cycles, but a damaged one is not read
	var jg *journal.Graph
	for i := range st.Graphs {
		if st.Graphs[i].ID == gid {
			jg = &st.Graphs[i]
		}
	}
	if jg == nil {
		return nil
	}
	env := spec.Env{}
	parents := map[uint64]*Lineage{}
	for name, jt := range jg.Inputs {
		t, err := made(jt)
		if err != nil {
			return nil
		}
		env[name] = &t.tiled
		if jt.Graph != 0 {
			if lin := s.lineageOf(st, jt.Graph, made, lines); lin != nil {
				for _, id := range t.tiled.Keys {
					parents[id] = lin
				}
			}
		}
	}
	data, owner := s.files()
	tg, err := lang.ParseData(jg.Spec, env, data)
	if err != nil {
		s.engine.logf("session %d: graph %d parses no more (%v): what it kept is not made again if lost", s.id, gid, err)
		return nil
	}
	stg, err := tile.StagesWith(tg, env, tile.Options{Fused: s.opt.FuseExpr, Owner: owner})
	if err != nil || !stg.Last() {
		s.engine.logf("session %d: graph %d tiles in stages or no more: what it kept is not made again if lost", s.id, gid)
		return nil
	}
	cg := fuse.Optimize(stg.Graph, s.opt)
	ids := s.engine.ids(cg)
	// The outputs take the IDs the journal names them by.
	kept := madeBy(st, gid)
	var keys []int
	for _, o := range cg.Outputs {
		jt, ok := kept[o.Name]
		if chunk.IsSink(o.Name) || !ok {
			continue // a file written, or a tensor nothing holds any more
		}
		if len(jt.Chunks) != len(o.Keys) {
			s.engine.logf("session %d: graph %d tiles %s in %d chunks, not %d: it is not made again if lost", s.id, gid, o.Name, len(o.Keys), len(jt.Chunks))
			return nil
		}
		for i, k := range o.Keys {
			ids[k] = jt.Chunks[i].ID
			keys = append(keys, int(k))
		}
	}
	lin := newLineage(cg, ids, keys, func(id uint64) *Lineage { return parents[id] })
	lines[gid] = lin
	return lin
}

// rerun starts again the graphs of st that were running when the journal
// stops, under their numbers, each against the tensors it was submitted
// against (envs).
func (s *Session) rerun(st *journal.State, envs map[int]spec.Env) (int, error) {
	n := 0
	for _, jg := range st.Graphs {
		if !jg.Running() {
			continue
		}
		if err := s.resubmit(jg.ID, jg.Spec, envs[jg.ID]); err != nil {
			msg := fmt.Sprintf("run again after the scheduler restarted: %v", err)
			s.mu.Lock()
			// Journaled before it ends, as a graph that ran (journalEnd).
			s.journalNote(journal.Record{Kind: journal.KindGraphEnd, Graph: jg.ID, State: Failed.String(), Err: msg}, true)
			s.graphs[jg.ID-1].restored(Failed.String(), msg)
			s.mu.Unlock()
			return n, fmt.Errorf("graph %d, running when the scheduler stopped, could not be run again: %w", jg.ID, err)
		}
		n++
	}
	return n, nil
}

// restored ends a graph rebuilt from the journal as it ended.
func (g *Graph) restored(state, err string) {
	g.observe(core.Event{Key: core.NoteKey, At: time.Now(), Err: "restored from the journal: it ran before the scheduler restarted"})
	g.mu.Lock()
	g.status.State = parseGraphState(state)
	g.err = err
	g.end = time.Now()
	g.mu.Unlock()
	select {
	case <-g.done:
	default:
		close(g.done)
	}
}

func parseGraphState(s string) GraphState {
	for st := GraphState(0); st < 16; st++ {
		if st.String() == s {
			return st
		}
	}
	return Failed
}
