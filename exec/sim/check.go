package sim

import (
	"fmt"
	"slices"

	"marsfs/exec/custody"
)

// check runs after every step: each Machine's invariants, one serving
// home per session and one home per epoch, every acknowledged write in
// the journal of the serving home, and every kept chunk the directory
// places on a live worker held there.
func (w *World) check() {
	for _, sn := range w.scheds {
		if !sn.alive {
			continue
		}
		if err := sn.m.Check(); err != nil {
			w.fail("%s: %v", sn.name, err)
			return
		}
	}
	if w.epochs == nil {
		w.epochs = map[[2]uint64]string{}
	}
	for _, c := range w.clients {
		var serving *schedNode
		for _, sn := range w.scheds {
			if !sn.alive || !sn.m.Serving(c.id, w.now) {
				continue
			}
			if serving != nil {
				w.fail("session %d served by %s and %s", c.id, serving.name, sn.name)
				return
			}
			serving = sn
			_, e, _ := sn.m.Home(c.id)
			k := [2]uint64{uint64(c.id), uint64(e)}
			if h, ok := w.epochs[k]; ok && h != sn.name {
				w.fail("session %d: epoch %d held by %s and %s", c.id, e, h, sn.name)
				return
			}
			w.epochs[k] = sn.name
		}
		if serving == nil {
			continue
		}
		j := serving.m.Journal(c.id)
		for _, b := range c.acked {
			if b == "open" {
				continue
			}
			if !slices.ContainsFunc(j, func(r custody.Rec) bool { return r.Body == b }) {
				w.fail("session %d: acknowledged write %q is not in the journal of its home %s", c.id, firstLine(b), serving.name)
				return
			}
		}
		if w.steps%64 == 0 {
			w.checkChunks(serving, c.id)
		}
	}
}

// checkChunks checks that the chunks the home's directory places on live
// workers are held there.
func (w *World) checkChunks(sn *schedNode, sess int) {
	for _, r := range sn.m.Journal(sess) {
		for _, ch := range r.Chunks {
			where, _ := sn.m.Where(ch.ID)
			for _, name := range where {
				wk := w.worker(name)
				if wk == nil || !wk.alive {
					continue
				}
				if _, ok := wk.store[ch.ID]; !ok && sn.up[name] {
					w.fail("session %d: chunk %d is on %s by %s's directory, which does not hold it", sess, ch.ID, name, sn.name)
					return
				}
			}
		}
	}
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// final checks, once the run is over, that nothing waits forever.
func (w *World) final() {
	for _, c := range w.clients {
		if !c.finished {
			what := "nothing, its last answer: " + c.lastErr
			if c.cur != nil {
				what = fmt.Sprintf("request kind %d graph %d (step %d, %d retries)", c.cur.kind, c.cur.graph, c.step, c.retries)
			}
			w.stall("session %d never finished: waiting for %s", c.id, what)
			return
		}
	}
}
