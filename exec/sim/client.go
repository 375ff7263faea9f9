package sim

import (
	"fmt"
	"strings"

	"marsfs/cluster/ring"
	"marsfs/exec/custody"
)

// specs are what the clients submit: real specs, tiled and fused by the
// real packages. %d is the size, which Config.Scale multiplies.
var specs = []string{
	"x = rand(%d, chunks=%d, seed=1)\ny = (x * 2 + 1).sum()",
	"a = arange(%d, chunks=%d)\nb = (a * a).mean()\nc = a + 1",
	"x = rand(%d, chunks=%d, seed=7)\nm = x.max()\nv = x.var()",
	"x = ones(%d, chunks=%d)\ny = (x * 3).cumsum()",
}

// specOf is the spec client c submits as its graph g.
func (c *client) specOf(g int) string {
	if sp := c.w.cfg.Specs; len(sp) > 0 {
		return sp[(g-1+c.id)%len(sp)]
	}
	return specText(g-1+c.id, c.w.cfg.Scale)
}

// specText is spec i at scale n.
func specText(i, n int) string {
	size := 40000 * n
	return fmt.Sprintf(specs[i%len(specs)], size, size/(8+4*(i%3)))
}

// A client is a user of one session: it opens it, uploads a tensor,
// submits graphs, waits for each, reads what each kept and the upload,
// and follows a home that moved.
type client struct {
	w        *World
	id       int // the session's number
	nd       node
	step     int
	cur      *request
	home     string
	finished bool
	acked    []string // bodies of the writes acknowledged
	retries  int
	lastErr  string // the last refusal, for a report of a client that never finished
	began    int64  // when the current step's first request went
}

func newClient(w *World, id int) *client {
	return &client{w: w, id: id, nd: node{name: fmt.Sprintf("client-%d", id), alive: true}}
}

func bodyOf(kind string, sess, g int, who string, n uint64) string {
	return fmt.Sprintf("%s %d %d %s %d", kind, sess, g, who, n)
}

// uploadChunk is the one chunk of the session's upload.
func (c *client) uploadChunk() (uint64, uint64) { return chunkID(c.id, 0, 0), 0xabc0000 + uint64(c.id) }

// expected gives the chunks graph g keeps (0: the upload) and their
// fault-free digests.
func (c *client) expected(g int) ([]uint64, []uint64) {
	if g == 0 {
		id, d := c.uploadChunk()
		return []uint64{id}, []uint64{d}
	}
	p, err := planOf(c.specOf(g))
	if err != nil {
		c.w.fail("%v", err)
		return nil, nil
	}
	var ids, ds []uint64
	for _, k := range p.keep {
		ids = append(ids, chunkID(c.id, g, k))
		ds = append(ds, p.digest[k])
	}
	return ids, ds
}

// next makes the client's next request: open, upload, then for each
// graph submit, wait and read, then read the upload.
func (c *client) next() {
	g := c.w.cfg.Graphs
	var r *request
	switch {
	case c.step == 0:
		r = &request{kind: reqOpen}
	case c.step == 1:
		id, _ := c.uploadChunk()
		r = &request{kind: reqWrite, rec: &custody.Rec{Kind: custody.KindUpload, Body: bodyOf("upload", c.id, 0, "", 0),
			Chunks: []custody.Chunk{{ID: id, NBytes: 8 << 10, Upload: true}}}}
	case c.step < 2+3*g:
		n := 1 + (c.step-2)/3
		switch (c.step - 2) % 3 {
		case 0:
			r = &request{kind: reqWrite, graph: n, rec: &custody.Rec{Kind: custody.KindSubmit, Graph: n,
				Body: bodyOf("submit", c.id, n, "", 0) + "\n" + c.specOf(n)}}
		case 1:
			r = &request{kind: reqWait, graph: n}
		case 2:
			r = &request{kind: reqRead, graph: n}
		}
	case c.step == 2+3*g:
		r = &request{kind: reqRead, graph: 0}
	default:
		c.finished = true
		return
	}
	r.c, r.session, r.step = c, c.id, c.step
	c.began = c.w.now
	c.send(r, c.home)
}

// send sends r to scheduler to (the ring home of the live schedulers
// when empty), and asks again if no answer comes within 3 s.
func (c *client) send(r *request, to string) {
	w := c.w
	c.cur = r
	sn := w.sched(to)
	if sn == nil || !sn.alive {
		var names []string
		for _, x := range w.liveScheds() {
			names = append(names, x.name)
		}
		sn = w.sched(ring.New(names).Home(uint64(c.id)))
	}
	if sn == nil {
		w.at(w.now+time500, func() { c.send(r, "") })
		return
	}
	r.sent = w.now
	if r.rec != nil && r.rec.Kind == custody.KindUpload && len(r.rec.Chunks[0].Workers) == 0 {
		if !c.put(sn, r) {
			// No worker to hold it yet: asked again.
			w.at(w.now+time500, func() { c.send(r, to) })
			return
		}
	}
	w.send(&c.nd, &sn.node, 256, func() { sn.request(r) })
	w.at(w.now+3*s, func() {
		if c.cur == r {
			c.cur = nil // a late answer to it is not taken
			c.retry(r, c.after(sn.name))
		}
	})
}

const time500 = 500 * ms

// put stores the upload's chunk on two workers the scheduler chose,
// before its record is written (as sched.Put does).
func (c *client) put(sn *schedNode, r *request) bool {
	id, digest := c.uploadChunk()
	var ws []*workerNode
	for _, wk := range c.w.workers {
		if wk.alive && sn.up[wk.name] && len(ws) < 2 {
			ws = append(ws, wk)
		}
	}
	if k := len(c.w.workers); k > 2 {
		// Spread the sessions' uploads: start from the session's place.
		var all []*workerNode
		for i := range k {
			wk := c.w.workers[(c.id*7+i)%k]
			if wk.alive && sn.up[wk.name] {
				all = append(all, wk)
			}
		}
		ws = all[:min(2, len(all))]
	}
	if len(ws) == 0 {
		return false
	}
	ch := &r.rec.Chunks[0]
	for _, wk := range ws {
		wk.store[id] = stored{digest: digest, nbytes: ch.NBytes}
		wk.st.Put(id)
		ch.Workers = append(ch.Workers, wk.name)
		c.w.stats.BytesMoved += ch.NBytes
	}
	return true
}

// after names the live scheduler after name, in order.
func (c *client) after(name string) string {
	live := c.w.liveScheds()
	for i, sn := range live {
		if sn.name == name {
			return live[(i+1)%len(live)].name
		}
	}
	if len(live) > 0 {
		return live[0].name
	}
	return ""
}

// retry sends r again, to home if given.
func (c *client) retry(r *request, home string) {
	c.retries++
	if r.step != c.step {
		return
	}
	nr := *r
	if nr.rec != nil {
		rec := *nr.rec
		nr.rec = &rec
	}
	c.home = home
	c.w.at(c.w.now+100*ms, func() { c.send(&nr, home) })
}

// answer takes a scheduler's answer to r: err empty is success.
func (c *client) answer(sn *schedNode, r *request, err, to string) {
	w := c.w
	w.send(&sn.node, &c.nd, 128, func() {
		if c.cur != r || r.step != c.step {
			return // an answer to an attempt given up
		}
		c.cur = nil
		w.trace("client %d: step %d kind %d graph %d answered by %s: %q", c.id, c.step, r.kind, r.graph, sn.name, err)
		c.lastErr = fmt.Sprintf("%s from %s (step %d, %d retries)", err, sn.name, c.step, c.retries)
		switch {
		case err == "":
			w.stats.Acked++
			if r.kind == reqWrite {
				w.stats.WriteNs = append(w.stats.WriteNs, w.now-c.began)
				c.acked = append(c.acked, r.rec.Body)
				if r.rec.Kind == custody.KindSubmit {
					w.stats.SubmitAckNs = append(w.stats.SubmitAckNs, w.now-r.sent)
				}
			}
			if r.kind == reqOpen {
				c.acked = append(c.acked, "open")
			}
			c.home = sn.name
			c.step++
			c.retries = 0
			// A user thinks between requests: the work spans the faults.
			think := int64(0)
			if w.cfg.Think > 0 {
				think = w.rng.Int64N(w.cfg.Think)
			}
			w.at(w.now+ms+think, c.next)
		case err == "graph failed":
			// The graph failed for good: nothing to read of it.
			c.step += 2
			c.retries = 0
			w.at(w.now+ms, c.next)
		case err == "forward":
			c.retry(r, to)
		case strings.Contains(err, "moved to"):
			w.stats.Refused++
			c.retry(r, to)
		case strings.Contains(err, "not served here"):
			// Not this one's (it restarted, or never had it): the next
			// live scheduler is asked, as a listing of /sessions asks
			// every one.
			w.stats.Refused++
			c.retry(r, c.after(sn.name))
		default:
			w.stats.Refused++
			c.retry(r, "")
		}
	})
}
