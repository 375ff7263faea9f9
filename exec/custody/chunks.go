package custody

import (
	"slices"
	"sort"
)

// This file holds the chunk directory: where each kept chunk of the
// sessions served here is, what is lost, what workers offered, and the
// graphs to run again.

// place records chunk c of session s where its live copies are: an
// upload with one copy gets another, a chunk with none is lost.
func (m *Machine) place(s *session, c Chunk) {
	delete(m.lost, c.ID)
	ch := &chunk{Chunk: c, session: s.id}
	if len(c.Workers) == 0 {
		delete(m.chunks, c.ID)
		m.lost[c.ID] = ch
		m.out.Lost = append(m.out.Lost, c.ID)
		return
	}
	m.chunks[c.ID] = ch
	m.copyIfOne(ch)
}

// copyIfOne asks for a second copy of an upload that has one.
func (m *Machine) copyIfOne(ch *chunk) {
	if !ch.Upload || len(ch.Workers) != 1 {
		return
	}
	if to := m.leastHeld(ch.Workers[0]); to != "" {
		m.out.Copy = append(m.out.Copy, Copy{ID: ch.ID, From: ch.Workers[0], To: to})
	}
}

// leastHeld names the live worker other than except holding the fewest
// bytes of kept chunks ("" for none).
func (m *Machine) leastHeld(except string) string {
	held := map[string]int64{}
	for _, c := range m.chunks {
		for _, w := range c.Workers {
			held[w] += c.NBytes
		}
	}
	best, bestN := "", int64(-1)
	for _, w := range m.liveWorkers() {
		if w == except {
			continue
		}
		if n := held[w]; bestN < 0 || n < bestN {
			best, bestN = w, n
		}
	}
	return best
}

// drop frees chunk id of session s on the workers holding it.
func (m *Machine) drop(s *session, id uint64) {
	delete(m.lost, id)
	c := m.chunks[id]
	if c == nil || c.session != s.id {
		return
	}
	delete(m.chunks, id)
	for _, w := range c.Workers {
		m.free(w, s, id)
	}
}

// free adds chunk id of s on worker w to the frees to send.
func (m *Machine) free(w string, s *session, id uint64) {
	for i := range m.out.Free {
		if f := &m.out.Free[i]; f.Worker == w && f.Session == s.id {
			f.IDs = append(f.IDs, id)
			return
		}
	}
	m.out.Free = append(m.out.Free, Chunks{Worker: w, Session: s.id, Epoch: s.epoch, IDs: []uint64{id}})
}

// claim adds chunk id of s on worker w to the claims to send.
func (m *Machine) claim(w string, s *session, id uint64) {
	for i := range m.out.Claim {
		if c := &m.out.Claim[i]; c.Worker == w && c.Session == s.id {
			c.IDs = append(c.IDs, id)
			return
		}
	}
	m.out.Claim = append(m.out.Claim, Chunks{Worker: w, Session: s.id, Epoch: s.epoch, IDs: []uint64{id}})
}

// workerDown forgets worker w's copies: a chunk with none left is lost;
// the sessions it fenced get other witnesses.
func (m *Machine) workerDown(w string) {
	if !m.workers[w] {
		m.workers[w] = false
		return
	}
	m.workers[w] = false
	for id, os := range m.offers {
		os = slices.DeleteFunc(os, func(o offer) bool { return o.worker == w })
		if len(os) == 0 {
			delete(m.offers, id)
		} else {
			m.offers[id] = os
		}
	}
	ids := make([]uint64, 0)
	for id, c := range m.chunks {
		if slices.Contains(c.Workers, w) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := m.chunks[id]
		c.Workers = slices.DeleteFunc(c.Workers, func(x string) bool { return x == w })
		if len(c.Workers) == 0 {
			delete(m.chunks, id)
			m.lost[id] = c
			m.out.Lost = append(m.out.Lost, id)
			continue
		}
		m.copyIfOne(c)
	}
	for _, id := range m.sessionIDs() {
		s := m.sessions[id]
		if s.role == roleHome && s.fence == nil && s.started && slices.Contains(s.witnesses, w) {
			m.beginRound(s, false)
		}
	}
}

// offered takes back the chunks worker w offers that a session served
// here lost, makes an upload's copy of one that has one copy, and
// remembers the others for a takeover.
func (m *Machine) offered(w string, cs []Chunk) {
	if !m.workers[w] {
		return
	}
	for _, c := range cs {
		if l := m.lost[c.ID]; l != nil && l.NBytes == c.NBytes {
			s := m.sessions[l.session]
			if s == nil || s.role != roleHome {
				continue
			}
			delete(m.lost, c.ID)
			l.Workers = []string{w}
			m.chunks[c.ID] = l
			m.claim(w, s, c.ID)
			m.copyIfOne(l)
			continue
		}
		if h := m.chunks[c.ID]; h != nil && h.Upload && h.NBytes == c.NBytes && len(h.Workers) == 1 && h.Workers[0] != w {
			h.Workers = append(h.Workers, w)
			m.claim(w, m.sessions[h.session], c.ID)
			continue
		}
		os := slices.DeleteFunc(m.offers[c.ID], func(o offer) bool { return o.worker == w })
		m.offers[c.ID] = append(os, offer{worker: w, nbytes: c.NBytes, at: m.now})
	}
}

// copied records an upload's copy made on worker w.
func (m *Machine) copied(w string, cs []Chunk) {
	for _, c := range cs {
		h := m.chunks[c.ID]
		if h == nil || !m.workers[w] || slices.Contains(h.Workers, w) {
			continue
		}
		h.Workers = append(h.Workers, w)
		m.claim(w, m.sessions[h.session], c.ID)
	}
}

// claimSession builds the directory of session s, taken over, from its
// records: an upload's copy is where the journal says, if that worker
// lives (a worker keeps uploads whichever connection breaks); a graph's
// chunk is taken from a worker that offered it; the others are lost.
func (m *Machine) claimSession(s *session) {
	out := m.out
	for _, r := range s.recs {
		m.applyRec(s, r)
	}
	m.out = out
	var ids []uint64
	for id, c := range m.chunks {
		if c.session == s.id {
			ids = append(ids, id)
		}
	}
	for id, c := range m.lost {
		if c.session == s.id {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := m.chunks[id]
		if c == nil {
			c = m.lost[id]
		}
		if !c.Upload {
			var from []string
			for _, o := range m.offers[id] {
				if m.workers[o.worker] && o.nbytes == c.NBytes {
					from = append(from, o.worker)
				}
			}
			sort.Strings(from)
			if len(from) > 1 {
				from = from[:1]
			}
			c.Workers = from
		}
		delete(m.offers, id)
		delete(m.chunks, id)
		delete(m.lost, id)
		m.place(s, c.Chunk)
		for _, w := range c.Workers {
			m.claim(w, s, id)
		}
	}
}

// jobEnd takes how a graph's job ended: one that lost a chunk it read
// runs again (after the lost chunks are made again), up to MaxReruns.
func (m *Machine) jobEnd(sess, n int, ok, lost bool) {
	s := m.sessions[sess]
	if s == nil || s.role != roleHome {
		return
	}
	g := s.graphs[n]
	if g == nil || !g.running || ok || !lost {
		return
	}
	if g.reruns < m.cfg.MaxReruns {
		g.reruns++
		m.out.Rerun = append(m.out.Rerun, GraphRef{Session: sess, Graph: n})
	}
}
