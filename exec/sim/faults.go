package sim

import (
	"fmt"

	"marsfs/exec/custody"
)

// membership runs every 500 ms: each running scheduler hears from the
// schedulers and workers it can reach, and declares failed those it has
// not heard from for DetectAfter; each worker does the same of the
// schedulers, closing its connection to one it gave up (at once when
// that one was killed: the connection breaks). A connection is opened
// again when both ends hear each other.
func (w *World) membership() {
	reach := func(a, b *node) bool { return a.alive && b.alive && !b.paused && !a.cut && !b.cut }
	for _, sn := range w.scheds {
		if !sn.alive || sn.paused {
			continue
		}
		for _, o := range w.scheds {
			if o == sn {
				continue
			}
			if reach(&sn.node, &o.node) {
				sn.seen[o.name] = w.now
				if !sn.up[o.name] {
					sn.up[o.name] = true
					sn.step(custody.Input{Kind: custody.InPeerUp, Peer: o.name})
				}
			} else if sn.up[o.name] && w.now-sn.seen[o.name] > w.cfg.DetectAfter {
				sn.up[o.name] = false
				sn.step(custody.Input{Kind: custody.InPeerDown, Peer: o.name})
			}
		}
		for _, wk := range w.workers {
			if reach(&sn.node, &wk.node) {
				sn.seen[wk.name] = w.now
			} else if sn.up[wk.name] && w.now-sn.seen[wk.name] > w.cfg.DetectAfter/5 {
				sn.workerDown(wk.name)
			}
		}
	}
	for _, wk := range w.workers {
		if !wk.alive {
			continue
		}
		for _, sn := range w.scheds {
			c := wk.conns[sn.name]
			switch {
			case c != nil && (!sn.alive || c.inc != sn.inc):
				wk.disconnect(sn.name) // killed: the connection broke
			case c != nil && sn.dropped[wk.name] && reach(&wk.node, &sn.node):
				// The scheduler closed it: connected again next round.
				delete(sn.dropped, wk.name)
				wk.disconnect(sn.name)
			case reach(&wk.node, &sn.node):
				wk.seen[sn.name] = w.now
				if c == nil && !sn.paused {
					wk.connect(sn)
				}
			case c != nil && w.now-wk.seen[sn.name] > w.cfg.DetectAfter:
				wk.disconnect(sn.name)
				// The scheduler, when it runs again, finds the
				// connection broken.
				name := wk.name
				w.on(&sn.node, 0, func() { sn.workerDown(name) })
			}
		}
	}
	w.at(w.now+500*ms, w.membership)
}

// fault draws the next fault, until FaultsUntil.
func (w *World) fault() {
	if w.now >= w.cfg.FaultsUntil {
		return
	}
	defer w.at(w.now+w.cfg.FaultEvery/2+w.frng.Int64N(w.cfg.FaultEvery), w.fault)
	d := 2*s + w.frng.Int64N(12*s) // how long it lasts
	switch k := w.frng.IntN(10); {
	case k < 3 && len(w.workers) > 2:
		wk := w.workers[w.frng.IntN(len(w.workers))]
		if !wk.alive || w.liveWorkers() <= 2 {
			return
		}
		w.note("kill %s", wk.name)
		wk.alive, wk.dead = false, w.now
		wk.inc++
		// Its connections break: the schedulers hear of it at once.
		for _, sn := range w.scheds {
			sn := sn
			if sn.alive && !sn.cut {
				w.on(&sn.node, 200*1000, func() { sn.workerDown(wk.name) })
			}
		}
		w.at(w.now+d, func() { w.restartWorker(wk) })
	case k < 5:
		sn := w.pickSched()
		if sn == nil {
			return
		}
		w.note("pause %s for %.1fs", sn.name, float64(d)/1e9)
		sn.paused = true
		w.at(w.now+d, func() { w.resume(sn) })
	case k < 7:
		sn := w.pickSched()
		if sn == nil {
			return
		}
		w.note("kill %s, restarted on its state dir after %.1fs", sn.name, float64(d)/1e9)
		sn.alive = false
		sn.inc++
		w.at(w.now+d, func() { sn.boot(nil); w.at(w.now+100*ms, sn.tick) })
	case k < 9:
		sn := w.pickSched()
		if sn == nil {
			return
		}
		w.note("partition %s for %.1fs", sn.name, float64(d)/1e9)
		sn.cut = true
		w.at(w.now+d, func() { sn.cut = false })
	default:
		sn := w.pickSched()
		if sn == nil {
			return
		}
		w.note("fill %s's disk for %.1fs", sn.name, float64(d)/1e9)
		sn.full = true
		w.at(w.now+d, func() { sn.full = false })
	}
}

func (w *World) note(format string, args ...any) {
	f := fmt.Sprintf("%.2fs ", float64(w.now)/1e9) + fmt.Sprintf(format, args...)
	w.stats.Faults = append(w.stats.Faults, f)
	w.trace("%s", f)
}

// pickSched draws a scheduler that is alive and not under another fault.
func (w *World) pickSched() *schedNode {
	var l []*schedNode
	for _, sn := range w.scheds {
		if sn.alive && !sn.paused && !sn.cut && !sn.full {
			l = append(l, sn)
		}
	}
	if len(l) == 0 {
		return nil
	}
	return l[w.frng.IntN(len(l))]
}

func (w *World) liveWorkers() int {
	n := 0
	for _, wk := range w.workers {
		if wk.alive {
			n++
		}
	}
	return n
}

// resume lets a paused scheduler go on: what came meanwhile is taken in
// order.
func (w *World) resume(sn *schedNode) {
	if !sn.alive {
		return
	}
	sn.paused = false
	held := sn.held
	sn.held = nil
	for _, fn := range held {
		if sn.paused || !sn.alive {
			sn.held = append(sn.held, fn)
			continue
		}
		fn()
	}
}

// restartWorker starts a killed worker again, empty and under a new
// name, as marsfs up's supervisor does: it knows no epoch and holds no
// chunk, and nobody takes it for the one that died.
func (w *World) restartWorker(wk *workerNode) {
	w.restarts++
	fresh := newWorker(w, fmt.Sprintf("%s.%d", wk.name, w.restarts))
	w.workers = append(w.workers, fresh)
	w.wmap[fresh.name] = fresh
}
