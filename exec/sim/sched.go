package sim

import (
	"fmt"
	"slices"
	"sort"

	"marsfs/exec/core"
	"marsfs/exec/custody"
	"marsfs/exec/wire"
)

// A schedNode is a scheduler process: its custody.Machine, the Cores of
// the jobs it runs, its disk (its journal and its replicas), and its view
// of the members.
type schedNode struct {
	node
	w    *World
	m    *custody.Machine
	disk map[int][]custody.Rec // its journal, by session
	// removed counts the removals of each session's journal file (a
	// step down): an append queued before one does not reach the file
	// made after it.
	removed  map[int]int
	replicas map[string]map[int][]custody.Rec // replicas, by home
	full     bool
	diskFree int64 // when the disk is free for the next append
	seen     map[string]int64
	up       map[string]bool // peers and workers it holds alive (connected)
	jobs     map[uint64]*job
	nextJob  uint64
	reqs     map[uint64]*request
	nextReq  uint64
	waits    map[int][]*request // reads waiting for a graph's end, by session
	// ending holds the graphs whose jobs are over and whose end is being
	// journaled: they are not run again meanwhile.
	ending map[[2]int]bool
	// dropped names the workers whose connection this scheduler closed:
	// the worker finds it broken once it can reach the scheduler again,
	// and connects anew.
	dropped map[string]bool
}

// A request is a client's request, or one of the scheduler's own writes
// (client nil), waiting for custody's answer.
type request struct {
	c       *client
	kind    reqKind
	session int
	graph   int
	rec     *custody.Rec
	sent    int64
	onAck   func()
	step    int // the client's step it is for
}

type reqKind uint8

const (
	reqOpen reqKind = iota
	reqWrite
	reqWait // a graph's end
	reqRead // a tensor's chunks
)

func newSched(w *World, name string) *schedNode {
	return &schedNode{node: node{name: name, alive: true}, w: w, disk: map[int][]custody.Rec{}, removed: map[int]int{}, replicas: map[string]map[int][]custody.Rec{}}
}

// boot starts the process: a new Machine, restored from the journal on
// disk when there is one (a restart on the old state dir).
func (sn *schedNode) boot(_ []custody.Rec) {
	sn.inc++
	sn.alive, sn.paused, sn.cut, sn.held = true, false, false, nil
	sn.m = custody.New(custody.Config{Name: sn.name, LeaseTerm: sn.w.cfg.LeaseTerm})
	sn.seen, sn.up = map[string]int64{}, map[string]bool{}
	sn.jobs, sn.reqs, sn.waits, sn.ending = map[uint64]*job{}, map[uint64]*request{}, map[int][]*request{}, map[[2]int]bool{}
	sn.dropped = map[string]bool{}
	ids := make([]int, 0, len(sn.disk))
	for id := range sn.disk {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		sn.step(custody.Input{Kind: custody.InRestart, Session: id, Recs: slices.Clone(sn.disk[id])})
	}
}

// tick steps the Machine's clock every 100 ms.
func (sn *schedNode) tick() {
	sn.step(custody.Input{Kind: custody.InTick})
	sn.w.on(&sn.node, 100*ms, sn.tick)
}

// step feeds the Machine and carries out what it answers.
func (sn *schedNode) step(in custody.Input) {
	in.Now = sn.w.now
	out := sn.m.Step(in)
	sn.apply(out)
}

func (sn *schedNode) apply(out custody.Output) {
	w := sn.w
	for _, ap := range out.Append {
		ap := ap
		gen := sn.removed[ap.Session]
		start := max(w.now, sn.diskFree)
		sn.diskFree = start + 500*1000 + w.rng.Int64N(1000*1000) // an fsync: 0.5-1.5 ms
		w.on(&sn.node, sn.diskFree-w.now, func() {
			last := uint64(0)
			if n := len(ap.Recs); n > 0 {
				last = ap.Recs[n-1].Seq
			}
			in := custody.Input{Kind: custody.InAppended, Session: ap.Session, Seq: last, Replica: ap.Replica, Peer: ap.Peer, Whole: ap.Whole}
			switch {
			case !ap.Replica && sn.removed[ap.Session] != gen:
				in.Err = "the journal file was removed"
			case sn.full:
				in.Err = "no space left on device"
			case !sn.follows(ap):
				// Custody appends a record only after the one before it:
				// one written after a gap is what a restart would read.
				w.fail("%s: session %d: record %d appended to a file of %d", sn.name, ap.Session, ap.Recs[0].Seq, sn.fileLen(ap))
				return
			default:
				sn.write(ap)
			}
			sn.step(in)
		})
	}
	for _, sh := range out.Ship {
		sh := sh
		to := w.sched(sh.To)
		if to == nil {
			continue
		}
		var n int64 = 64
		for _, r := range sh.Recs {
			n += 64 + int64(len(r.Body)) + 24*int64(len(r.Chunks))
		}
		w.send(&sn.node, &to.node, n, func() {
			in := custody.Input{Kind: custody.InShip, Peer: sn.name, Session: sh.Session, Epoch: sh.Epoch, Seq: sh.Seq, Recs: sh.Recs, Whole: sh.Whole, Sent: sh.Sent}
			if sh.Ack {
				in = custody.Input{Kind: custody.InShipAck, Peer: sn.name, Session: sh.Session, Epoch: sh.Epoch, Seq: sh.Seq, Err: sh.Err, Home: sh.Home, Sent: sh.Sent}
			}
			to.step(in)
		})
	}
	for _, f := range out.Fence {
		f := f
		w.trace("%s asks %s to fence session %d epoch %d->%d", sn.name, f.Worker, f.Session, f.Base, f.Epoch)
		wk := w.worker(f.Worker)
		if wk == nil {
			continue
		}
		w.send(&sn.node, &wk.node, 64, func() {
			ok, e, h, dec := wk.fence.Accept(f.Session, f.Base, f.Epoch, f.Home)
			w.send(&wk.node, &sn.node, 64, func() {
				sn.step(custody.Input{Kind: custody.InFenced, Worker: wk.name, Session: f.Session, Epoch: e, Home: h, OK: ok, Decided: dec})
			})
		})
	}
	for _, t := range out.Tell {
		t := t
		if to := w.sched(t.To); to != nil {
			w.send(&sn.node, &to.node, 64, func() {
				to.step(custody.Input{Kind: custody.InTold, Peer: sn.name, Session: t.Session, Epoch: t.Epoch, Home: t.Home})
			})
		}
	}
	for _, a := range out.Acks {
		if a.Seq > 0 {
			w.trace("%s acknowledges session %d record %d", sn.name, a.Session, a.Seq)
		}
		sn.answered(a, "", "")
	}
	for _, a := range out.Refuse {
		w.trace("%s refuses a request of session %d: %s", sn.name, a.Session, a.Err)
		sn.answered(a, a.Err, a.To)
	}
	for _, a := range out.Forward {
		sn.answered(a, "forward", a.To)
	}
	for _, t := range out.TakeOver {
		if t.Epoch > 1 {
			w.stats.Takeovers++
		}
		w.trace("%s serves session %d at epoch %d", sn.name, t.Session, t.Epoch)
	}
	for _, d := range out.StepDown {
		w.trace("%s steps down from session %d (epoch %d on %s)", sn.name, d.Session, d.Epoch, d.Home)
		delete(sn.disk, d.Session) // not restored by a restart: it is another's
		sn.removed[d.Session]++
		for _, j := range sn.sortedJobs() {
			if j.session == d.Session {
				j.abandon()
			}
		}
		for _, r := range sn.waits[d.Session] {
			r.c.answer(sn, r, custody.MovedError(d.Session, d.Home, d.Epoch), d.Home)
		}
		delete(sn.waits, d.Session)
	}
	for _, c := range out.Claim {
		c := c
		if wk := w.worker(c.Worker); wk != nil {
			w.send(&sn.node, &wk.node, 64+8*int64(len(c.IDs)), func() { wk.claim(sn, c) })
		}
	}
	for _, c := range out.Free {
		c := c
		if wk := w.worker(c.Worker); wk != nil {
			w.send(&sn.node, &wk.node, 64+8*int64(len(c.IDs)), func() { wk.free(sn, c) })
		}
	}
	for _, c := range out.Claim {
		w.trace("%s claims on %s session %d epoch %d %v", sn.name, c.Worker, c.Session, c.Epoch, c.IDs)
	}
	for _, c := range out.Free {
		w.trace("%s frees on %s session %d epoch %d %v", sn.name, c.Worker, c.Session, c.Epoch, c.IDs)
	}
	for _, c := range out.Copy {
		w.trace("%s copies %d from %s to %s", sn.name, c.ID, c.From, c.To)
	}
	// A takeover's recall goes to every live worker, as exec/sched
	// sends it (MsgAdopt of the session at its epoch): the worker takes
	// what it still holds for another connection and offers it back.
	for _, c := range out.Recall {
		c := c
		if wk := w.worker(c.Worker); wk != nil {
			w.send(&sn.node, &wk.node, 64+8*int64(len(c.IDs)), func() { wk.recall(sn, c) })
		}
	}
	for _, cp := range out.Copy {
		cp := cp
		from, to := w.worker(cp.From), w.worker(cp.To)
		if from == nil || to == nil {
			continue
		}
		w.send(&sn.node, &from.node, 64, func() { from.copyTo(sn, cp, to) })
	}
	for _, g := range out.Rerun {
		sn.startGraph(g.Session, g.Graph)
	}
}

// follows says whether ap, appended, would follow on the file it goes
// to: a whole write always does.
func (sn *schedNode) follows(ap custody.Append) bool {
	return ap.Whole || len(ap.Recs) == 0 || ap.Recs[0].Seq == uint64(sn.fileLen(ap))+1
}

// fileLen is the number of records of the file ap goes to.
func (sn *schedNode) fileLen(ap custody.Append) int {
	if ap.Replica {
		return len(sn.replicas[ap.Peer][ap.Session])
	}
	return len(sn.disk[ap.Session])
}

// write makes an append durable on this disk.
func (sn *schedNode) write(ap custody.Append) {
	d := sn.disk
	if ap.Replica {
		if sn.replicas[ap.Peer] == nil {
			sn.replicas[ap.Peer] = map[int][]custody.Rec{}
		}
		d = sn.replicas[ap.Peer]
	}
	if ap.Whole {
		d[ap.Session] = slices.Clone(ap.Recs)
	} else {
		d[ap.Session] = append(d[ap.Session], ap.Recs...)
	}
}

// request takes a client's request (or the scheduler's own, c nil).
func (sn *schedNode) request(r *request) {
	sn.nextReq++
	id := sn.nextReq
	sn.reqs[id] = r
	r.sent = sn.w.now
	switch r.kind {
	case reqOpen:
		if _, _, ok := sn.m.Home(r.session); ok {
			sn.step(custody.Input{Kind: custody.InRead, Session: r.session, Req: id}) // opened before: an answer lost
			return
		}
		sn.step(custody.Input{Kind: custody.InOpen, Session: r.session, Req: id})
	case reqWrite:
		// A write asked again is found in the home's journal only: a
		// replica's records are its home's, and one not yet committed
		// there is for the home to answer (a replica that answered "in
		// flight" kept a client asking it for ever: seed 64).
		home, _, _ := sn.m.Home(r.session)
		if seq := sn.seqOf(r.session, r.rec.Body); seq > 0 && home == sn.name {
			if seq <= sn.m.Committed(r.session) {
				// Written before, its acknowledgement lost: served once
				// the lease holds, as a read.
				sn.step(custody.Input{Kind: custody.InRead, Session: r.session, Req: id})
				return
			}
			// Written and not yet durable at the target: asked again.
			sn.answered(custody.Answer{Req: id, Session: r.session}, "in flight", "")
			return
		}
		rec := *r.rec
		sn.step(custody.Input{Kind: custody.InWrite, Session: r.session, Req: id, Write: &rec})
	default:
		sn.step(custody.Input{Kind: custody.InRead, Session: r.session, Req: id})
	}
}

// seqOf returns the place of the record with body in session sess's
// journal here, 0 for none.
func (sn *schedNode) seqOf(sess int, body string) uint64 {
	for _, x := range sn.m.Journal(sess) {
		if x.Body == body {
			return x.Seq
		}
	}
	return 0
}

// answered carries out custody's answer to request a.Req: err empty is
// an acknowledgement (a write durable) or a read served.
func (sn *schedNode) answered(a custody.Answer, err, to string) {
	r := sn.reqs[a.Req]
	if r == nil {
		return
	}
	delete(sn.reqs, a.Req)
	if err != "" {
		if r.c != nil {
			r.c.answer(sn, r, err, to)
			return
		}
		// The scheduler's own write (a graph's end): asked again while the
		// session is served here; a new home runs the graph again.
		sn.w.on(&sn.node, 300*ms, func() {
			if _, _, ok := sn.m.Home(r.session); ok && sn.m.Serving(r.session, sn.w.now) {
				sn.request(r)
				return
			}
			for k := range sn.ending {
				if k[0] == r.session {
					delete(sn.ending, k)
				}
			}
		})
		return
	}
	switch r.kind {
	case reqOpen:
		r.c.answer(sn, r, "", "")
	case reqWrite:
		if r.rec.Kind == custody.KindSubmit && !sn.ended(r.session, r.graph) {
			sn.startGraph(r.session, r.graph)
		}
		if r.onAck != nil {
			r.onAck()
		}
		if r.c != nil {
			r.c.answer(sn, r, "", "")
		}
	case reqWait:
		if sn.ended(r.session, r.graph) {
			sn.answerWait(r)
			return
		}
		if !sn.submitted(r.session, r.graph) {
			r.c.answer(sn, r, "not submitted", "")
			return
		}
		sn.waits[r.session] = append(sn.waits[r.session], r)
		sn.startGraph(r.session, r.graph) // if it is not running here (a restart)
	case reqRead:
		sn.serveRead(r)
	}
}

func (sn *schedNode) ended(sess, g int) bool {
	ended, _ := sn.endOf(sess, g)
	return ended
}

// endOf says whether graph g of session sess ended, and if it failed.
func (sn *schedNode) endOf(sess, g int) (ended, failed bool) {
	for _, x := range sn.m.Journal(sess) {
		if x.Kind == custody.KindGraphEnd && x.Graph == g {
			return true, !x.OK
		}
	}
	return false, false
}

// answerWait answers a client waiting for graph r.graph, which ended.
func (sn *schedNode) answerWait(r *request) {
	if _, failed := sn.endOf(r.session, r.graph); failed {
		r.c.answer(sn, r, "graph failed", "")
		return
	}
	r.c.answer(sn, r, "", "")
}

func (sn *schedNode) submitted(sess, g int) bool {
	for _, x := range sn.m.Journal(sess) {
		if x.Kind == custody.KindSubmit && x.Graph == g {
			return true
		}
	}
	return false
}

// ownWrite writes a record of the scheduler's own (a graph's end, its
// kept chunks); then, once acknowledged, runs onAck.
func (sn *schedNode) ownWrite(sess int, rec custody.Rec, onAck func()) {
	sn.request(&request{kind: reqWrite, session: sess, rec: &rec, onAck: onAck})
}

// graphEnded answers the reads waiting for session sess's graphs.
func (sn *schedNode) graphEnded(sess int) {
	var keep []*request
	for _, r := range sn.waits[sess] {
		if sn.ended(sess, r.graph) {
			sn.answerWait(r)
		} else {
			keep = append(keep, r)
		}
	}
	sn.waits[sess] = keep
}

// serveRead reads a tensor's chunks (a graph's kept chunks, or an
// upload's): each must be where the directory says, with the digest of
// its lineage; a lost one is made again by running its graph again.
func (sn *schedNode) serveRead(r *request) {
	w := sn.w
	ids, want := r.c.expected(r.graph)
	for i, id := range ids {
		where, lost := sn.m.Where(id)
		if lost || len(where) == 0 {
			if r.graph == 0 {
				// An upload has no lineage: lost only when every worker
				// that held a copy died. One a live worker connected
				// here holds is the directory's loss: a worker coming
				// up is asked for the uploads lost (a recall), and a
				// takeover takes the uploads offered.
				for _, wk := range w.workers {
					if _, ok := wk.store[id]; ok && wk.alive && sn.up[wk.name] {
						w.fail("session %d: upload chunk %d lost by %s's directory, held by %s", r.session, id, sn.name, wk.name)
						break
					}
				}
				w.stats.UploadsLost++
				r.c.answer(sn, r, "", "")
				return
			}
			// Made again from lineage: the graph runs again, then the
			// read is asked again.
			sn.startGraph(r.session, r.graph)
			c := r.c
			w.on(&sn.node, 200*ms, func() { sn.request(&request{c: c, kind: reqRead, session: r.session, graph: r.graph}) })
			return
		}
		wk := w.worker(where[0])
		ch, ok := wk.store[id]
		switch {
		case !wk.alive && wk.dead > 0:
			// Killed, not yet detected: read again later.
			c := r.c
			w.on(&sn.node, 500*ms, func() { sn.request(&request{c: c, kind: reqRead, session: r.session, graph: r.graph}) })
			return
		case !ok:
			w.fail("session %d: chunk %d is on %s by %s's directory, which does not hold it", r.session, id, wk.name, sn.name)
			return
		case ch.digest != want[i]:
			w.fail("session %d graph %d: chunk %d has digest %x, the fault-free run's is %x", r.session, r.graph, id, ch.digest, want[i])
			return
		}
	}
	r.c.answer(sn, r, "", "")
}

// sortedJobs lists the jobs running, by number.
func (sn *schedNode) sortedJobs() []*job {
	js := make([]*job, 0, len(sn.jobs))
	for _, j := range sn.jobs {
		js = append(js, j)
	}
	sort.Slice(js, func(a, b int) bool { return js[a].id < js[b].id })
	return js
}

// workerUp connects worker wk: custody and every job hear of it, and it
// offers what it holds orphaned.
func (sn *schedNode) workerUp(wk *workerNode) {
	sn.up[wk.name] = true
	sn.step(custody.Input{Kind: custody.InWorkerUp, Worker: wk.name})
	for _, j := range sn.sortedJobs() {
		j.step(core.Input{Kind: core.InWorkerUp, Worker: wk.name, Slots: sn.w.cfg.Slots})
	}
}

// workerDown drops worker wk: its chunks and runs are lost.
func (sn *schedNode) workerDown(name string) {
	if !sn.up[name] {
		return
	}
	sn.up[name] = false
	sn.dropped[name] = true
	sn.step(custody.Input{Kind: custody.InWorkerDown, Worker: name})
	for _, j := range sn.sortedJobs() {
		j.step(core.Input{Kind: core.InWorkerDown, Worker: name})
	}
}

// report takes a worker's report about run key of job id.
func (sn *schedNode) report(id uint64, in core.Input) {
	if j := sn.jobs[id]; j != nil {
		j.step(in)
	}
}

// conn is the control connection identity of this scheduler's
// incarnation at worker wk.
func (sn *schedNode) String() string { return fmt.Sprintf("%s#%d", sn.name, sn.inc) }

var _ = wire.RunKey{}
