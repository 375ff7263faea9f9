package custody

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// A Directory is a scheduler's chunk directory: where each kept chunk's
// copies are (an upload two, on different workers; a graph's chunk one,
// or more when a takeover's recall finds it on several),
// which are lost, what workers offered that nobody here lost, and which
// workers are live. It holds the rules, and its methods add what they
// decide to the Output it was made with (claim, free, copy, lost, recall):
// the Machine steps one for the sessions it serves, and exec/sched keeps
// one under its mutex and carries the instructions out on the workers'
// connections. Like the Machine it reads no clock: the methods that age
// offers are given the time.
//
// A chunk's session may be 0 (a runner that does not say whose it is):
// such a chunk is any session's to free.
type Directory struct {
	// OfferLife is how long, in nanoseconds, an offer stays claimable by
	// a takeover (a worker frees its orphans after a grace); 0: for ever.
	OfferLife int64
	// Epoch, if set, says whether session sess is served here and at
	// which epoch: a chunk of a session not served here is not taken
	// back, and the claims carry the epoch. nil: every session, at the
	// epoch the caller gave (0 for an offer taken back).
	Epoch func(sess int) (Epoch, bool)

	out     *Output
	workers map[string]bool // live (true) or gone (false)
	leaving map[string]bool // live, but nothing is put on them
	chunks  map[uint64]*chunk
	lost    map[uint64]*chunk
	offers  map[uint64][]offer
	// copying names the worker each upload's second copy is being made
	// on (a Copy sent, not yet Copied): it is not asked for again.
	copying map[uint64]string
	adopted int
}

// NewDirectory returns an empty directory adding its instructions to
// out.
func NewDirectory(out *Output) *Directory {
	return &Directory{out: out, workers: map[string]bool{}, leaving: map[string]bool{},
		chunks: map[uint64]*chunk{}, lost: map[uint64]*chunk{}, offers: map[uint64][]offer{}, copying: map[uint64]string{}}
}

// epochOf is the epoch claims and frees of session sess carry, and
// whether it is served here.
func (d *Directory) epochOf(sess int, given Epoch) (Epoch, bool) {
	if d.Epoch == nil || sess == 0 {
		return given, true
	}
	return d.Epoch(sess)
}

// Live says whether worker w is live.
func (d *Directory) Live(w string) bool { return d.workers[w] }

// Known says whether worker w was ever seen, live or gone.
func (d *Directory) Known(w string) bool { _, ok := d.workers[w]; return ok }

// LiveWorkers lists the live workers, sorted.
func (d *Directory) LiveWorkers() []string {
	var ws []string
	for w, up := range d.workers {
		if up {
			ws = append(ws, w)
		}
	}
	sort.Strings(ws)
	return ws
}

// WorkerUp records worker w live: the uploads left with one copy when no
// other worker was there get their second now, and w is asked for the
// uploads lost here (Recall): a worker keeps an upload's copy whichever
// connection breaks and does not offer it, so an upload counted lost
// because this directory dropped w (a partition, a pause) or never knew
// it (a restart on the journal) comes back only from w's answer. Only a
// directory that knows its sessions' epochs (Epoch set: the Machine's)
// asks: a recall at a stale epoch would be refused as a stale home's.
func (d *Directory) WorkerUp(w string) {
	d.workers[w] = true
	delete(d.leaving, w)
	for _, id := range sortedIDs(d.chunks) {
		d.copyIfOne(d.chunks[id])
	}
	if d.Epoch != nil {
		d.recallUploads([]string{w}, nil, 0, false)
	}
}

// recallUploads asks workers ws for the lost uploads of ids (all of
// them when ids is nil) whose sessions are served here, at epoch e if
// given, else at the session's epoch: a worker that holds one answers
// with an offer at that epoch, which Offered takes back.
func (d *Directory) recallUploads(ws []string, ids []uint64, e Epoch, given bool) {
	if ids == nil {
		ids = sortedIDs(d.lost)
	}
	type key struct {
		sess int
		e    Epoch
	}
	by := map[key][]uint64{}
	var keys []key
	for _, id := range ids {
		l := d.lost[id]
		if l == nil || !l.Upload || l.session == 0 {
			continue
		}
		le, ok := e, given // a takeover's: served from this input on
		if !given {
			le, ok = d.epochOf(l.session, 0)
		}
		if !ok {
			continue
		}
		k := key{l.session, le}
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], id)
	}
	for _, w := range ws {
		if !d.workers[w] || d.leaving[w] {
			continue
		}
		for _, k := range keys {
			d.out.Recall = append(d.out.Recall, Chunks{Worker: w, Session: k.sess, Epoch: k.e, IDs: slices.Clone(by[k])})
		}
	}
}

// WorkerLeaving records that worker w is leaving: nothing is put on it,
// and the runner moves its chunks off (Moved) before it goes.
func (d *Directory) WorkerLeaving(w string) {
	if d.workers[w] {
		d.leaving[w] = true
	}
}

// WorkerDown forgets worker w's copies and offers: an upload with a copy
// left gets another, a chunk with none is lost.
func (d *Directory) WorkerDown(w string) {
	up := d.workers[w]
	d.workers[w] = false
	delete(d.leaving, w)
	if !up {
		return
	}
	for id, os := range d.offers {
		os = slices.DeleteFunc(os, func(o offer) bool { return o.worker == w })
		if len(os) == 0 {
			delete(d.offers, id)
		} else {
			d.offers[id] = os
		}
	}
	for id, to := range d.copying {
		if to == w {
			delete(d.copying, id)
		}
	}
	for _, id := range sortedIDs(d.chunks) {
		c := d.chunks[id]
		if !slices.Contains(c.Workers, w) {
			continue
		}
		c.Workers = slices.DeleteFunc(c.Workers, func(x string) bool { return x == w })
		if len(c.Workers) == 0 {
			delete(d.chunks, id)
			d.lost[id] = c
			d.out.Lost = append(d.out.Lost, id)
			continue
		}
		d.copyIfOne(c)
	}
}

// Place records chunk c of session sess (kept by a graph, or an upload's
// copies) where its live copies are: an upload with one copy gets
// another, a chunk with none is lost. A graph's chunk kept again keeps
// the copies the directory held besides, after the new ones.
func (d *Directory) Place(sess int, c Chunk) {
	var live []string
	for _, w := range c.Workers {
		if d.workers[w] && !slices.Contains(live, w) {
			live = append(live, w)
		}
	}
	if h := d.chunks[c.ID]; h != nil && !c.Upload && !h.Upload && h.session == sess {
		// Kept again (a graph run again, a recall's answer held
		// already): the copies the directory held are still there, as
		// no job frees a chunk the directory holds (Holds).
		for _, w := range h.Workers {
			if !slices.Contains(live, w) {
				live = append(live, w)
			}
		}
	}
	c.Workers = live
	delete(d.lost, c.ID)
	ch := &chunk{Chunk: c, session: sess}
	if len(c.Workers) == 0 {
		delete(d.chunks, c.ID)
		d.lost[c.ID] = ch
		d.out.Lost = append(d.out.Lost, c.ID)
		if c.Upload && d.Epoch != nil {
			// Its workers are gone here, but a live one may hold a copy
			// made since (seed 146: an upload's write taken back, its
			// copy left on the worker, and the write asked again).
			d.recallUploads(d.LiveWorkers(), []uint64{c.ID}, 0, false)
		}
		return
	}
	d.chunks[c.ID] = ch
	d.copyIfOne(ch)
}

// Expect records chunks a scheduler before this one kept (its journal)
// as lost until a worker offers them back.
func (d *Directory) Expect(sess int, cs []Chunk) {
	for _, c := range cs {
		if _, held := d.chunks[c.ID]; !held {
			c.Workers = nil
			d.lost[c.ID] = &chunk{Chunk: c, session: sess}
		}
	}
}

// Forget forgets lost chunks ids: another scheduler holds their session
// now.
func (d *Directory) Forget(ids []uint64) {
	for _, id := range ids {
		delete(d.lost, id)
	}
}

// Drop forgets chunks ids of session sess (or of no known session) and
// frees their copies, the frees carrying sess and epoch e.
func (d *Directory) Drop(sess int, e Epoch, ids []uint64) {
	for _, id := range ids {
		if l := d.lost[id]; l != nil && sameSession(l.session, sess) {
			delete(d.lost, id)
		}
		c := d.chunks[id]
		if c == nil || !sameSession(c.session, sess) {
			continue
		}
		delete(d.chunks, id)
		for _, w := range c.Workers {
			d.out.Free = addTo(d.out.Free, w, sess, e, id)
		}
	}
}

// Retain makes the chunks of session sess those of kept, its records'
// (a write taken back): a chunk still kept stays where the directory
// has it, held or lost; one no longer kept is forgotten, nothing freed
// (its job, or the client's next drop, frees it); one kept that the
// directory no longer knows (a drop taken back, whose copies were
// freed) is lost, to be made again from its lineage, never placed where
// the record says: the workers a record names are those of when it was
// written.
func (d *Directory) Retain(sess int, kept []Chunk) {
	want := make(map[uint64]bool, len(kept))
	for _, c := range kept {
		want[c.ID] = true
	}
	for id, c := range d.chunks {
		if c.session == sess && !want[id] {
			delete(d.chunks, id)
		}
	}
	for id, c := range d.lost {
		if c.session == sess && !want[id] {
			delete(d.lost, id)
		}
	}
	for _, c := range kept {
		if d.chunks[c.ID] != nil || d.lost[c.ID] != nil {
			continue
		}
		c.Workers = nil
		d.lost[c.ID] = &chunk{Chunk: c, session: sess}
	}
}

// sameSession says whether a chunk of session a may be dropped for
// session b: the same, or either not known.
func sameSession(a, b int) bool { return a == b || a == 0 || b == 0 }

// dropSession drops every chunk of session sess, freeing their copies.
func (d *Directory) dropSession(sess int, e Epoch) {
	var ids []uint64
	for id, c := range d.chunks {
		if c.session == sess {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	d.Drop(sess, e, ids)
	for id, c := range d.lost {
		if c.session == sess {
			delete(d.lost, id)
		}
	}
}

// forgetSession forgets every chunk of session sess without freeing
// anything: another scheduler holds them now, or the directory of the
// session is made again.
func (d *Directory) forgetSession(sess int) {
	for id, c := range d.chunks {
		if c.session == sess {
			delete(d.chunks, id)
		}
	}
	for id, c := range d.lost {
		if c.session == sess {
			delete(d.lost, id)
		}
	}
}

// Offered takes worker w's offer of chunks cs: those lost here come back
// (Claim), an upload with one copy left takes w's as its second, and the
// rest are remembered for a takeover (ClaimSession), or, when w took
// them for session sess at epoch e (sess not 0: a takeover's recall),
// freed. It returns the number taken.
func (d *Directory) Offered(w string, cs []Chunk, now int64, sess int, e Epoch) int {
	if !d.workers[w] {
		return 0
	}
	d.sweep(now)
	taken := 0
	for _, c := range cs {
		if l := d.lost[c.ID]; l != nil && l.NBytes == c.NBytes {
			if le, ok := d.epochOf(l.session, e); ok {
				delete(d.lost, c.ID)
				l.Workers = []string{w}
				d.chunks[c.ID] = l
				d.out.Claim = addTo(d.out.Claim, w, l.session, le, c.ID)
				d.copyIfOne(l)
				taken++
				continue
			}
		}
		if h := d.chunks[c.ID]; h != nil && h.Upload && h.NBytes == c.NBytes && len(h.Workers) == 1 && h.Workers[0] != w {
			if he, ok := d.epochOf(h.session, e); ok {
				h.Workers = append(h.Workers, w)
				d.out.Claim = addTo(d.out.Claim, w, h.session, he, c.ID)
				taken++
				continue
			}
		}
		if h := d.chunks[c.ID]; sess != 0 && h != nil && h.NBytes == c.NBytes {
			// A recall's answer of a chunk held already (another worker
			// answered first, or offered it): kept as another copy, not
			// freed. A job of the session may have made the chunk again
			// on w since the recall went out (it was lost then), and a
			// free would take the job's copy, which its keep then
			// places on w.
			if !slices.Contains(h.Workers, w) {
				h.Workers = append(h.Workers, w)
			}
			continue
		}
		if sess != 0 {
			// Taken for this scheduler by its recall, but dropped
			// meanwhile: nobody else names it.
			d.out.Free = addTo(d.out.Free, w, sess, e, c.ID)
			continue
		}
		os := slices.DeleteFunc(d.offers[c.ID], func(o offer) bool { return o.worker == w })
		d.offers[c.ID] = append(os, offer{worker: w, nbytes: c.NBytes, at: now})
	}
	d.adopted += taken
	return taken
}

// sweep forgets the offers older than OfferLife.
func (d *Directory) sweep(now int64) {
	if d.OfferLife <= 0 {
		return
	}
	for id, os := range d.offers {
		os = slices.DeleteFunc(os, func(o offer) bool { return now-o.at >= d.OfferLife })
		if len(os) == 0 {
			delete(d.offers, id)
		} else {
			d.offers[id] = os
		}
	}
}

// Copied records copy cp made, of nbytes (a Copy carried out). An
// upload whose copies were all lost meanwhile has this one back. A copy
// not wanted (the chunk freed, its session no longer served here, or two
// copies already) is freed at the session and epoch it was asked at: the
// worker may hold the chunk for another home now, one that took the
// session over at a later epoch and made or copied it there (seed 1531:
// a home back from a partition copied an upload to a worker the new home
// had copied it to, stepped down, and freed its copy at no epoch, which
// was the new home's). It says whether the copy is kept.
func (d *Directory) Copied(cp Copy, nbytes int64) bool {
	w := cp.To
	if d.copying[cp.ID] == w {
		delete(d.copying, cp.ID)
	}
	if !d.workers[w] {
		return false
	}
	if h := d.chunks[cp.ID]; h != nil {
		if h.Upload && len(h.Workers) >= 2 && !slices.Contains(h.Workers, w) {
			d.out.Free = addTo(d.out.Free, w, cp.Session, cp.Epoch, cp.ID) // two copies already
			return false
		}
		if !slices.Contains(h.Workers, w) {
			e, _ := d.epochOf(h.session, 0)
			h.Workers = append(h.Workers, w)
			d.out.Claim = addTo(d.out.Claim, w, h.session, e, cp.ID)
		}
		return true
	}
	if l := d.lost[cp.ID]; l != nil && l.Upload && l.NBytes == nbytes {
		e, _ := d.epochOf(l.session, 0)
		delete(d.lost, cp.ID)
		l.Workers = []string{w}
		d.chunks[cp.ID] = l
		d.out.Claim = addTo(d.out.Claim, w, l.session, e, cp.ID)
		d.copyIfOne(l)
		return true
	}
	d.out.Free = addTo(d.out.Free, w, cp.Session, cp.Epoch, cp.ID)
	return false
}

// Moved records chunk id's copy on worker from moved to worker to (from
// is leaving). It says whether the chunk still had that copy: if not
// (freed or lost meanwhile), the copy made on to is freed.
func (d *Directory) Moved(id uint64, from, to string) bool {
	h := d.chunks[id]
	if h == nil || !slices.Contains(h.Workers, from) || !d.workers[to] {
		if d.workers[to] {
			d.out.Free = addTo(d.out.Free, to, 0, 0, id)
		}
		return false
	}
	h.Workers = slices.DeleteFunc(h.Workers, func(x string) bool { return x == from || x == to })
	h.Workers = append(h.Workers, to)
	return true
}

// ClaimSession makes session sess, taken over at epoch e, the chunks its
// journal names: of kept (graphs' chunks, whose copies the journal does
// not know), each one a live worker offered is taken from it (the first
// by name), the others are lost, and every live worker is asked to take
// those it still holds for the old home (Recall: the old home was paused,
// its connections never broke); of uploads, each copy is where the
// journal says if its worker lives (a worker keeps an upload whichever
// connection breaks). It returns the chunks taken and those lost.
func (d *Directory) ClaimSession(sess int, e Epoch, now int64, kept, uploads []Chunk) (taken, lost int) {
	d.sweep(now)
	var missing, lostUploads []uint64
	for _, c := range kept {
		if _, held := d.chunks[c.ID]; held {
			continue
		}
		var from []string
		for _, o := range d.offers[c.ID] {
			if d.workers[o.worker] && !d.leaving[o.worker] && o.nbytes == c.NBytes {
				from = append(from, o.worker)
			}
		}
		delete(d.offers, c.ID)
		sort.Strings(from)
		c.Workers, c.Upload = from[:min(1, len(from))], false
		d.Place(sess, c)
		if len(c.Workers) == 0 {
			missing = append(missing, c.ID)
			lost++
			continue
		}
		d.out.Claim = addTo(d.out.Claim, c.Workers[0], sess, e, c.ID)
		taken++
	}
	for _, c := range uploads {
		if _, held := d.chunks[c.ID]; held {
			continue
		}
		// The journal names the copies put and copied before it was
		// last written; a live worker that offered the chunk holds one
		// too (a copy made since, orphaned when its connections broke).
		ws := slices.Clone(c.Workers)
		for _, o := range d.offers[c.ID] {
			if d.workers[o.worker] && !d.leaving[o.worker] && o.nbytes == c.NBytes && !slices.Contains(ws, o.worker) {
				ws = append(ws, o.worker)
			}
		}
		delete(d.offers, c.ID)
		c.Workers, c.Upload = ws, true
		d.Place(sess, c)
		h := d.chunks[c.ID]
		if h == nil {
			lostUploads = append(lostUploads, c.ID)
			lost++
			continue
		}
		for _, w := range h.Workers {
			d.out.Claim = addTo(d.out.Claim, w, sess, e, c.ID) // an orphan, should it be one
		}
		taken++
	}
	for i := range d.out.Claim {
		if c := &d.out.Claim[i]; c.Session == sess && c.Epoch == e {
			slices.Sort(c.IDs)
		}
	}
	if len(missing) > 0 && sess != 0 && e > 0 {
		for _, w := range d.LiveWorkers() {
			if !d.leaving[w] {
				d.out.Recall = append(d.out.Recall, Chunks{Worker: w, Session: sess, Epoch: e, IDs: slices.Clone(missing)})
			}
		}
	}
	if len(lostUploads) > 0 {
		// The journal's copies are on workers not live here: any live
		// worker may hold one (the journal's names or a copy made since).
		d.recallUploads(d.LiveWorkers(), lostUploads, e, true)
	}
	d.adopted += taken
	return taken, lost
}

// copyIfOne asks for a second copy of an upload that has one.
func (d *Directory) copyIfOne(ch *chunk) {
	if !ch.Upload || len(ch.Workers) != 1 {
		return
	}
	if to, ok := d.copying[ch.ID]; ok && d.workers[to] {
		return // asked for already
	}
	if to := d.Targets(1, ch.Workers[0]); len(to) > 0 {
		e, _ := d.epochOf(ch.session, 0)
		d.copying[ch.ID] = to[0]
		d.out.Copy = append(d.out.Copy, Copy{ID: ch.ID, From: ch.Workers[0], To: to[0], Session: ch.session, Epoch: e})
	}
}

// CopyFailed says the Copy of chunk id could not be made (its source or
// target went, or a read or write failed): it may be asked for again.
// It is asked for at the next change of the workers, not at once: the
// same target would be chosen again.
func (d *Directory) CopyFailed(id uint64) {
	delete(d.copying, id)
}

// Targets names up to n live workers other than except and not leaving,
// those holding the fewest bytes of kept chunks first (by name among
// equals). For an upload's two copies (n 2) the first named, whose copy
// jobs read, is the one holding fewer first copies: the second copies
// balance the bytes held, and with them alone every first copy would
// land on the same worker, and the graphs reading them run there.
func (d *Directory) Targets(n int, except string) []string {
	held, first := map[string]int64{}, map[string]int64{}
	for _, c := range d.chunks {
		for i, w := range c.Workers {
			held[w] += c.NBytes
			if i == 0 {
				first[w] += c.NBytes
			}
		}
	}
	var ws []string
	for _, w := range d.LiveWorkers() {
		if w != except && !d.leaving[w] {
			ws = append(ws, w)
		}
	}
	slices.SortStableFunc(ws, func(a, b string) int { return cmp.Compare(held[a], held[b]) })
	ws = ws[:min(n, len(ws))]
	if len(ws) == 2 && first[ws[1]] < first[ws[0]] {
		ws[0], ws[1] = ws[1], ws[0]
	}
	return ws
}

// Where names the workers holding kept chunk id, the first the one read
// (nil when lost or unknown), and whether it is lost.
func (d *Directory) Where(id uint64) (workers []string, lost bool) {
	if c := d.chunks[id]; c != nil {
		return c.Workers, false
	}
	_, lost = d.lost[id]
	return nil, lost
}

// Chunk returns kept chunk id as the directory holds it.
func (d *Directory) Chunk(id uint64) (Chunk, bool) {
	if c := d.chunks[id]; c != nil {
		return c.Chunk, true
	}
	return Chunk{}, false
}

// Holds says whether the directory places a copy of chunk id on worker
// w. A job's free of such a chunk is not to be sent: the job made it
// again while the directory took it back (an offer, a claim), and the
// directory's copy is the one kept.
func (d *Directory) Holds(id uint64, w string) bool {
	c := d.chunks[id]
	return c != nil && slices.Contains(c.Workers, w)
}

// HeldOn lists the kept chunks with a copy on worker w, sorted.
func (d *Directory) HeldOn(w string) []uint64 {
	var ids []uint64
	for id, c := range d.chunks {
		if slices.Contains(c.Workers, w) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Offers names the workers whose offers of chunk id are remembered for
// a takeover.
func (d *Directory) Offers(id uint64) []string {
	var ws []string
	for _, o := range d.offers[id] {
		ws = append(ws, o.worker)
	}
	return ws
}

// Len is the number of kept chunks with a copy.
func (d *Directory) Len() int { return len(d.chunks) }

// IsLost says whether kept chunk id is lost: no copy, not yet offered
// back or made again.
func (d *Directory) IsLost(id uint64) bool { _, ok := d.lost[id]; return ok }

// Adopted is the number of chunks taken back from workers' offers and
// claimed by takeovers.
func (d *Directory) Adopted() int { return d.adopted }

// Copies is the number of uploads held on two workers.
func (d *Directory) Copies() int {
	n := 0
	for _, c := range d.chunks {
		if c.Upload && len(c.Workers) > 1 {
			n++
		}
	}
	return n
}

// Check verifies the directory's invariants: no chunk both held and lost,
// every held chunk on live workers, once each, a graph's chunk on one.
func (d *Directory) Check() error {
	for id, c := range d.chunks {
		if _, ok := d.lost[id]; ok {
			return fmt.Errorf("chunk %d both held and lost", id)
		}
		if len(c.Workers) == 0 {
			return fmt.Errorf("chunk %d held nowhere", id)
		}
		for i, w := range c.Workers {
			if !d.workers[w] {
				return fmt.Errorf("chunk %d on worker %s, gone", id, w)
			}
			if slices.Contains(c.Workers[:i], w) {
				return fmt.Errorf("chunk %d twice on worker %s", id, w)
			}
		}
	}
	return nil
}

// addTo adds chunk id of session sess at epoch e on worker w to cs,
// grouped by worker and session.
func addTo(cs []Chunks, w string, sess int, e Epoch, id uint64) []Chunks {
	for i := range cs {
		if c := &cs[i]; c.Worker == w && c.Session == sess && c.Epoch == e {
			c.IDs = append(c.IDs, id)
			return cs
		}
	}
	return append(cs, Chunks{Worker: w, Session: sess, Epoch: e, IDs: []uint64{id}})
}

func sortedIDs(m map[uint64]*chunk) []uint64 {
	ids := make([]uint64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
