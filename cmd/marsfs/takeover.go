package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"marsfs/cluster"
	"marsfs/cluster/ring"
	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/exec/journal"
	"marsfs/exec/sched"
)

// This file keeps a scheduler's journal on the next scheduler of the ring
// as well, and takes a dead scheduler's sessions over from the copy it
// kept of its journal (docs/marsfs.4.md, SCHEDULERS AND HOSTS).
//
// Every write of a session's file (journal.Dir.SetShip) is queued and
// sent, in batches, to the ring successor of this scheduler among the
// live ones, as a memberlist message (cluster.Node.Send: a TCP
// connection, encrypted as gossip is). The successor applies each to its
// replica, DIR/replica/NAME (journal.Replica): the same bytes, framing and
// checksums. Messages may arrive out of order or not at all; a replica
// that finds a gap asks for the session again, and the shipper, which
// keeps what it shipped of every session in memory, sends the whole file.
// When the successor changes, the new one is sent every session whole.
//
// When memberlist declares a scheduler failed (not one that left: that
// one is stopping, to restart from its own state dir), the scheduler
// that was its successor restores its sessions from the replica as a
// restart does: the chunks they kept taken from the workers that offered
// them as orphans (sched.Scheduler.Claim), the others made again from
// lineage when needed, a graph that was running run again. The sessions
// keep their numbers and live on here from then on, in this scheduler's
// own journal (shipped to its own successor in turn).

// A replicator ships this scheduler's journal and keeps its
// predecessors'.
type replicator struct {
	st *stateDir

	mu      sync.Mutex
	s       *sched.Scheduler // nil until started
	eng     *engine.Engine
	mirror  map[int][]byte // each session's file as shipped
	dirty   map[int]bool   // sessions to send whole (or removed, without a mirror)
	pending []journal.Shipment
	target  string // the successor the mirror was last sent to
	inbox   []replMsg
	wake    chan struct{}

	fence  *fence
	taking sync.Mutex // held by a takeover
	// acked is, for each session, the end of its file the target's
	// replica holds (Acked answers); ackWake is closed and replaced when
	// it or the target changes (confirm waits on it).
	acked   map[int]int64
	ackWake chan struct{}
	// refused holds the sessions the target answered a ship of with
	// their move: the target holds them at a later epoch.
	refusedBy map[int]held
	// restarting, while a restart asks who holds its sessions
	// (fence.restartOwned), takes the moves the answers name.
	restarting func(held)

	// takeovers counts the failed schedulers this one took over, and
	// takenSessions their sessions it restored (/cluster/metrics).
	takeovers, takenSessions atomic.Uint64
}

func newReplicator(st *stateDir) *replicator {
	r := &replicator{st: st, mirror: map[int][]byte{}, dirty: map[int]bool{}, wake: make(chan struct{}, 1),
		acked: map[int]int64{}, ackWake: make(chan struct{}), refusedBy: map[int]held{}}
	r.fence = newFence(r)
	return r
}

func (r *replicator) sched() *sched.Scheduler {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s
}

func (r *replicator) engine() *engine.Engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.eng
}

func (r *replicator) name() string {
	if s := r.sched(); s != nil {
		return s.Name()
	}
	return ""
}

// confirmWait bounds how long a synced write waits for the successor's
// replica to hold it: past it, the write is refused.
const confirmWait = 10 * time.Second

// confirm waits until the successor's replica holds session's file up to
// end (journal.Dir.SetConfirm): the write is acknowledged only then, so
// a takeover finds every acknowledged write. A scheduler with no live
// successor confirms at once; when the successor changes, the new one is
// sent the file whole and its answer counts.
func (r *replicator) confirm(session int, end int64) error {
	deadline := time.NewTimer(confirmWait)
	defer deadline.Stop()
	poll := time.NewTicker(renewEvery) // membership changes are not announced here
	defer poll.Stop()
	for {
		_, succ, alone := r.fence.view()
		r.mu.Lock()
		if h, ok := r.refusedBy[session]; ok {
			delete(r.refusedBy, session)
			r.mu.Unlock()
			return &engine.MovedError{Session: session, Home: h.Home, Epoch: h.Epoch}
		}
		done := succ == "" && alone || succ != "" && succ == r.target && r.acked[session] >= end
		ch := r.ackWake
		r.mu.Unlock()
		if done {
			return nil
		}
		r.poke()
		select {
		case <-ch:
		case <-poll.C:
		case <-deadline.C:
			if succ == "" {
				return fmt.Errorf("no other scheduler holds it, and this one reaches too few workers to go on alone")
			}
			return fmt.Errorf("its successor %s has not confirmed holding it in %v", succ, confirmWait)
		}
	}
}

// maxPending bounds the appends queued: past it, the sessions are sent
// whole instead (the mirror has them).
const maxPending = 4096

// ship queues a write of one of this scheduler's session files. It is
// called with the session's log locked: it does not block.
func (r *replicator) ship(sh journal.Shipment) {
	r.mu.Lock()
	switch {
	case sh.Remove:
		delete(r.mirror, sh.Session)
		r.dirty[sh.Session] = true
	case sh.Reset:
		r.mirror[sh.Session] = sh.Frames
		r.dirty[sh.Session] = true
	case int64(len(r.mirror[sh.Session])) == sh.Offset:
		r.mirror[sh.Session] = append(r.mirror[sh.Session], sh.Frames...)
		if !r.dirty[sh.Session] && len(r.pending) < maxPending {
			r.pending = append(r.pending, sh)
		} else {
			r.dirty[sh.Session] = true
		}
	default:
		r.dirty[sh.Session] = true // cannot happen: a Log's writes follow on
	}
	r.mu.Unlock()
	r.poke()
}

func (r *replicator) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// A replMsg is what schedulers send one another: shipments of From's
// journal, or (Again) the sessions From wants sent whole, or (Acked) how
// far its replica holds them; a renewal of From's lease (fence.go) and
// its answer (Grant); and the sessions the sender holds at a later epoch
// than the receiver (Moved), answering a renewal or a shipment.
type replMsg struct {
	From  string
	Ships []journal.Shipment `json:",omitempty"`
	Again []int              `json:",omitempty"`
	Acked []shipAck          `json:",omitempty"`
	Moved []held             `json:",omitempty"`
	Renew *renewal           `json:",omitempty"`
	Grant *grant             `json:",omitempty"`
	// Epochs are the epochs From holds the sessions of Ships at, where
	// above 0.
	Epochs map[int]uint64 `json:",omitempty"`
}

// A shipAck says the replica holds a session's file up to End.
type shipAck struct {
	Session int
	End     int64
}

const replTag = 'J' // the first byte of a replMsg, for other messages to come

// onMsg receives another scheduler's message (sched.Config.OnMsg): the
// answers (acknowledgements of ships, grants, moves) are taken at once,
// so that a write or a request waiting on them goes on; the rest is
// queued for loop.
func (r *replicator) onMsg(msg []byte) {
	if len(msg) == 0 || msg[0] != replTag {
		return
	}
	var m replMsg
	if err := json.Unmarshal(msg[1:], &m); err != nil || m.From == "" {
		return
	}
	if len(m.Moved) > 0 {
		r.mu.Lock()
		restarting := r.restarting
		if restarting != nil {
			for _, h := range m.Moved {
				restarting(h)
			}
		}
		for _, h := range m.Moved {
			if e, _ := r.fence.epochOf(h.Session); m.From == r.target && m.Grant == nil && h.Epoch > e {
				r.refusedBy[h.Session] = h
			}
		}
		r.mu.Unlock()
		if restarting == nil {
			r.fence.giveUp(m.Moved)
		}
	}
	if m.Grant != nil {
		r.fence.onGrant(m.From, m.Grant)
	}
	if len(m.Acked) > 0 || len(m.Moved) > 0 {
		r.mu.Lock()
		if m.From == r.target {
			for _, a := range m.Acked {
				r.acked[a.Session] = max(r.acked[a.Session], a.End)
			}
		}
		close(r.ackWake)
		r.ackWake = make(chan struct{})
		r.mu.Unlock()
	}
	if len(m.Ships) == 0 && len(m.Again) == 0 && m.Renew == nil {
		return
	}
	r.mu.Lock()
	started := r.eng != nil
	if !started {
		r.inbox = append(r.inbox, m) // for loop, once it runs
	}
	r.mu.Unlock()
	if started {
		// At once, not through loop: a home's synced write waits for
		// the answer.
		r.handle(m)
	}
}

// attach gives the replicator its scheduler before it starts, for a
// restart to ask the others (stateDir.dropMoved).
func (r *replicator) attach(s *sched.Scheduler) {
	r.mu.Lock()
	r.s = s
	r.mu.Unlock()
}

// start runs the replicator with scheduler s and engine eng until ctx
// ends.
func (r *replicator) start(ctx context.Context, s *sched.Scheduler, eng *engine.Engine) {
	r.mu.Lock()
	r.s, r.eng = s, eng
	r.mu.Unlock()
	go r.loop(ctx)
}

// loop sends what is queued, applies what came, and watches for dead
// predecessors, until ctx ends.
func (r *replicator) loop(ctx context.Context) {
	tick := time.NewTicker(renewEvery)
	defer tick.Stop()
	failed := map[string]bool{} // schedulers already seen failed
	var renewed time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-tick.C:
		}
		if time.Since(renewed) >= renewEvery {
			renewed = time.Now()
			r.fence.renew()
		}
		members := r.s.Members()
		r.receive()
		r.send(members)
		for _, m := range members {
			if m.Meta.Role != cluster.RoleScheduler || m.Name == r.s.Name() {
				continue
			}
			if m.State != cluster.Failed {
				delete(failed, m.Name)
				continue
			}
			// Only with most of the workers: a scheduler cut off by a
			// partition takes nothing over (fence.view).
			if !failed[m.Name] && quorum(members) {
				failed[m.Name] = true
				r.fence.failed(m.Name)
				// Not on this loop, which answers the ships and
				// renewals a takeover's writes wait for; one at a time.
				go func() {
					defer r.fence.done(m.Name)
					r.taking.Lock()
					defer r.taking.Unlock()
					r.takeOver(ctx, m.Name, members)
				}()
			}
		}
	}
}

// liveSchedulers names the live schedulers of members, this one's
// included.
func (r *replicator) liveSchedulers(members []cluster.Member) []string {
	names := []string{r.s.Name()}
	for _, m := range members {
		if m.Meta.Role == cluster.RoleScheduler && m.State == cluster.Alive && m.Name != r.s.Name() {
			names = append(names, m.Name)
		}
	}
	return names
}

// send sends the successor what is queued for it.
func (r *replicator) send(members []cluster.Member) {
	succ := ring.New(r.liveSchedulers(members)).Successor(r.s.Name())
	r.mu.Lock()
	if succ != r.target {
		// A new successor (or none): it is sent every session whole.
		r.target = succ
		r.pending = nil
		r.acked = map[int]int64{}
		close(r.ackWake)
		r.ackWake = make(chan struct{})
		for n := range r.mirror {
			r.dirty[n] = true
		}
	}
	if succ == "" || (len(r.pending) == 0 && len(r.dirty) == 0) {
		r.mu.Unlock()
		return
	}
	m := replMsg{From: r.s.Name()}
	for n := range r.dirty {
		if b, ok := r.mirror[n]; ok {
			m.Ships = append(m.Ships, journal.Shipment{Session: n, Reset: true, Frames: b})
		} else {
			m.Ships = append(m.Ships, journal.Shipment{Session: n, Remove: true})
		}
	}
	m.Ships = append(m.Ships, r.pending...)
	r.pending, r.dirty = nil, map[int]bool{}
	r.mu.Unlock()
	for _, sh := range m.Ships {
		if e, _ := r.fence.epochOf(sh.Session); e > 0 {
			if m.Epochs == nil {
				m.Epochs = map[int]uint64{}
			}
			m.Epochs[sh.Session] = e
		}
	}
	if err := r.post(succ, m); err != nil {
		r.mu.Lock()
		for _, sh := range m.Ships {
			r.dirty[sh.Session] = true
		}
		r.mu.Unlock()
	}
}

func (r *replicator) post(to string, m replMsg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return r.s.Send(to, append([]byte{replTag}, b...))
}

// receive applies the messages that came: shipments to the sender's
// replica (asking again for the sessions that do not follow on), and
// requests for sessions whole.
func (r *replicator) receive() {
	r.mu.Lock()
	inbox := r.inbox
	r.inbox = nil
	r.mu.Unlock()
	for _, m := range inbox {
		r.handle(m)
	}
}

// handle applies one message (receive).
func (r *replicator) handle(m replMsg) {
	if m.Renew != nil {
		r.fence.onRenew(m.From, m.Renew)
	}
	if len(m.Again) > 0 {
		r.mu.Lock()
		if m.From == r.target {
			for _, n := range m.Again {
				r.dirty[n] = true
			}
		}
		r.mu.Unlock()
	}
	if len(m.Ships) == 0 {
		return
	}
	rep, err := r.st.dir.Replica(m.From)
	if err != nil {
		logPrefixed("replica of %s: %v", m.From, err)
		return
	}
	again := map[int]bool{}
	ans := replMsg{From: r.s.Name()}
	ends := map[int]int64{}
	for _, sh := range m.Ships {
		if again[sh.Session] && !sh.Reset {
			continue
		}
		if _, mine := r.eng.Session(sh.Session); mine {
			switch e, gone := r.fence.epochOf(sh.Session); {
			case gone:
			case e > m.Epochs[sh.Session]:
				// Held here at a later epoch (taken over): a
				// replica never takes a stale home's diverged
				// journal; the sender learns where the session is.
				ans.Moved = append(ans.Moved, held{Session: sh.Session, Epoch: e, Home: r.s.Name()})
				again[sh.Session] = false
				continue
			case e < m.Epochs[sh.Session]:
				// This one is the stale home: it gives the session
				// up, and keeps the new home's journal.
				r.fence.giveUp([]held{{Session: sh.Session, Epoch: m.Epochs[sh.Session], Home: m.From}})
			default:
				continue // two homes at one epoch: never merged
			}
		}
		if err := rep.Apply(sh); err != nil {
			if !errors.Is(err, journal.ErrGap) {
				logPrefixed("replica of %s: %v", m.From, err)
			}
			again[sh.Session] = true
			delete(ends, sh.Session)
			continue
		}
		switch {
		case sh.Reset:
			delete(again, sh.Session)
			ends[sh.Session] = int64(len(sh.Frames))
		case sh.Remove:
			delete(ends, sh.Session)
		default:
			ends[sh.Session] = sh.Offset + int64(len(sh.Frames))
		}
	}
	for n, a := range again {
		if a {
			ans.Again = append(ans.Again, n)
		}
	}
	for n, end := range ends {
		ans.Acked = append(ans.Acked, shipAck{Session: n, End: end})
	}
	if len(ans.Again) > 0 || len(ans.Acked) > 0 || len(ans.Moved) > 0 {
		r.post(m.From, ans)
	}
}

// takeOver restores the sessions of scheduler dead, declared failed, from
// its replica, if this scheduler is its successor on the ring it was on;
// another scheduler forgets the replica it may keep of it.
func (r *replicator) takeOver(ctx context.Context, dead string, members []cluster.Member) {
	dir := filepath.Join(r.st.dir.Path(), "replica", dead)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	if ring.New(append(r.liveSchedulers(members), dead)).Successor(dead) != r.s.Name() {
		os.RemoveAll(dir) // another's to take over; this copy is stale
		return
	}
	// The dead one's lease must have run out before its sessions are
	// served here: it may only be paused, and serve until then.
	r.fence.waitGrantLapsed(ctx, dead)
	start := time.Now()
	rep, err := r.st.dir.Replica(dead)
	if err != nil {
		logPrefixed("taking over %s: %v", dead, err)
		return
	}
	loaded, err := rep.Dir().Load()
	if err != nil {
		logPrefixed("taking over %s: %v", dead, err)
		return
	}
	var adopted, lost int
	for _, l := range loaded {
		if l.State == nil || l.State.Closed {
			continue
		}
		// A takeover raises the epoch: the home that was, back from a
		// pause or restarted on its old state dir, is stale against it.
		l.State.Epoch++
		l.State.Home = r.s.Name()
		r.fence.hold(l.Session, l.State.Epoch)
		var kept, uploads []core.Location
		chunks, ups := l.State.Chunks()
		isUp := map[uint64]bool{}
		for _, id := range ups {
			isUp[id] = true
		}
		for _, c := range chunks {
			if !isUp[c.ID] {
				kept = append(kept, core.Location{ID: c.ID, NBytes: c.NBytes})
				continue
			}
			for _, w := range c.Workers {
				uploads = append(uploads, core.Location{ID: c.ID, Worker: w, NBytes: c.NBytes})
			}
		}
		// The claims carry the new epoch: the workers refuse what the
		// old home sends for the session after them.
		a, n := r.s.Claim(l.Session, l.State.Epoch, kept, uploads)
		adopted, lost = adopted+a, lost+n
	}
	res, err := r.eng.Restore(loaded)
	if err != nil {
		logPrefixed("taking over %s: %v", dead, err)
		return
	}
	for _, l := range res.Lost {
		logPrefixed("session %d of %s lost: its replica is damaged (%v)", l.Session, dead, l.Err)
	}
	os.RemoveAll(dir) // the sessions are this scheduler's now, in its own journal
	r.takeovers.Add(1)
	r.takenSessions.Add(uint64(res.Sessions))
	logPrefixed("took over %d sessions of %s, declared failed, in %v: %d chunks taken from the workers, %d to be made again from lineage when needed; %d graphs that were running run again; %d sessions lost",
		res.Sessions, dead, time.Since(start).Round(time.Millisecond), adopted, lost, res.Rerun, len(res.Lost))
}
