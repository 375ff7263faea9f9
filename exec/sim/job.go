package sim

import (
	"encoding/binary"
	"hash/fnv"
	"strings"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/custody"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// A plan is a spec tiled and optimized as the engine does it, with the
// digest of each op's chunk in a fault-free run.
type plan struct {
	g      *chunk.Graph
	base   uint64   // the spec's hash, which each op's digest starts from
	digest []uint64 // by op key
	keep   []int    // the keys of the outputs' chunks
}

// tiled caches the plans of the specs by text: every session runs the
// same few.
var tiled = map[string]*plan{}

// planOf parses, tiles and optimizes text with the real spec, tile and
// fuse packages.
func planOf(text string) (*plan, error) {
	if p := tiled[text]; p != nil {
		return p, nil
	}
	tg, err := lang.Parse(text, nil)
	if err != nil {
		return nil, err
	}
	cg, err := tile.Graph(tg, nil)
	if err != nil {
		return nil, err
	}
	cg = fuse.Optimize(cg, fuse.Options{Fuse: true, FuseExpr: true})
	h := fnv.New64a()
	h.Write([]byte(text))
	p := &plan{g: cg, base: h.Sum64(), digest: make([]uint64, len(cg.Ops))}
	for _, op := range cg.Ops {
		ins := make([]uint64, len(op.Inputs))
		for i, k := range op.Inputs {
			ins[i] = p.digest[k]
		}
		p.digest[op.Key] = opDigest(p.base, op.Key, ins)
	}
	for _, o := range cg.Outputs {
		if !chunk.IsSink(o.Name) {
			for _, k := range o.Keys {
				p.keep = append(p.keep, int(k))
			}
		}
	}
	tiled[text] = p
	return p, nil
}

// opDigest is the content of op key's chunk: a hash of the op and of the
// digests of the inputs it read.
func opDigest(base uint64, key int, ins []uint64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], base)
	h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(key))
	h.Write(b[:])
	for _, d := range ins {
		binary.LittleEndian.PutUint64(b[:], d)
		h.Write(b[:])
	}
	return h.Sum64()
}

// chunkID is the global ID of op key of graph g of session sess: the same
// in every run of the graph, as the journal keeps them.
func chunkID(sess, g, key int) uint64 { return uint64(sess)<<40 | uint64(g)<<24 | uint64(key+1) }

// A job is one run of a graph on a scheduler.
type job struct {
	sn      *schedNode
	id      uint64
	session int
	graph   int
	epoch   custody.Epoch
	p       *plan
	ids     []uint64
	c       *core.Core
	started int64
	over    bool
}

// specOf returns graph g's spec from session sess's journal.
func (sn *schedNode) specOf(sess, g int) string {
	for _, r := range sn.m.Journal(sess) {
		if r.Kind == custody.KindSubmit && r.Graph == g {
			return r.Body[strings.IndexByte(r.Body, '\n')+1:]
		}
	}
	return ""
}

// startGraph runs graph g of session sess, unless it runs here already.
func (sn *schedNode) startGraph(sess, g int) {
	if !sn.m.Serving(sess, sn.w.now) || sn.ending[[2]int{sess, g}] {
		return
	}
	for _, j := range sn.jobs {
		if j.session == sess && j.graph == g {
			return
		}
	}
	text := sn.specOf(sess, g)
	if text == "" {
		return // not submitted here: nothing to run
	}
	p, err := planOf(text)
	if err != nil {
		sn.w.fail("session %d graph %d: %v", sess, g, err)
		return
	}
	_, e, _ := sn.m.Home(sess)
	sn.nextJob++
	j := &job{sn: sn, id: sn.nextJob, session: sess, graph: g, epoch: e, p: p, started: sn.w.now}
	j.ids = make([]uint64, len(p.g.Ops))
	keep := map[uint64]bool{}
	for k := range j.ids {
		j.ids[k] = chunkID(sess, g, k)
	}
	for _, k := range p.keep {
		keep[j.ids[k]] = true
	}
	t0 := time.Now()
	j.c = core.New(p.g, j.ids, keep, core.Options{UnitOps: sn.w.cfg.UnitOps, Assign: sn.w.cfg.Assign, Order: sn.w.cfg.Order})
	sn.w.stats.CoreNs += int64(time.Since(t0))
	sn.w.stats.CoreOps += len(p.g.Ops)
	sn.jobs[j.id] = j
	for _, wk := range sn.w.workers {
		if sn.up[wk.name] {
			j.step(core.Input{Kind: core.InWorkerUp, Worker: wk.name, Slots: sn.w.cfg.Slots})
		}
	}
	j.step(core.Input{Kind: core.InStart})
}

// step feeds the job's Core and carries out what it answers.
func (j *job) step(in core.Input) {
	if j.over {
		return
	}
	t0 := time.Now()
	out := j.c.Step(in)
	j.sn.w.stats.CoreNs += int64(time.Since(t0))
	j.apply(out)
}

func (j *job) apply(out core.Output) {
	w := j.sn.w
	// What goes to the workers carries the session's epoch now: a home
	// that moved on to other witnesses or another target runs on.
	if _, e, ok := j.sn.m.Home(j.session); ok && e > j.epoch {
		j.epoch = e
	}
	for _, ev := range out.Events {
		if ev.LiveChunks > w.stats.PeakLive {
			w.stats.PeakLive = ev.LiveChunks
		}
		w.stats.PeakLiveBytes = max(w.stats.PeakLiveBytes, ev.LiveBytes)
	}
	for _, f := range out.Free {
		f := f
		if j.sn.m.Holds(f.ID, f.Worker) {
			continue // taken back by the directory meanwhile: its copy now
		}
		if wk := w.worker(f.Worker); wk != nil {
			w.send(&j.sn.node, &wk.node, 64, func() { wk.freeJob(j.sn, j, f.ID) })
		}
	}
	for _, c := range out.Cancel {
		c := c
		if wk := w.worker(c.Worker); wk != nil {
			w.send(&j.sn.node, &wk.node, 64, func() { wk.cancel(j.sn, j.id, c.Key, c.Attempt) })
		}
	}
	for i := 0; i < len(out.Run); {
		n := max(1, out.Run[i].Unit)
		unit := append([]core.RunOp(nil), out.Run[i:min(len(out.Run), i+n)]...)
		i += n
		wk := w.worker(unit[0].Worker)
		if wk == nil {
			continue
		}
		w.send(&j.sn.node, &wk.node, 200*int64(len(unit)), func() { wk.submit(j.sn, j, unit) })
	}
	if out.Done {
		j.over = true
		delete(j.sn.jobs, j.id)
		j.finish(out.Err)
	}
}

// finish journals what the job kept and how it ended.
func (j *job) finish(err error) {
	sn, w := j.sn, j.sn.w
	sess, g := j.session, j.graph
	if err != nil {
		if !sn.m.Serving(sess, w.now) {
			return // fenced: the session's new home runs it again
		}
		// The Core gave up (an op lost with its workers, or its fetches
		// failing, more often than its bounds allow): the graph fails, as
		// a user would see it, and nothing it made is kept.
		w.stats.GraphsFailed++
		w.trace("%s: session %d graph %d failed: %v", sn.name, sess, g, err)
		sn.ending[[2]int{sess, g}] = true
		sn.ownWrite(sess, custody.Rec{Kind: custody.KindGraphEnd, Graph: g, Body: bodyOf("end", sess, g, "", 0)}, func() {
			delete(sn.ending, [2]int{sess, g})
			sn.graphEnded(sess)
		})
		return
	}
	d := w.now - j.started
	w.stats.Graphs++
	w.stats.Makespan += d
	w.stats.LongestGraph = max(w.stats.LongestGraph, d)
	var kept []custody.Chunk
	for _, k := range j.p.keep {
		loc, ok := j.c.Holder(k)
		if !ok {
			w.fail("session %d graph %d: kept op %d not held", j.session, j.graph, k)
			return
		}
		kept = append(kept, custody.Chunk{ID: loc.ID, NBytes: loc.NBytes, Workers: []string{loc.Worker}})
	}
	body := bodyOf("keep", sess, g, sn.name, j.id)
	sn.ending[[2]int{sess, g}] = true
	sn.ownWrite(sess, custody.Rec{Kind: custody.KindKeep, Chunks: kept, Body: body}, func() {
		if sn.ended(sess, g) {
			delete(sn.ending, [2]int{sess, g})
			return // a run again, after a loss: its chunks are placed
		}
		sn.ownWrite(sess, custody.Rec{Kind: custody.KindGraphEnd, Graph: g, OK: true, Body: bodyOf("end", sess, g, "", 0)}, func() {
			delete(sn.ending, [2]int{sess, g})
			sn.graphEnded(sess)
		})
	})
}

// abandon stops a job of a session no longer served here.
func (j *job) abandon() {
	j.over = true
	delete(j.sn.jobs, j.id)
}
