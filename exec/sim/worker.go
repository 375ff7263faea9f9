package sim

import (
	"slices"

	"marsfs/exec/core"
	"marsfs/exec/custody"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
)

// A workerNode is a worker process: its real worker.State (queue, slots,
// which run owns each chunk, orphans), its custody.Fence, and a store of
// chunk digests.
type workerNode struct {
	node
	w     *World
	st    *worker.State
	fence custody.Fence
	store map[uint64]stored
	// conns are its control connections, one a scheduler incarnation
	// (their identity is all State needs of them), and what each runs.
	conns map[string]*conn
	seen  map[string]int64
	dead  int64 // when it was killed
}

type stored struct {
	digest uint64
	nbytes int64
}

type conn struct {
	c    *wire.Conn
	sn   *schedNode
	inc  int
	jobs map[*worker.Task]*job
}

func newWorker(w *World, name string) *workerNode {
	wk := &workerNode{node: node{name: name, alive: true}, w: w, store: map[uint64]stored{}, conns: map[string]*conn{}, seen: map[string]int64{}}
	wk.st = worker.NewState(worker.StateConfig{Name: name, Slots: w.cfg.Slots})
	return wk
}

// connTo returns the live control connection to sn's incarnation.
func (wk *workerNode) connTo(sn *schedNode) *conn {
	c := wk.conns[sn.name]
	if c == nil || c.inc != sn.inc {
		return nil
	}
	return c
}

// connect opens a control connection to sn: the scheduler hears of the
// worker, and the worker offers it the chunks it holds orphaned.
func (wk *workerNode) connect(sn *schedNode) {
	delete(sn.dropped, wk.name)
	c := &conn{c: new(wire.Conn), sn: sn, inc: sn.inc, jobs: map[*worker.Task]*job{}}
	wk.conns[sn.name] = c
	wk.st.ConnOpened()
	// As exec/worker does: orphans only. Uploads' copies are not
	// offered: a scheduler that counted them lost asks for them
	// (custody.Directory.WorkerUp's recall), and recall answers.
	orphans := wk.st.Orphans()
	w := wk.w
	w.send(&wk.node, &sn.node, 64, func() {
		if sn.inc != c.inc {
			return
		}
		sn.workerUp(wk)
		wk.w.trace("%s connects to %s offering %v", wk.name, sn.name, orphans)
		if len(orphans) > 0 {
			var cs []custody.Chunk
			for _, id := range orphans {
				if ch, ok := wk.store[id]; ok {
					cs = append(cs, custody.Chunk{ID: id, NBytes: ch.nbytes})
				}
			}
			sn.step(custody.Input{Kind: custody.InOffered, Worker: wk.name, Chunks: cs})
		}
	})
}

// disconnect closes the control connection to scheduler name: what came
// on it is dropped or orphaned, and the orphans are offered on the other
// connections (a takeover claims them from there).
func (wk *workerNode) disconnect(name string) {
	c := wk.conns[name]
	if c == nil {
		return
	}
	delete(wk.conns, name)
	wk.st.ConnClosed(c.c)
	wk.ready()
	var cs []custody.Chunk
	for _, id := range wk.st.Orphans() {
		if ch, ok := wk.store[id]; ok {
			cs = append(cs, custody.Chunk{ID: id, NBytes: ch.nbytes})
		}
	}
	if len(cs) == 0 {
		return
	}
	for _, n := range sortedKeys(wk.conns) {
		o := wk.conns[n]
		sn := o.sn
		wk.w.send(&wk.node, &sn.node, 64+16*int64(len(cs)), func() {
			sn.step(custody.Input{Kind: custody.InOffered, Worker: wk.name, Chunks: cs})
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// submit takes a dispatch unit of job j from scheduler sn.
func (wk *workerNode) submit(sn *schedNode, j *job, unit []core.RunOp) {
	c := wk.connTo(sn)
	if c == nil {
		return
	}
	if ok, e, h := wk.allow(j.session, j.epoch, sn.name); !ok {
		// A stale home: every op of the unit fails for good, and the
		// scheduler learns the epoch.
		wk.w.send(&wk.node, &sn.node, 64, func() {
			wk.w.trace("%s refuses job %d of session %d at epoch %d from %s: epoch %d on %s; %s", wk.name, j.id, j.session, j.epoch, sn.name, e, h, sn.m.Describe(j.session))
			sn.step(custody.Input{Kind: custody.InTold, Peer: wk.name, Session: j.session, Epoch: e, Home: h})
			for _, r := range unit {
				sn.report(j.id, core.Input{Kind: core.InFailedFinal, Worker: wk.name, Key: r.Key, Attempt: r.Attempt, Err: custody.MovedError(j.session, h, e)})
			}
		})
		return
	}
	tasks := make([]*worker.Task, len(unit))
	for i, r := range unit {
		op := j.p.g.Ops[r.Key]
		tasks[i] = &worker.Task{RunKey: wire.RunKey{Job: j.id, Key: r.Key, Attempt: r.Attempt}, Prio: r.Priority,
			Op: op, ID: j.ids[r.Key], Inputs: r.Inputs, Conn: c.c, Flush: r.Flush}
		c.jobs[tasks[i]] = j
	}
	wk.st.Submit(tasks)
	wk.ready()
}

// ready carries out what the State asks.
func (wk *workerNode) ready() {
	rd := wk.st.Ready()
	for _, id := range rd.Forget {
		delete(wk.store, id)
	}
	for _, t := range rd.Cancelled {
		wk.reportTo(t, core.Input{Kind: core.InCancelDone})
	}
	for _, r := range rd.Refused {
		wk.reportTo(r.Task, core.Input{Kind: core.InFailedFinal, Err: r.Err})
	}
	start := append([]*worker.Task(nil), rd.Start...)
	for _, t := range start {
		wk.run(t)
	}
}

// reportTo sends a report about task t to the scheduler it came from.
func (wk *workerNode) reportTo(t *worker.Task, in core.Input) {
	var c *conn
	for _, n := range sortedKeys(wk.conns) {
		if wk.conns[n].c == t.Conn {
			c = wk.conns[n]
		}
	}
	if c == nil {
		return
	}
	j := c.jobs[t]
	if j == nil {
		return
	}
	if in.Kind != core.InStarted {
		delete(c.jobs, t)
	}
	in.Worker, in.Key, in.Attempt = wk.name, t.Key, t.Attempt
	sn := c.sn
	wk.w.send(&wk.node, &sn.node, 64, func() { sn.report(j.id, in) })
}

// run runs task t in a slot: it fetches the inputs it does not hold (a
// peer that lost one fails the fetch), then computes for the cost
// model's time, then stores the chunk and reports.
func (wk *workerNode) run(t *worker.Task) {
	w := wk.w
	ins := make([]uint64, len(t.Inputs))
	inBytes := make([]int64, len(t.Inputs))
	var fetch int64
	for i, loc := range t.Inputs {
		if ch, ok := wk.store[loc.ID]; ok {
			ins[i], inBytes[i] = ch.digest, ch.nbytes
			continue
		}
		peer := w.worker(loc.Worker)
		var ch stored
		ok := false
		if peer != nil && peer.alive && !peer.cut && !wk.cut {
			ch, ok = peer.store[loc.ID]
		}
		if !ok {
			w.on(&wk.node, 300*1000, func() {
				wk.st.Ended(t, worker.Failed)
				wk.reportTo(t, core.Input{Kind: core.InFailedFetch, Peer: loc.Worker, Err: "fetch failed"})
				wk.next(t)
			})
			return
		}
		n := t.Op.InputBytes(i, ch.nbytes)
		ins[i], inBytes[i] = ch.digest, n
		fetch += 150*1000 + n*4/5
		w.stats.BytesMoved += n
	}
	d := fetch + opCost(t.Op, inBytes)
	w.stats.WorkerBusy[wk.name] += d
	digest := opDigest(wk.connJob(t).p.base, t.Key, ins)
	nbytes := int64(t.Op.NBytes())
	w.on(&wk.node, d, func() {
		store, _ := wk.st.Ended(t, worker.Computed)
		if store {
			wk.store[t.ID] = stored{digest: digest, nbytes: nbytes}
			wk.st.Stored(t)
			wk.reportTo(t, core.Input{Kind: core.InFinished, NBytes: nbytes})
		} else if t.Cancelled() {
			wk.reportTo(t, core.Input{Kind: core.InCancelDone})
		}
		wk.next(t)
	})
}

func (wk *workerNode) connJob(t *worker.Task) *job {
	for _, c := range wk.conns {
		if j := c.jobs[t]; j != nil {
			return j
		}
	}
	return &job{p: &plan{}}
}

// next goes on in t's slot: the next op of its unit, or what is queued.
func (wk *workerNode) next(t *worker.Task) {
	nx, rest := wk.st.Next(t)
	if rest != nil {
		wk.st.Yield(rest)
	}
	if nx != nil {
		wk.run(nx)
	}
	wk.ready()
}

// cancel drops or interrupts a run of job id.
func (wk *workerNode) cancel(sn *schedNode, id uint64, key, attempt int) {
	if wk.connTo(sn) == nil {
		return
	}
	wk.st.Cancel(wire.RunKey{Job: id, Key: key, Attempt: attempt})
	wk.ready()
}

// freeJob drops a chunk a job freed.
func (wk *workerNode) freeJob(sn *schedNode, j *job, id uint64) {
	if wk.connTo(sn) == nil {
		return
	}
	if ok, _, _ := wk.allow(j.session, j.epoch, sn.name); !ok {
		return
	}
	wk.st.Free([]uint64{id})
	wk.ready()
}

// claim keeps chunks for a session's home, if its epoch is not stale.
func (wk *workerNode) claim(sn *schedNode, c custody.Chunks) {
	cn := wk.connTo(sn)
	if cn == nil {
		return
	}
	if ok, _, _ := wk.allow(c.Session, c.Epoch, sn.name); !ok {
		return
	}
	wk.st.Adopt(cn.c, c.IDs)
}

// recall takes, for the session's new home at its epoch, the chunks of
// c it holds for another connection (a home paused with its connections
// up), as exec/worker answers a MsgAdopt, and offers them back to it.
func (wk *workerNode) recall(sn *schedNode, c custody.Chunks) {
	cn := wk.connTo(sn)
	if cn == nil {
		return
	}
	if ok, _, _ := wk.allow(c.Session, c.Epoch, sn.name); !ok {
		return
	}
	taken, err := wk.st.AdoptFor(cn.c, c.Session, uint64(c.Epoch), c.IDs)
	if err != nil || len(taken) == 0 {
		return
	}
	var cs []custody.Chunk
	for _, id := range taken {
		if ch, ok := wk.store[id]; ok {
			cs = append(cs, custody.Chunk{ID: id, NBytes: ch.nbytes})
		}
	}
	wk.w.trace("%s takes %v of session %d for %s at epoch %d", wk.name, taken, c.Session, sn.name, c.Epoch)
	wk.w.send(&wk.node, &sn.node, 64+16*int64(len(cs)), func() {
		sn.step(custody.Input{Kind: custody.InOffered, Worker: wk.name, Session: c.Session, Epoch: c.Epoch, Chunks: cs})
	})
}

// free drops chunks a session's home frees, if its epoch is not stale.
func (wk *workerNode) free(sn *schedNode, c custody.Chunks) {
	if wk.connTo(sn) == nil {
		return
	}
	if ok, _, _ := wk.allow(c.Session, c.Epoch, sn.name); !ok {
		return
	}
	wk.st.Free(c.IDs)
	wk.ready()
}

// copyTo sends chunk cp.ID to worker to, which tells the scheduler.
func (wk *workerNode) copyTo(sn *schedNode, cp custody.Copy, to *workerNode) {
	id := cp.ID
	ch, ok := wk.store[id]
	if !ok {
		wk.w.send(&wk.node, &sn.node, 64, func() {
			sn.step(custody.Input{Kind: custody.InCopied, Worker: to.name, Session: cp.Session, Epoch: cp.Epoch, Chunks: []custody.Chunk{{ID: id}}, Err: "the source does not hold it"})
		})
		return
	}
	w := wk.w
	w.stats.BytesMoved += ch.nbytes
	w.send(&wk.node, &to.node, ch.nbytes, func() {
		to.store[id] = ch
		to.st.Put(id)
		w.send(&to.node, &sn.node, 64, func() {
			sn.step(custody.Input{Kind: custody.InCopied, Worker: to.name, Session: cp.Session, Epoch: cp.Epoch, Chunks: []custody.Chunk{{ID: id, NBytes: ch.nbytes}}})
		})
	})
}

// allow is the worker's fence on a claim, free or submission of session
// sess at epoch e from home; with Config.NoWorkerFence, every one passes,
// as before the workers checked epochs.
func (wk *workerNode) allow(sess int, e custody.Epoch, home string) (bool, custody.Epoch, string) {
	ok, cur, curHome := wk.fence.Allow(sess, e, home)
	if wk.w.cfg.NoWorkerFence {
		return true, e, home
	}
	return ok, cur, curHome
}
