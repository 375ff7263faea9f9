package custody

import (
	"fmt"
)

// Check verifies the Machine's invariants; the tests call it after every
// input. It returns the first broken one.
func (m *Machine) Check() error {
	for _, id := range m.sessionIDs() {
		s := m.sessions[id]
		for i, r := range s.recs {
			if r.Seq != uint64(i)+1 {
				return fmt.Errorf("session %d: record %d has seq %d", id, i, r.Seq)
			}
			if i > 0 && r.Epoch < s.recs[i-1].Epoch {
				return fmt.Errorf("session %d: record %d of epoch %d after epoch %d", id, r.Seq, r.Epoch, s.recs[i-1].Epoch)
			}
		}
		switch s.role {
		case roleHome:
			ep := lastEpoch(s.recs)
			if s.fence == nil && (ep == nil || ep.Epoch != s.epoch || ep.Home != m.cfg.Name) {
				return fmt.Errorf("session %d: home at epoch %d without its epoch record", id, s.epoch)
			}
			if s.acked > uint64(len(s.recs)) || s.durable > uint64(len(s.recs)) {
				return fmt.Errorf("session %d: %d records, %d durable, %d at the target", id, len(s.recs), s.durable, s.acked)
			}
			for _, w := range s.writes {
				if w.seq > uint64(len(s.recs)) {
					return fmt.Errorf("session %d: write %d waits for record %d of %d", id, w.req, w.seq, len(s.recs))
				}
			}
		case roleGone:
			if s.home == m.cfg.Name {
				return fmt.Errorf("session %d: gone to this scheduler", id)
			}
			if len(s.writes) > 0 || len(s.reads) > 0 {
				return fmt.Errorf("session %d: gone with requests waiting", id)
			}
		}
		if s.serving(m.now) && s.role != roleHome {
			return fmt.Errorf("session %d: served but not home", id)
		}
	}
	if err := m.dir.Check(); err != nil {
		return err
	}
	for id, c := range m.dir.chunks {
		if s := m.sessions[c.session]; s == nil || s.role != roleHome {
			return fmt.Errorf("chunk %d of session %d, not served here", id, c.session)
		}
	}
	for id, c := range m.dir.lost {
		if s := m.sessions[c.session]; s == nil || s.role != roleHome {
			return fmt.Errorf("lost chunk %d of session %d, not served here", id, c.session)
		}
	}
	return nil
}

// Serving reports whether session sess is served here at time now: it
// is home, holds its lease then and is not changing its epoch.
func (m *Machine) Serving(sess int, now int64) bool {
	s := m.sessions[sess]
	return s != nil && s.serving(max(now, m.now))
}

// Home says where this scheduler believes session sess is, at which
// epoch, and whether it is the home itself.
func (m *Machine) Home(sess int) (home string, e Epoch, ok bool) {
	s := m.sessions[sess]
	if s == nil || s.role == roleNone {
		return "", 0, false
	}
	return s.home, s.epoch, true
}

// Journal returns the records of session sess held here (its journal, or
// the replica of its home's).
func (m *Machine) Journal(sess int) []Rec {
	if s := m.sessions[sess]; s != nil {
		return s.recs
	}
	return nil
}

// Where names the workers holding kept chunk id (nil when lost or
// unknown), and whether it is lost.
func (m *Machine) Where(id uint64) (workers []string, lost bool) { return m.dir.Where(id) }

// Holds says whether the directory places a copy of chunk id on worker
// w (Directory.Holds): a job's free of it is not sent.
func (m *Machine) Holds(id uint64, w string) bool { return m.dir.Holds(id, w) }

// Sessions lists the sessions this scheduler knows, sorted.
func (m *Machine) Sessions() []int { return m.sessionIDs() }

// Describe says what the Machine holds of session sess, for traces and
// failure reports.
func (m *Machine) Describe(sess int) string {
	s := m.sessions[sess]
	if s == nil {
		return fmt.Sprintf("session %d: unknown", sess)
	}
	d := fmt.Sprintf("session %d: %s at epoch %d, home %s, target %s, witnesses %v, %d records (%d durable, %d at the target, %d committed), lease until %d (now %d), started %v, %d writes and %d reads waiting",
		sess, roleNames[s.role], s.epoch, s.home, s.target, s.witnesses, len(s.recs), s.durable, s.acked, s.committed, s.leaseUntil, m.now, s.started, len(s.writes), len(s.reads))
	if s.fence != nil {
		d += fmt.Sprintf("; round for epoch %d (takeover %v) since %d: %d yes, %d no of %v", s.fence.epoch, s.fence.takeover, s.fence.began, len(s.fence.yes), len(s.fence.no), s.fence.voters)
	}
	if s.flight != nil {
		d += fmt.Sprintf("; ship of %d in flight since %d", s.flight.seq, s.flight.sent)
	}
	if s.rewrite || s.roundDue {
		d += fmt.Sprintf("; rewrite %v, round due %v", s.rewrite, s.roundDue)
	}
	return d
}

// Committed is the number of session sess's records durable here and at
// its target (all of them for a home alone): those a client may be told
// are written.
func (m *Machine) Committed(sess int) uint64 {
	if s := m.sessions[sess]; s != nil && s.role == roleHome {
		return s.committed
	}
	return 0
}
