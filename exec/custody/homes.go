package custody

import (
	"slices"
)

// This file holds the homes' side of fencing: shipping and its answers,
// the lease, the rounds that change an epoch at the witnesses, and what a
// scheduler learns of homes elsewhere.

// shipped takes records a home ships to this scheduler, its target.
func (m *Machine) shipped(in Input) {
	s := m.sessions[in.Session]
	refuse := func(err string, e Epoch, home string, seq uint64) {
		m.out.Ship = append(m.out.Ship, Ship{To: in.Peer, Session: in.Session, Epoch: e, Seq: seq, Ack: true, Err: err, Home: home, Sent: in.Sent})
	}
	if s != nil && (s.epoch > in.Epoch || s.epoch == in.Epoch && s.home != in.Peer) {
		// This scheduler took the session over, or knows who did.
		refuse("stale epoch", s.epoch, s.home, 0)
		return
	}
	if s != nil && s.role == roleHome && in.Epoch > s.epoch {
		// The witnesses let another move on from this scheduler's epoch
		// (it was cut off): it is that one's target now.
		m.stepDown(s, in.Epoch, in.Peer)
	}
	if s != nil && s.role == roleReplica && s.epoch == in.Epoch && s.homeDown && m.now >= s.grantUntil {
		// The grant ran out and a takeover may be under way: a lapsed
		// home is not renewed, whatever the round decides.
		refuse("lease lapsed", s.epoch, s.home, uint64(len(s.recs)))
		return
	}
	if s == nil || s.epoch < in.Epoch || s.role != roleReplica {
		// A later epoch is taken only whole: a replica never merges
		// records of two epochs.
		if !in.Whole {
			refuse("whole", in.Epoch, in.Peer, 0)
			return
		}
		ep := lastEpoch(in.Recs)
		if ep == nil || ep.Home != in.Peer || ep.Target != m.cfg.Name || ep.Epoch != in.Epoch {
			refuse("not the target", in.Epoch, in.Peer, 0)
			return
		}
		var prev *session
		if s == nil {
			s = &session{id: in.Session, graphs: map[int]*graph{}}
			m.sessions[in.Session] = s
		} else {
			c := *s
			prev = &c
		}
		s.role, s.epoch, s.home, s.target, s.witnesses = roleReplica, in.Epoch, in.Peer, ep.Target, ep.Witnesses
		s.homeDown = m.peers[in.Peer] == false && m.knownPeer(in.Peer)
		before := len(s.recs)
		s.recs = slices.Clone(in.Recs)
		if prev == nil {
			prev = &session{id: s.id, role: roleNone}
		}
		s.replicaAck = append(s.replicaAck, pendingAck{sent: in.Sent, to: in.Peer, epoch: in.Epoch, seq: in.Seq, at: m.now, before: before, prev: prev})
		m.out.Append = append(m.out.Append, Append{Session: s.id, Replica: true, Peer: in.Peer, Whole: true, Recs: slices.Clone(in.Recs)})
		return
	}
	// The same epoch: the records follow on, or repeat some held.
	have := uint64(len(s.recs))
	var add []Rec
	for _, r := range in.Recs {
		switch {
		case r.Seq <= have:
		case r.Seq == have+uint64(len(add))+1:
			add = append(add, r)
		default:
			refuse("gap", s.epoch, s.home, have)
			return
		}
	}
	if in.Whole && uint64(len(in.Recs)) < have {
		refuse("whole shorter than the replica", s.epoch, s.home, have)
		return
	}
	if len(add) == 0 {
		if have >= in.Seq {
			// A renewal, or records held already.
			s.grantUntil = max(s.grantUntil, m.now+m.cfg.LeaseTerm)
			m.out.Ship = append(m.out.Ship, Ship{To: in.Peer, Session: s.id, Epoch: s.epoch, Seq: in.Seq, Ack: true, Home: s.home, Sent: in.Sent})
			return
		}
		refuse("gap", s.epoch, s.home, have)
		return
	}
	before := len(s.recs)
	s.recs = append(s.recs, add...)
	s.replicaAck = append(s.replicaAck, pendingAck{sent: in.Sent, to: in.Peer, epoch: in.Epoch, seq: in.Seq, at: m.now, before: before})
	m.out.Append = append(m.out.Append, Append{Session: s.id, Replica: true, Peer: in.Peer, Recs: add})
}

func (m *Machine) knownPeer(p string) bool { _, ok := m.peers[p]; return ok }

// lastEpoch returns the last epoch record of recs.
func lastEpoch(recs []Rec) *Rec {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == KindEpoch {
			return &recs[i]
		}
	}
	return nil
}

// replicaAppended answers the homes whose records the replica append up
// to seq made durable, or refuses them with err.
func (m *Machine) replicaAppended(s *session, seq uint64, err string) {
	keep := s.replicaAck[:0]
	for _, p := range s.replicaAck {
		if p.seq > seq {
			keep = append(keep, p)
			continue
		}
		ans := Ship{To: p.to, Session: s.id, Epoch: p.epoch, Seq: p.seq, Ack: true, Home: s.home, Sent: p.sent}
		if err != "" {
			ans.Err, ans.Seq = "replica on "+m.cfg.Name+": "+err, uint64(p.before)
			switch {
			case p.prev != nil && p.prev.role == roleNone:
				// The replica was never written: nothing is held.
				delete(m.sessions, s.id)
			case p.prev != nil:
				// The file written beside the old one did not take: the
				// old one stands.
				*s = *p.prev
			case s.role == roleReplica && len(s.recs) > p.before:
				s.recs = s.recs[:p.before] // the file did not take them
			}
		} else if s.role == roleReplica && s.epoch == p.epoch {
			s.grantUntil = max(s.grantUntil, p.at+m.cfg.LeaseTerm)
		}
		m.out.Ship = append(m.out.Ship, ans)
	}
	s.replicaAck = keep
}

// shipAnswered takes the target's answer to a ship.
func (m *Machine) shipAnswered(in Input) {
	s := m.sessions[in.Session]
	if s == nil || s.role != roleHome || in.Peer != s.target {
		return
	}
	if in.Epoch > s.epoch || (in.Epoch == s.epoch && in.Home != "" && in.Home != m.cfg.Name) {
		m.stepDown(s, in.Epoch, in.Home)
		return
	}
	if in.Epoch < s.epoch {
		return // about an epoch before this one
	}
	f := s.flight
	if f == nil || in.Sent != f.sent {
		// An answer to a ship given up (sent again since, or from
		// before a pause): the flight it answers is gone.
		return
	}
	s.flight = nil
	switch {
	case in.Err == "":
		if in.Seq >= f.seq {
			s.acked = max(s.acked, min(f.seq, uint64(len(s.recs))))
			s.leaseUntil = max(s.leaseUntil, f.sent+m.cfg.LeaseTerm)
			s.wholeNext = false
		}
		m.settle(s)
	case in.Err == "gap" || in.Err == "whole" || in.Err == "whole shorter than the replica" || in.Err == "not the target":
		s.wholeNext = true
	case in.Err == "lease lapsed" || in.Err == "stale epoch":
		// The target may be taking the session over: ask again later,
		// serving nothing meanwhile (the lease is the target's to give).
		s.leaseUntil = 0
		return
	default:
		// The target could not make the records durable: they are not,
		// and their writes are refused.
		m.undo(s, max(in.Seq, s.acked)+1, in.Err, true)
	}
	m.shipNext(s)
}

// stepDown gives up a session another holds at a later epoch.
func (m *Machine) stepDown(s *session, e Epoch, home string) {
	if home == m.cfg.Name || e < s.epoch {
		return
	}
	wasHome := s.role == roleHome
	for _, w := range s.writes {
		m.out.Refuse = append(m.out.Refuse, Answer{Req: w.req, Session: s.id, To: home, Err: MovedError(s.id, home, e)})
	}
	for _, r := range s.reads {
		m.out.Refuse = append(m.out.Refuse, Answer{Req: r, Session: s.id, To: home, Err: MovedError(s.id, home, e)})
	}
	m.dir.forgetSession(s.id) // the new home's now: not freed from here
	*s = session{id: s.id, role: roleGone, epoch: e, home: home, graphs: map[int]*graph{}}
	if wasHome {
		m.out.StepDown = append(m.out.StepDown, Session{Session: s.id, Epoch: e, Home: home})
	}
}

// told learns that a session is at epoch e on home.
func (m *Machine) told(sess int, e Epoch, home string) {
	s := m.sessions[sess]
	if s == nil {
		m.sessions[sess] = &session{id: sess, role: roleGone, epoch: e, home: home, graphs: map[int]*graph{}}
		return
	}
	if e < s.epoch || (e == s.epoch && (s.role == roleHome || s.role == roleReplica)) {
		return
	}
	if s.role == roleReplica && e == s.epoch+1 && home == m.cfg.Name {
		return
	}
	if s.fence != nil && e >= s.fence.epoch && home != m.cfg.Name {
		s.fence = nil
	}
	if home == m.cfg.Name {
		return
	}
	m.stepDown(s, e, home)
	if s.role != roleGone {
		*s = session{id: sess, role: roleGone, epoch: e, home: home, graphs: map[int]*graph{}}
	}
}

// peerUp notes a scheduler alive: a home alone takes it as its target.
func (m *Machine) peerUp(p string) {
	if p == m.cfg.Name {
		return
	}
	m.peers[p] = true
	for _, id := range m.sessionIDs() {
		s := m.sessions[id]
		if s.role == roleReplica && s.home == p && s.fence == nil {
			s.homeDown = false
		}
		if s.role == roleHome && s.target == "" && s.fence == nil && s.started {
			m.beginRound(s, false)
		}
	}
}

// peerDown notes a scheduler declared failed: its sessions whose target
// this one is are taken over once the grant runs out (tick), and the
// sessions it was the target of get another.
func (m *Machine) peerDown(p string) {
	if p == m.cfg.Name {
		return
	}
	m.peers[p] = false
	for _, id := range m.sessionIDs() {
		s := m.sessions[id]
		switch {
		case s.role == roleReplica && s.home == p:
			s.homeDown = true
		case s.role == roleHome && s.target == p && !s.moving():
			m.beginRound(s, false)
		}
	}
	m.tick()
}

func (m *Machine) sessionIDs() []int {
	ids := make([]int, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// beginRound asks the witnesses of s's epoch to accept the next: a
// takeover by this scheduler (the target), or the home going on with
// another target or other witnesses.
func (m *Machine) beginRound(s *session, takeover bool) {
	// A round asked again (its answers lost) asks for the same epoch: a
	// witness that accepted it for this scheduler accepts it again.
	e := s.epoch + 1
	ws := m.pickWitnesses(s.id)
	if len(ws) == 0 {
		// No live worker to witness the next epoch (this scheduler just
		// started, or every worker went): asked again on a tick.
		s.roundDue, s.roundTakeover = true, takeover
		return
	}
	s.roundDue = false
	// The home keeps its target while it lives: only the witnesses
	// change, and the session is served meanwhile.
	target := m.successor()
	if !takeover && s.target != "" && m.peers[s.target] {
		target = s.target
	}
	r := &fenceRound{epoch: e, target: target, witnesses: ws, voters: s.witnesses,
		yes: map[string]bool{}, no: map[string]bool{}, takeover: takeover, began: m.now}
	if takeover && r.target == s.home {
		r.target = ""
	}
	s.fence = r
	if s.moving() {
		s.flight = nil
	}
	if len(r.voters) == 0 {
		// An epoch of no witness (a journal written before there were
		// any): nothing to fence against.
		m.winRound(s)
		return
	}
	for _, w := range r.voters {
		m.out.Fence = append(m.out.Fence, FenceReq{Worker: w, Session: s.id, Base: s.epoch, Epoch: e, Home: m.cfg.Name})
	}
}

// fenced takes a witness's answer.
func (m *Machine) fenced(in Input) {
	s := m.sessions[in.Session]
	if s == nil || s.fence == nil {
		return
	}
	r := s.fence
	if !slices.Contains(r.voters, in.Worker) {
		return
	}
	if in.OK && in.Epoch == r.epoch {
		r.yes[in.Worker] = true
		if 2*len(r.yes) > len(r.voters) {
			m.winRound(s)
		}
		return
	}
	if in.OK {
		return // an answer to an earlier round
	}
	r.no[in.Worker] = true
	if in.Decided && in.Home != "" && in.Home != m.cfg.Name && in.Epoch >= r.epoch {
		// Another holds the session at this epoch or a later one.
		s.fence = nil
		if s.role == roleReplica {
			s.role = roleGone
		}
		m.stepDownAny(s, in.Epoch, in.Home)
		return
	}
	if 2*len(r.no) >= len(r.voters) {
		s.fence = nil // lost: tried again at a later epoch on a tick
	}
}

// stepDownAny steps a home down, or makes a replica's session gone.
func (m *Machine) stepDownAny(s *session, e Epoch, home string) {
	if s.role == roleHome {
		m.stepDown(s, e, home)
		return
	}
	*s = session{id: s.id, role: roleGone, epoch: e, home: home, graphs: map[int]*graph{}}
}

// winRound makes the round's epoch s's: this scheduler holds s at it.
func (m *Machine) winRound(s *session) {
	r := s.fence
	s.fence = nil
	wasHome := s.role == roleHome
	sameTarget := wasHome && r.target == s.target
	s.role, s.epoch, s.home, s.target, s.witnesses = roleHome, r.epoch, m.cfg.Name, r.target, r.witnesses
	s.replicaAck, s.homeDown, s.flight = nil, false, nil
	s.confirm = false
	if !sameTarget {
		// A new target grants nothing yet. The same one's grant of the
		// epoch before still bounds when it could take over.
		s.leaseUntil = 0
	}
	s.acked = 0
	s.wholeNext = true
	if !wasHome {
		// Taken over: the replica is the journal from now on, and what
		// it holds was durable at its home and here.
		s.committed = uint64(len(s.recs))
		s.started = false
		s.durable = 0
		s.graphs = map[int]*graph{}
		m.out.Append = append(m.out.Append, Append{Session: s.id, Whole: true, Recs: slices.Clone(s.recs)})
		m.claimSession(s)
	}
	m.appendRec(s, Rec{Kind: KindEpoch, Home: s.home, Target: s.target, Witnesses: s.witnesses}, 0)
	// The old and new witnesses learn the epoch is decided (a claim of
	// nothing), so that they answer a stale contender with it.
	told := map[string]bool{}
	for _, w := range append(slices.Clone(r.voters), r.witnesses...) {
		if !told[w] && m.dir.Live(w) {
			told[w] = true
			m.out.Claim = append(m.out.Claim, Chunks{Worker: w, Session: s.id, Epoch: s.epoch})
		}
	}
	for p, up := range m.peers {
		if up {
			m.out.Tell = append(m.out.Tell, Tell{To: p, Session: s.id, Epoch: s.epoch, Home: s.home})
		}
	}
	slices.SortFunc(m.out.Tell, func(a, b Tell) int {
		if a.To < b.To {
			return -1
		}
		if a.To > b.To {
			return 1
		}
		return 0
	})
	// The target is sent the journal whole once the epoch record is
	// durable here (appended).
}

// tick renews leases, retries ships and rounds not answered, and starts
// the takeovers whose grants ran out.
func (m *Machine) tick() {
	for _, id := range m.sessionIDs() {
		s := m.sessions[id]
		if s.roundDue && s.fence == nil && (s.role == roleHome || s.role == roleReplica) {
			m.beginRound(s, s.roundTakeover)
			continue
		}
		switch s.role {
		case roleHome:
			if s.fence != nil && m.now-s.fence.began > m.cfg.LeaseTerm {
				m.beginRound(s, false)
			}
			if s.moving() {
				continue
			}
			if s.rewrite && m.now-s.rewriteSent > m.cfg.LeaseTerm/8 {
				s.rewriteSent = m.now
				m.out.Append = append(m.out.Append, Append{Session: s.id, Whole: true, Recs: slices.Clone(s.recs)})
			}
			if s.flight != nil && m.now-s.flight.sent > m.cfg.LeaseTerm/4 {
				s.flight = nil // lost, or the target is slow: sent again
			}
			if s.target != "" && (s.leaseUntil-m.now < m.cfg.LeaseTerm/2 || s.acked < uint64(len(s.recs))) {
				m.shipNext(s)
			}
			m.settle(s)
		case roleReplica:
			if s.fence != nil && m.now-s.fence.began > m.cfg.LeaseTerm {
				s.fence = nil
			}
			if s.homeDown && s.fence == nil && m.now >= s.grantUntil {
				m.beginRound(s, true)
			}
		}
	}
}

// restart restores a session from this scheduler's own journal, as a
// scheduler restarted on its old state dir: it serves it only once its
// target confirms the epoch (a lease), and steps down if the target, or a
// witness, knows a later one.
func (m *Machine) restart(sess int, recs []Rec) {
	ep := lastEpoch(recs)
	if ep == nil || ep.Home != m.cfg.Name {
		return
	}
	s := &session{id: sess, role: roleHome, epoch: ep.Epoch, home: ep.Home, target: ep.Target,
		witnesses: ep.Witnesses, recs: slices.Clone(recs), durable: uint64(len(recs)), committed: uint64(len(recs)), graphs: map[int]*graph{}}
	m.sessions[sess] = s
	for _, r := range recs {
		m.applyRecQuiet(s, r)
	}
	// Its target may have stepped down from the session and been
	// restarted since, knowing nothing of the later epochs (seed 1120 of
	// exec/sim): the witnesses of the journal's epoch, who voted for any
	// later one, decide. Moving on to the next epoch asks them.
	s.confirm = true
	m.beginRound(s, false)
}
