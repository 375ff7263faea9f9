package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"marsfs/cluster"
	"marsfs/cluster/ring"
	"marsfs/exec/custody"
	"marsfs/exec/engine"
)

// This file fences a scheduler's sessions: one home per session, even
// when a scheduler comes back from a pause past failure detection, from a
// partition, or is restarted on its old state dir after another took its
// sessions over. It keeps exec/custody's rules, with the ring successor
// as the one that confirms (custody's target):
//
//   - Epochs. A session made here is at epoch 0; a takeover raises it
//     (a journal.KindEpoch record in the new home's journal). Of two
//     schedulers that both hold a session, the one at the lower epoch is
//     stale: it gives the session up (engine.GiveUp: nothing freed, its
//     journal file removed) and answers "session N moved to X (epoch E)".
//   - A lease. A scheduler with another scheduler alive serves its
//     sessions (listings, walks, journaled writes) only until leaseTerm
//     after it sent a renewal its ring successor granted, by its own
//     monotonic clock. A renewal names its sessions and their epochs and
//     goes to every live scheduler; each answer names the sessions the
//     answerer holds at a later epoch, which are given up before the
//     lease is extended. A scheduler back from a pause finds its lease
//     lapsed, asks, and learns of the takeover before it serves again.
//   - Takeover waits the lease out. The successor takes a failed
//     scheduler's sessions over only once the last grant it gave it has
//     lapsed, and grants nothing while a takeover is pending, so the old
//     home's lease has ended before the new home serves.
//   - Synchronous shipping. A synced journal write is acknowledged only
//     once the successor's replica holds the file up to its end
//     (replicator.confirm): what was acknowledged is in the replica a
//     takeover restores from. A replica never takes records of a session
//     its scheduler holds itself: a stale home's diverged journal is
//     answered with the session's move instead.
//   - A restart on an old state dir asks the live schedulers before it
//     restores (restartOwned): a session another holds is not restored,
//     its file removed.
//
// The state and the rules are exec/custody's (custody.Tenure: the lease,
// the renewals sent, the grants given and the takeovers pending, the
// epochs held and the sessions given up), which the fence keeps under
// its lock; this file is the I/O around it: the renewals and grants on
// the wire, the engine's sessions, membership, and the clock.
//
// A home whose successor is declared failed goes on alone only while it
// reaches most of the workers, and a takeover needs the same (fence.view):
// of a partition's two sides, only the one with most workers acts. That
// is a weaker rule than custody's witnesses, which vote once an epoch
// (not wired: no worker votes here).
//
// The workers fence too. A session's jobs, frees and the takeover's
// claims carry the session and its epoch (the journal's) to the workers,
// and a worker refuses those of an epoch below the latest it has seen of
// the session (exec/worker's epochs.go): a home back from a pause, in the
// moment before its lease renewal tells it of the move, can neither run
// nor free anything of the session the new home keeps.

// leaseTerm is how long a grant lets a scheduler serve: shorter than
// memberlist's failure detection (about 5 s by default), so that a
// takeover seldom waits for it.
const leaseTerm = 2 * time.Second

// renewEvery is how often a scheduler renews its lease.
const renewEvery = leaseTerm / 4

// serveWait bounds how long a request waits for a lease to be confirmed.
const serveWait = 5 * time.Second

// held is a session at an epoch, on Home when it is not the sender.
type held struct {
	Session int
	Epoch   uint64
	Home    string `json:",omitempty"`
}

// A renewal asks the live schedulers to confirm this one's lease, naming
// its sessions.
type renewal struct {
	Nonce    uint64
	Sessions []held
}

// A grant answers a renewal: OK extends the lease (when the answerer is
// the asker's successor), Moved names the asker's sessions the answerer
// holds at a later epoch.
type grant struct {
	Nonce uint64
	OK    bool
}

// The answers carry Moved in replMsg.

// A fence is this scheduler's side of the rules above, for the engine
// (engine.Fence) and the replicator. Its lock is taken after the
// replicator's, never before.
type fence struct {
	r    *replicator
	born time.Time // the tenure's clock counts from it (monotonic)

	mu      sync.Mutex
	t       *custody.Tenure
	changed chan struct{} // closed and replaced when the lease or moved change
}

func newFence(r *replicator) *fence {
	return &fence{r: r, born: time.Now(), t: custody.NewTenure(int64(leaseTerm)), changed: make(chan struct{})}
}

// now is the tenure's clock.
func (f *fence) now() int64 { return int64(time.Since(f.born)) }

// movedError is the refusal of session m, given up.
func movedError(m custody.Session) *engine.MovedError {
	return &engine.MovedError{Session: m.Session, Home: m.Home, Epoch: uint64(m.Epoch)}
}

// heldIn says whether a session is held in eng (every one, eng nil).
func heldIn(eng *engine.Engine) func(int) bool {
	return func(id int) bool {
		if eng == nil {
			return true
		}
		_, ok := eng.Session(id)
		return ok
	}
}

// sessionsOf and heldOf turn the wire's sessions into custody's and
// back.
func sessionsOf(hs []held) []custody.Session {
	cs := make([]custody.Session, len(hs))
	for i, h := range hs {
		cs[i] = custody.Session{Session: h.Session, Epoch: custody.Epoch(h.Epoch), Home: h.Home}
	}
	return cs
}

func heldOf(cs []custody.Session, home string) []held {
	var hs []held
	for _, c := range cs {
		h := held{Session: c.Session, Epoch: uint64(c.Epoch), Home: c.Home}
		if h.Home == "" {
			h.Home = home
		}
		hs = append(hs, h)
	}
	return hs
}

// wakeLocked wakes the requests waiting for the lease; f.mu is held.
func (f *fence) wakeLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// peers names the live schedulers other than this one, and this one's
// successor among them.
func (f *fence) peers() (names []string, succ string) {
	names, succ, _ = f.view()
	return names, succ
}

// view is peers, and whether this scheduler may act without a successor:
// it never had another scheduler, or it reaches most of the workers (at
// least one). A scheduler cut off from the others and from the workers
// by a partition is not alone, only cut off: it neither serves without a
// lease nor takes sessions over, while the side with the workers may.
// (Not custody's witness votes: two sides can each count a majority of
// the workers they know only if they know different workers.)
func (f *fence) view() (names []string, succ string, alone bool) {
	s := f.r.sched()
	if s == nil {
		return nil, "", false
	}
	members := s.Members()
	for _, m := range members {
		if m.Meta.Role == cluster.RoleScheduler && m.State == cluster.Alive && m.Name != s.Name() {
			names = append(names, m.Name)
		}
	}
	f.mu.Lock()
	alone = f.t.Alone(len(names), len(names) == 0 && quorum(members))
	f.mu.Unlock()
	if len(names) == 0 {
		return nil, "", alone
	}
	return names, ring.New(append([]string{s.Name()}, names...)).Successor(s.Name()), false
}

// quorum says whether most of the workers of members (at least one) are
// alive: those declared failed count, those that left do not.
func quorum(members []cluster.Member) bool {
	alive, known := 0, 0
	for _, m := range members {
		if m.Meta.Role != cluster.RoleWorker {
			continue
		}
		switch m.State {
		case cluster.Alive:
			alive++
			known++
		case cluster.Failed:
			known++
		}
	}
	return alive > 0 && 2*alive > known
}

// Serve implements engine.Fence: nil while the lease holds (or no other
// scheduler lives), the session's move if it moved, else it asks and
// waits for the lease (serveWait at most).
func (f *fence) Serve(ctx context.Context, session int) error {
	f.mu.Lock()
	m, gone := f.t.Moved(session)
	ok := f.t.Holds(f.now())
	f.mu.Unlock()
	switch {
	case gone && session != 0:
		return movedError(m)
	case ok:
		return nil // the usual case: the lease holds
	}
	deadline := time.NewTimer(serveWait)
	defer deadline.Stop()
	poll := time.NewTicker(renewEvery)
	defer poll.Stop()
	for asked := false; ; asked = true {
		f.mu.Lock()
		if m, gone := f.t.Moved(session); gone && session != 0 {
			f.mu.Unlock()
			return movedError(m)
		}
		ch := f.changed
		ok := f.t.Holds(f.now())
		f.mu.Unlock()
		if ok {
			return nil
		}
		_, succ, alone := f.view()
		if alone {
			return nil // no one else may hold a session
		}
		if !asked && succ != "" {
			f.renew()
		}
		select {
		case <-ch:
		case <-poll.C: // a successor, or the workers, may be back
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			if succ == "" {
				return fmt.Errorf("this scheduler cannot confirm it still holds its sessions: no other scheduler answers, and it reaches too few workers")
			}
			return fmt.Errorf("this scheduler cannot confirm it still holds its sessions: its successor %s has not answered in %v", succ, serveWait)
		}
	}
}

// renew sends a renewal to every live scheduler. It does not block on
// the answers, which come to onGrant.
func (f *fence) renew() {
	names, _ := f.peers()
	eng := f.r.engine()
	if len(names) == 0 || eng == nil {
		return
	}
	f.mu.Lock()
	nonce, ok := f.t.Renew(f.now(), int64(renewEvery/8))
	if !ok {
		f.mu.Unlock()
		return // one is on its way: many requests waiting ask once
	}
	rn := renewal{Nonce: nonce}
	for _, s := range eng.Sessions() {
		if e, gone := f.t.EpochOf(s.ID()); !gone {
			rn.Sessions = append(rn.Sessions, held{Session: s.ID(), Epoch: uint64(e)})
		}
	}
	f.mu.Unlock()
	for _, to := range names {
		f.r.post(to, replMsg{From: f.r.name(), Renew: &rn})
	}
}

// onRenew answers scheduler from's renewal (on the replicator's loop).
func (f *fence) onRenew(from string, rn *renewal) {
	eng := f.r.engine()
	if eng == nil {
		return
	}
	ans := replMsg{From: f.r.name(), Grant: &grant{Nonce: rn.Nonce}}
	_, succ := f.peersOf(from) // before f.mu: peers takes the replicator's lock
	f.mu.Lock()
	ok, moved, stale := f.t.Grant(from, sessionsOf(rn.Sessions), heldIn(eng), succ == f.r.name(), f.now())
	f.mu.Unlock()
	ans.Grant.OK = ok
	ans.Moved = heldOf(moved, f.r.name())
	f.giveUp(heldOf(stale, from))
	f.r.post(from, ans)
}

// peersOf gives the successor of scheduler name on the ring of the live
// schedulers with it.
func (f *fence) peersOf(name string) ([]string, string) {
	names, _ := f.peers()
	all := append([]string{f.r.name()}, names...)
	if !slices.Contains(all, name) {
		all = append(all, name)
	}
	return names, ring.New(all).Successor(name)
}

// onGrant takes an answer to a renewal, whose moved sessions were given
// up first: the lease is extended from the renewal's send.
func (f *fence) onGrant(from string, g *grant) {
	_, succ := f.peers()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t.Answered(from, g.Nonce, g.OK, from == succ)
	f.wakeLocked()
}

// giveUp gives up the sessions others hold at later epochs.
func (f *fence) giveUp(moved []held) {
	eng := f.r.engine()
	f.mu.Lock()
	gone := f.t.GiveUp(sessionsOf(moved), heldIn(eng))
	if len(gone) > 0 {
		f.wakeLocked()
	}
	f.mu.Unlock()
	for _, g := range gone {
		if eng == nil {
			continue
		}
		m := movedError(g)
		logPrefixed("%v: given up here, nothing of it freed", m)
		// Not on the caller's goroutine: GiveUp takes the session's lock,
		// which a write waiting on this fence may hold.
		go eng.GiveUp(m.Session, m)
	}
}

// hold records sessions held here at an epoch above 0 (restored or taken
// over).
func (f *fence) hold(session int, epoch uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t.Hold(session, custody.Epoch(epoch))
}

// failed notes scheduler name declared failed: no grants until its
// takeover is done (done).
func (f *fence) failed(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t.Failed(name)
}

// done ends the takeover of scheduler name.
func (f *fence) done(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t.Done(name)
}

// waitGrantLapsed waits until the last grant given to scheduler name has
// run out: from then on it serves nothing it has not confirmed again,
// which pending refuses.
func (f *fence) waitGrantLapsed(ctx context.Context, name string) {
	f.mu.Lock()
	d := time.Duration(f.t.GrantLapses(name) - f.now())
	f.mu.Unlock()
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// restartOwned asks the live schedulers, before this one restores its
// journal's sessions (at their epochs), which of them another holds at a
// later epoch, waiting (within wait) until every live scheduler has
// answered with a grant. It returns those moved.
func (f *fence) restartOwned(ctx context.Context, sessions []held, wait time.Duration) ([]held, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var moved []held
	f.mu.Lock()
	f.t.Restarting(true)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.t.Restarting(false)
		f.mu.Unlock()
	}()
	f.r.mu.Lock()
	f.r.restarting = func(h held) { moved = append(moved, h) }
	f.r.mu.Unlock()
	defer func() {
		f.r.mu.Lock()
		f.r.restarting = nil
		f.r.mu.Unlock()
	}()
	tick := time.NewTicker(renewEvery)
	defer tick.Stop()
	for {
		names, _ := f.peers()
		if len(names) == 0 {
			return nil, nil
		}
		f.mu.Lock()
		all := f.t.AllAnswered(names)
		ch := f.changed
		f.mu.Unlock()
		if all {
			f.r.mu.Lock()
			out := slices.Clone(moved)
			f.r.mu.Unlock()
			return out, nil
		}
		f.mu.Lock()
		rn := renewal{Nonce: f.t.Ask(), Sessions: sessions}
		f.mu.Unlock()
		for _, to := range names {
			f.r.post(to, replMsg{From: f.r.name(), Renew: &rn})
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-ctx.Done():
			return nil, errors.New("the other schedulers did not all answer whether they hold its sessions")
		}
	}
}

// epochOf is the epoch session is held at here, and whether it is given
// up.
func (f *fence) epochOf(session int) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, gone := f.t.EpochOf(session)
	return uint64(e), gone
}
