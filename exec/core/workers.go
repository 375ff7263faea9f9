package core

import "slices"

// This file holds what the Core knows of its workers, and the indexes
// that let a dispatch find the worker it wants without looking at all of
// them: with a thousand workers, a scan of every worker at each dispatch
// made the Core's time an op grow with the cluster (exec/sim measured
// 161 µs an op at 66,667 ops and 346 µs at 666,669 on 1,000 workers).

type workerState struct {
	id          int32 // its index in Core.wnames
	slots       int
	outstanding int // ops sent and not yet reported
	limit       int // bound on outstanding; 0 for none
	roots       int // initial ops outstanding
	rootLimit   int // bound on roots; 0 for none
	// own holds the READY initial ops assigned to the worker that wait
	// for it (a unit's first op for the whole unit).
	own readyHeap
	// pos[h] is 1 + the worker's place in the Core's heap h, 0 when out.
	pos [nheaps]int32
}

// room reports whether the worker takes another op now.
func (w *workerState) room() bool { return w.limit <= 0 || w.outstanding < w.limit }

// rootRoom reports whether the worker takes another initial op now.
func (w *workerState) rootRoom() bool {
	return w.room() && (w.rootLimit <= 0 || w.roots < w.rootLimit)
}

// idle reports whether the worker has a slot with nothing to run and room
// for an initial op: a thief (see steal).
func (w *workerState) idle() bool { return w.outstanding < w.slots && w.rootRoom() }

// free is the worker's slots not taken by the ops sent to it (negative
// when ops wait there for a slot).
func (w *workerState) free() int { return w.slots - w.outstanding }

// The Core's heaps of workers, each holding the workers that meet its
// condition, in its order:
//   - ownReady: workers with initial ops of their own waiting and room for
//     one, by the rank of the best of those ops;
//   - ownAll: workers with initial ops of their own waiting, likewise;
//   - idle: workers with an idle slot and room for an initial op, the most
//     free slots first, then by name;
//   - roomy: workers with room for an op, likewise.
const (
	hOwnReady = iota
	hOwnAll
	hIdle
	hRoomy
	nheaps
)

func (c *Core) initHeaps() {
	byRank := func(a, b *workerState) bool {
		ra, rb := c.rank[a.own.top()], c.rank[b.own.top()]
		return ra < rb || ra == rb && c.wnames[a.id] < c.wnames[b.id]
	}
	byFree := func(a, b *workerState) bool {
		fa, fb := a.free(), b.free()
		return fa > fb || fa == fb && c.wnames[a.id] < c.wnames[b.id]
	}
	c.ownReady = workerHeap{c: c, h: hOwnReady, less: byRank}
	c.ownAll = workerHeap{c: c, h: hOwnAll, less: byRank}
	c.idle = workerHeap{c: c, h: hIdle, less: byFree}
	c.roomy = workerHeap{c: c, h: hRoomy, less: byFree}
}

// addWorker makes the state of a worker that joins.
func (c *Core) addWorker(name string) *workerState {
	w := &workerState{id: c.intern(name), own: readyHeap{rank: c.rank}}
	c.workers[name] = w
	for int(w.id) >= len(c.wstate) {
		c.wstate = append(c.wstate, nil)
	}
	c.wstate[w.id] = w
	return w
}

// removeWorker forgets a worker that left: the initial ops that waited
// for it wait for any worker.
func (c *Core) removeWorker(name string) {
	w := c.workers[name]
	delete(c.workers, name)
	c.wstate[w.id] = nil
	for _, h := range c.heaps() {
		h.remove(w)
	}
	for _, k := range w.own.keys {
		if o := &c.ops[k]; o.state == Ready && !o.sent {
			c.shared.push(k)
		}
	}
	w.own.keys = nil
}

func (c *Core) heaps() [nheaps]*workerHeap {
	return [nheaps]*workerHeap{&c.ownReady, &c.ownAll, &c.idle, &c.roomy}
}

// touch puts worker w where it belongs in each heap, after what they
// order it by (its room, its slots, its own ops) may have changed.
func (c *Core) touch(w *workerState) {
	if c.wstate[w.id] != w {
		return // gone
	}
	own := w.own.len() > 0
	in := [nheaps]bool{own && w.rootRoom(), own, w.idle(), w.room()}
	for i, h := range c.heaps() {
		h.set(w, in[i])
	}
}

// enqueue makes the READY op k wait for a worker: its assigned worker's, if
// it is an initial op on its first run and that worker is up, else any.
func (c *Core) enqueue(k int) {
	o := &c.ops[k]
	if w, up := c.workers[c.wnames[o.worker]]; up && o.initial && o.attempt == 0 {
		w.own.push(k)
		c.touch(w)
	} else {
		c.shared.push(k)
	}
}

// cleanOwn takes off the top of w's own ops those that no longer wait
// for it (sent, or retried after a failure, which waits for any worker).
// It reports whether it took any, having put w back in its heaps.
func (c *Core) cleanOwn(w *workerState) bool {
	took := false
	for w.own.len() > 0 {
		k := w.own.top()
		o := &c.ops[k]
		if o.state == Ready && !o.sent && o.worker == w.id && o.attempt == 0 {
			break
		}
		w.own.pop()
		took = true
		if o.state == Ready && !o.sent {
			c.shared.push(k)
		}
	}
	if took {
		c.touch(w)
	}
	return took
}

// next takes the best-ranked READY op some worker has room for, and that
// worker; it returns -1 when there is none.
func (c *Core) next() (int, string) {
	var bestW *workerState
	for c.ownReady.len() > 0 {
		w := c.ownReady.top()
		if !c.cleanOwn(w) {
			bestW = w
			break
		}
	}
	for c.shared.len() > 0 {
		if o := &c.ops[c.shared.top()]; o.state == Ready && !o.sent {
			break
		}
		c.shared.pop()
	}
	if c.shared.len() > 0 && (bestW == nil || c.rank[c.shared.top()] < c.rank[bestW.own.top()]) {
		k := c.shared.top()
		if w := c.place(k); w != "" {
			c.shared.pop()
			return k, w
		}
	}
	if bestW != nil {
		k := bestW.own.pop()
		c.touch(bestW)
		return k, c.wnames[bestW.id]
	}
	return c.steal()
}

// steal gives a worker with an idle slot and nothing to run an initial op
// that waits for another worker, one without room. Initial ops read no
// input, so they cost nothing to move; but what they make is read by ops
// ranked after them, and the assignment gave each worker a run of the
// rank order, so that a reduction's combines find their partials on one
// worker. The thief takes from the far end of the other's run (its
// last-ranked op, see lateOwn), leaving both runs whole: taking the next
// op each time interleaved them, and a thief's partials then moved to
// the combines on the other side (CLIM-STD moved 19-27 MB, 2% of its
// input, most of it so).
func (c *Core) steal() (int, string) {
	if c.ownAll.len() == 0 || c.idle.len() == 0 {
		return -1, ""
	}
	// A worker with room and ops of its own would have taken one in next:
	// the thief has none, and every worker in ownAll is another.
	thief := c.idle.top()
	for c.ownAll.len() > 0 {
		from := c.ownAll.top()
		if c.cleanOwn(from) {
			continue
		}
		k := c.lateOwn(from)
		c.touch(from)
		return k, c.wnames[thief.id]
	}
	return -1, ""
}

// lateScan bounds the keys lateOwn looks at: the last of a heap's array,
// where its last-ranked keys are (the heap was filled in rank order, and
// what the top's pops move down keeps the tail's rank roughly), so that
// a steal costs the same on a worker with a million ops waiting.
const lateScan = 64

// lateOwn takes from w's own ops (whose top waits for w: cleanOwn) the
// last-ranked of the last lateScan in its heap that still waits for w,
// or the top if none does.
func (c *Core) lateOwn(w *workerState) int {
	keys := w.own.keys
	best := -1
	for i := max(1, len(keys)-lateScan); i < len(keys); i++ {
		o := &c.ops[keys[i]]
		if o.state != Ready || o.sent || o.worker != w.id || o.attempt != 0 {
			continue
		}
		if best < 0 || c.rank[keys[i]] > c.rank[keys[best]] {
			best = i
		}
	}
	if best < 0 {
		return w.own.pop()
	}
	return w.own.removeAt(best)
}

// candidates returns, sorted by name, the workers with room among which
// place picks one for an op whose inputs holders hold: the holders, and
// the best of the others by free slots then name, enough of them that one
// is neither a holder nor the worker a retry avoids. An op's cost on a worker holding none
// of its inputs depends only on the worker's free slots, so the best
// worker for it is among these.
func (c *Core) candidates(holders []string) []string {
	cands := c.cands[:0]
	for _, h := range holders {
		if w, ok := c.workers[h]; ok && w.room() && !slices.Contains(cands, h) {
			cands = append(cands, h)
		}
	}
	for _, w := range c.roomy.best(len(cands) + 2) {
		if name := c.wnames[w.id]; !slices.Contains(cands, name) {
			cands = append(cands, name)
		}
	}
	slices.Sort(cands)
	c.cands = cands
	return cands
}

// A workerHeap is a heap of workers that knows where each is (in
// workerState.pos), so that a worker whose key changed moves, and one
// that no longer belongs leaves, in log time.
type workerHeap struct {
	c    *Core
	h    int // its index in workerState.pos
	ws   []*workerState
	less func(a, b *workerState) bool
	// best's buffers
	out      []*workerState
	frontier []int32
}

func (h *workerHeap) len() int          { return len(h.ws) }
func (h *workerHeap) top() *workerState { return h.ws[0] }

// set puts w in the heap, in its place, or takes it out.
func (h *workerHeap) set(w *workerState, in bool) {
	switch i := int(w.pos[h.h]) - 1; {
	case in && i < 0:
		h.ws = append(h.ws, w)
		w.pos[h.h] = int32(len(h.ws))
		h.up(len(h.ws) - 1)
	case in:
		h.down(h.up(i))
	case i >= 0:
		h.removeAt(i)
	}
}

func (h *workerHeap) remove(w *workerState) {
	if i := int(w.pos[h.h]) - 1; i >= 0 {
		h.removeAt(i)
	}
}

func (h *workerHeap) removeAt(i int) {
	n := len(h.ws) - 1
	h.ws[i].pos[h.h] = 0
	if i != n {
		h.ws[i] = h.ws[n]
		h.ws[i].pos[h.h] = int32(i + 1)
	}
	h.ws[n] = nil
	h.ws = h.ws[:n]
	if i != n {
		h.down(h.up(i))
	}
}

func (h *workerHeap) swap(i, j int) {
	h.ws[i], h.ws[j] = h.ws[j], h.ws[i]
	h.ws[i].pos[h.h] = int32(i + 1)
	h.ws[j].pos[h.h] = int32(j + 1)
}

// up moves the worker at i up to its place and returns where it is.
func (h *workerHeap) up(i int) int {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.ws[i], h.ws[p]) {
			break
		}
		h.swap(i, p)
		i = p
	}
	return i
}

func (h *workerHeap) down(i int) {
	n := len(h.ws)
	for {
		l, m := 2*i+1, i
		if l < n && h.less(h.ws[l], h.ws[m]) {
			m = l
		}
		if r := l + 1; r < n && h.less(h.ws[r], h.ws[m]) {
			m = r
		}
		if m == i {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// best returns the first n workers of the heap in its order (fewer when
// it holds fewer), searching only the heap's top: O(n²); the slice is the
// heap's until the next call.
func (h *workerHeap) best(n int) []*workerState {
	out := h.out[:0]
	defer func() { h.out = out[:0] }()
	if len(h.ws) == 0 {
		return out
	}
	frontier := append(h.frontier[:0], 0)
	for len(out) < n && len(frontier) > 0 {
		// The frontier is small: take its best by a scan.
		b := 0
		for j := range frontier {
			if h.less(h.ws[frontier[j]], h.ws[frontier[b]]) {
				b = j
			}
		}
		i := int(frontier[b])
		frontier[b] = frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		out = append(out, h.ws[i])
		for _, ch := range [2]int{2*i + 1, 2*i + 2} {
			if ch < len(h.ws) {
				frontier = append(frontier, int32(ch))
			}
		}
	}
	h.frontier = frontier
	return out
}
