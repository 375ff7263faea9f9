package custody

import (
	"slices"
)

// This file holds what the Machine does with its chunk directory
// (directory.go holds the directory's rules) and the graphs to run
// again.

// workerDown forgets worker w's copies (the directory's rules); the
// sessions it fenced get other witnesses.
func (m *Machine) workerDown(w string) {
	if !m.dir.Live(w) {
		m.dir.WorkerDown(w)
		return
	}
	m.dir.WorkerDown(w)
	for _, id := range m.sessionIDs() {
		s := m.sessions[id]
		if s.role == roleHome && s.fence == nil && s.started && slices.Contains(s.witnesses, w) {
			m.beginRound(s, false)
		}
	}
}

// copied records an upload's copies made on worker w, asked for at
// session sess and epoch e (the Copy's, given back).
func (m *Machine) copied(w string, sess int, e Epoch, cs []Chunk) {
	for _, c := range cs {
		m.dir.Copied(Copy{ID: c.ID, To: w, Session: sess, Epoch: e}, c.NBytes)
	}
}

// claimSession builds the directory of session s, taken over, from its
// records (Directory.ClaimSession): an upload's copy is where the
// journal says, if that worker lives (a worker keeps uploads whichever
// connection breaks); a graph's chunk is taken from a worker that
// offered it; the others are lost.
func (m *Machine) claimSession(s *session) {
	m.quietly(func() {
		for _, r := range s.recs {
			m.applyRec(s, r)
		}
	})
	var kept, uploads []Chunk
	for _, id := range sortedIDs(m.dir.chunks) {
		if c := m.dir.chunks[id]; c.session == s.id {
			kept, uploads = sortChunk(kept, uploads, c.Chunk)
		}
	}
	for _, id := range sortedIDs(m.dir.lost) {
		if c := m.dir.lost[id]; c.session == s.id {
			kept, uploads = sortChunk(kept, uploads, c.Chunk)
		}
	}
	m.dir.forgetSession(s.id)
	m.dir.ClaimSession(s.id, s.epoch, m.now, kept, uploads)
}

// sortChunk adds c to uploads or to kept.
func sortChunk(kept, uploads []Chunk, c Chunk) ([]Chunk, []Chunk) {
	c.Workers = slices.Clone(c.Workers)
	if c.Upload {
		return kept, append(uploads, c)
	}
	return append(kept, c), uploads
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
