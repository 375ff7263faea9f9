package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/exec/journal"
	"marsfs/exec/sched"
)

// A stateDir is a scheduler's --state-dir: the journal of its sessions
// (package exec/journal), read back when the scheduler starts.
type stateDir struct {
	dir    *journal.Dir
	loaded []journal.Loaded
	opened time.Time
	rep    *replicator // the journal's copy on the ring successor (takeover.go)
}

// openState opens the state directory at path ("" for none: nil) and
// reads back the journal a scheduler before this one left there.
func openState(path string) (*stateDir, error) {
	if path == "" {
		return nil, nil
	}
	d, err := journal.OpenDir(path)
	if err != nil {
		return nil, err
	}
	loaded, err := d.Load()
	if err != nil {
		return nil, err
	}
	st := &stateDir{dir: d, loaded: loaded, opened: time.Now()}
	st.rep = newReplicator(st)
	return st, nil
}

// expect tells the scheduler of the chunks the journal's sessions hold,
// for it to take them back from the workers that kept them as orphans.
func (st *stateDir) expect(cfg *sched.Config) {
	if st == nil {
		return
	}
	cfg.OnMsg = st.rep.onMsg
	for _, l := range st.loaded {
		if l.State == nil || l.State.Closed {
			continue
		}
		chunks, uploads := l.State.Chunks()
		for _, c := range chunks {
			loc := core.Location{ID: c.ID, NBytes: c.NBytes}
			if len(c.Workers) > 0 {
				loc.Worker = c.Workers[0]
			}
			cfg.Expect = append(cfg.Expect, loc)
		}
		cfg.ExpectUploads = append(cfg.ExpectUploads, uploads...)
	}
}

// adoptWait bounds how long a restarted scheduler waits for the workers
// of the scheduler before it to offer back the chunks they kept.
const adoptWait = 15 * time.Second

// restore makes the engine keep its journal in the state directory and
// rebuilds the sessions it holds, saying so in the log. It first waits
// (adoptWait at most) for the workers to hand back the chunks they kept,
// so that none is made again that a worker was about to give back.
func (st *stateDir) restore(ctx context.Context, eng *engine.Engine, s *sched.Scheduler) {
	if st == nil {
		return
	}
	st.rep.attach(s)
	st.dropMoved(ctx, s)
	if adopted, missing := s.WaitExpected(ctx, adoptWait); adopted+missing > 0 {
		logPrefixed("took back %d chunks from the workers in %v; %d are missing, to be made again from lineage when needed",
			adopted, time.Since(st.opened).Round(time.Millisecond), missing)
	}
	for _, l := range st.loaded {
		if l.Cut > 0 {
			logPrefixed("session %d: its journal ended in a record cut short at byte %d, never acknowledged: cut off", l.Session, l.Cut)
		}
	}
	st.dir.SetShip(st.rep.ship)
	st.dir.SetConfirm(st.rep.confirm)
	eng.SetJournal(st.dir, logPrefixed)
	eng.SetFence(st.rep.fence)
	for _, l := range st.loaded {
		if l.State != nil {
			st.rep.fence.hold(l.Session, l.State.Epoch)
		}
	}
	// Running before the sessions are restored: a graph run again
	// journals, and its write waits for the successor's replica.
	st.rep.start(ctx, s, eng)
	res, err := eng.Restore(st.loaded)
	if err != nil {
		logPrefixed("state dir %s: %v", st.dir.Path(), err)
		return
	}
	for _, l := range res.Lost {
		logPrefixed("session %d lost: its journal in %s is damaged (%v); the file is left as it is", l.Session, st.dir.Path(), l.Err)
	}
	if res.Sessions > 0 || len(res.Lost) > 0 {
		logPrefixed("restored %d sessions from %s in %v: %d chunks of kept and uploaded tensors, expected back from the workers; %d graphs that were running run again; %d sessions lost",
			res.Sessions, st.dir.Path(), time.Since(st.opened).Round(time.Millisecond), res.Chunks, res.Rerun, len(res.Lost))
	}
}

// dropMoved asks the live schedulers which of the journal's sessions
// one of them took over while this scheduler was down (fence.go), and
// forgets those: their files removed, their chunks not taken back.
func (st *stateDir) dropMoved(ctx context.Context, s *sched.Scheduler) {
	var mine []held
	for _, l := range st.loaded {
		if l.State != nil && !l.State.Closed {
			mine = append(mine, held{Session: l.Session, Epoch: l.State.Epoch})
		}
	}
	if len(mine) == 0 {
		return
	}
	moved, err := st.rep.fence.restartOwned(ctx, mine, adoptWait)
	if err != nil {
		logPrefixed("restoring %d sessions from %s: %v; a session another holds is given up when it answers", len(mine), st.dir.Path(), err)
	}
	gone := map[int]held{}
	for _, h := range moved {
		gone[h.Session] = h
	}
	keep := st.loaded[:0]
	var ids []uint64
	for _, l := range st.loaded {
		h, ok := gone[l.Session]
		if !ok || l.State == nil || h.Epoch <= l.State.Epoch {
			keep = append(keep, l)
			continue
		}
		chunks, _ := l.State.Chunks()
		for _, c := range chunks {
			ids = append(ids, c.ID)
		}
		if err := st.dir.Remove(l.Session); err != nil {
			logPrefixed("%v", err)
		}
		logPrefixed("%v while this scheduler was down: not restored, its chunks left to it",
			&engine.MovedError{Session: l.Session, Home: h.Home, Epoch: h.Epoch})
	}
	st.loaded = keep
	s.Unexpect(ids)
}

// gossip returns the gossip address for up to bind: the one an up before
// it on this state dir used (kept in DIR/gossip), when flag is the
// default, any port; so that the workers that outlived that up, which
// join its address again and again, meet this one.
func (st *stateDir) gossip(flag string) string {
	if st == nil || flag != "127.0.0.1:0" {
		return flag
	}
	b, err := os.ReadFile(filepath.Join(st.dir.Path(), "gossip"))
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return flag
	}
	return strings.TrimSpace(string(b))
}

// keepGossip writes the scheduler's gossip address in DIR/gossip.
func (st *stateDir) keepGossip(addr string) {
	if st == nil {
		return
	}
	if err := os.WriteFile(filepath.Join(st.dir.Path(), "gossip"), []byte(addr+"\n"), 0o600); err != nil {
		logPrefixed("state dir: %v", err)
	}
}

// takeWorkers waits for the workers of the up before this one to come
// back with what they kept (Scheduler.WaitExpected), and makes kids stop
// them with its own. It returns their names.
func (st *stateDir) takeWorkers(ctx context.Context, s *sched.Scheduler, kids *children) map[string]bool {
	taken := map[string]bool{}
	if st == nil || len(s.Expected()) == 0 {
		return taken
	}
	s.WaitExpected(ctx, adoptWait)
	for _, w := range s.Workers() {
		if !w.Connected || w.PID <= 0 {
			continue
		}
		p, err := os.FindProcess(w.PID)
		if err != nil {
			continue
		}
		taken[w.Name] = true
		kids.adopted = append(kids.adopted, p)
		logPrefixed("worker %s (pid %d) of the up before this one is back: taken", w.Name, w.PID)
	}
	return taken
}
