package main

import (
	"context"
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
	return &stateDir{dir: d, loaded: loaded, opened: time.Now()}, nil
}

// expect tells the scheduler of the chunks the journal's sessions hold,
// for it to take them back from the workers that kept them as orphans.
func (st *stateDir) expect(cfg *sched.Config) {
	if st == nil {
		return
	}
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
	if adopted, missing := s.WaitExpected(ctx, adoptWait); adopted+missing > 0 {
		logPrefixed("took back %d chunks from the workers in %v; %d are missing, to be made again from lineage when needed",
			adopted, time.Since(st.opened).Round(time.Millisecond), missing)
	}
	eng.SetJournal(st.dir, logPrefixed)
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
