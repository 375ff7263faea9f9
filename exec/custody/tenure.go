package custody

import "slices"

// A Tenure is what a scheduler process knows of its right to serve its
// sessions, as cmd/marsfs's fence decides it: its lease (the renewals it
// sent and the grant of its ring successor), the grants it gave the
// schedulers it is the successor of and the takeovers pending, the
// epochs it holds its sessions at, and the sessions it gave up to a
// later epoch. The fence keeps one under its lock and does the I/O
// around it: the renewals and grants on the wire, the engine's sessions,
// the clock, which it passes in (nanoseconds of a monotonic clock).
//
// Its rules are the Machine's, per scheduler rather than per session:
// a lease runs LeaseTerm from the send of the renewal the successor
// granted, by the asker's clock, so an answer held in a socket through a
// pause extends nothing already past; a grant is not given while a
// takeover of a failed scheduler is pending, and a takeover waits until
// the last grant to the failed one has lapsed; of two schedulers holding
// one session, the one at the lower epoch gives it up.
//
// The witnesses' votes, which decide an epoch in the Machine, are not
// here: the fence counts a majority of the workers alive instead
// (cmd/marsfs's fence.view).
type Tenure struct {
	// Term is how long a grant lets the asker serve, in nanoseconds.
	Term int64

	nonce   uint64
	sent    map[uint64]int64 // renewals not yet answered, by nonce: their send
	until   int64            // the lease
	renewed int64            // the last renewal sent
	hadPeer bool             // another scheduler was alive once
	epochs  map[int]Epoch    // sessions held here above epoch 0
	moved   map[int]Session  // sessions given up: where they are, at which epoch
	granted map[string]int64 // the last grant to each scheduler this one is the successor of
	pending map[string]bool  // failed schedulers whose takeover is not done: no grants
	answers map[string]bool  // while restarting: who answered with a grant
}

// NewTenure returns the tenure of a scheduler that holds nothing yet.
func NewTenure(term int64) *Tenure {
	return &Tenure{Term: term, sent: map[uint64]int64{}, epochs: map[int]Epoch{}, moved: map[int]Session{},
		granted: map[string]int64{}, pending: map[string]bool{}}
}

// Holds says whether the lease holds at now.
func (t *Tenure) Holds(now int64) bool { return now < t.until }

// Until is when the lease lapses.
func (t *Tenure) Until() int64 { return t.until }

// Renew records a renewal sent at now and returns its nonce, unless one
// was sent less than gap before (many requests waiting ask once): then
// ok is false and nothing is to be sent. Renewals unanswered for a term
// are forgotten: their answer could extend nothing.
func (t *Tenure) Renew(now, gap int64) (nonce uint64, ok bool) {
	if t.renewed != 0 && now-t.renewed < gap {
		return 0, false
	}
	t.renewed = now
	t.nonce++
	t.sent[t.nonce] = now
	for n, at := range t.sent {
		if now-at > t.Term {
			delete(t.sent, n)
		}
	}
	return t.nonce, true
}

// Ask numbers a question to the live schedulers that is not a renewal
// of the lease (a restart asking who holds its sessions).
func (t *Tenure) Ask() uint64 {
	t.nonce++
	return t.nonce
}

// Answered takes scheduler from's answer to renewal nonce: a grant (ok)
// from the successor (fromSucc) extends the lease to a term after the
// renewal's send. It says whether the lease was extended.
func (t *Tenure) Answered(from string, nonce uint64, ok, fromSucc bool) bool {
	if t.answers != nil && ok {
		t.answers[from] = true
	}
	sent, asked := t.sent[nonce]
	if !asked || !ok || !fromSucc {
		return false
	}
	if u := sent + t.Term; u > t.until {
		t.until = u
		return true
	}
	return false
}

// Alone says whether the scheduler may act without a successor, peers
// being the number of other live schedulers and quorum whether it
// reaches most of the workers: it never had another scheduler, or it
// has the quorum. One cut off from the others and from the workers is
// not alone, only cut off.
func (t *Tenure) Alone(peers int, quorum bool) bool {
	if peers > 0 {
		t.hadPeer = true
		return false
	}
	return !t.hadPeer || quorum
}

// Grant answers scheduler from's renewal naming its sessions asked, at
// now; held says whether a session is held here, and succ whether this
// scheduler is from's successor. ok is the grant (refused while a
// takeover is pending); moved names the sessions held here at a later
// epoch (from is stale: the answer tells it), stale those from holds at
// a later epoch (this scheduler is stale: it gives them up, GiveUp).
func (t *Tenure) Grant(from string, asked []Session, held func(int) bool, succ bool, now int64) (ok bool, moved, stale []Session) {
	ok = len(t.pending) == 0
	for _, h := range asked {
		if !held(h.Session) {
			continue
		}
		if _, gone := t.moved[h.Session]; gone {
			continue
		}
		switch mine := t.epochs[h.Session]; {
		case mine > h.Epoch:
			moved = append(moved, Session{Session: h.Session, Epoch: mine})
		case mine < h.Epoch:
			stale = append(stale, Session{Session: h.Session, Epoch: h.Epoch, Home: from})
		}
	}
	if ok && succ {
		t.granted[from] = now
	}
	return ok, moved, stale
}

// GiveUp gives up the sessions of moved that another scheduler holds at
// a later epoch than this one and that are held here (held), and
// returns them: the caller gives them up in the engine.
func (t *Tenure) GiveUp(moved []Session, held func(int) bool) []Session {
	var gone []Session
	for _, h := range moved {
		if _, already := t.moved[h.Session]; already || h.Epoch <= t.epochs[h.Session] || !held(h.Session) {
			continue
		}
		t.moved[h.Session] = h
		gone = append(gone, h)
	}
	return gone
}

// Hold records session held here at epoch e (restored or taken over):
// it is no longer given up.
func (t *Tenure) Hold(session int, e Epoch) {
	if e > 0 {
		t.epochs[session] = e
	}
	delete(t.moved, session)
}

// EpochOf is the epoch session is held at here, and whether it was
// given up.
func (t *Tenure) EpochOf(session int) (Epoch, bool) {
	_, gone := t.moved[session]
	return t.epochs[session], gone
}

// Moved says where session went, if it was given up.
func (t *Tenure) Moved(session int) (Session, bool) {
	m, ok := t.moved[session]
	return m, ok
}

// Failed notes scheduler name declared failed: no grants until its
// takeover is done (Done).
func (t *Tenure) Failed(name string) { t.pending[name] = true }

// Done ends the takeover of scheduler name.
func (t *Tenure) Done(name string) { delete(t.pending, name) }

// GrantLapses is when the last grant to scheduler name runs out: its
// sessions are taken over only then.
func (t *Tenure) GrantLapses(name string) int64 {
	at, ok := t.granted[name]
	if !ok {
		return 0
	}
	return at + t.Term
}

// Restarting starts (on) or ends counting the schedulers that answer
// with a grant: a restart restores its sessions once all live ones did.
func (t *Tenure) Restarting(on bool) {
	if on {
		t.answers = map[string]bool{}
	} else {
		t.answers = nil
	}
}

// AllAnswered says whether each of names answered with a grant since
// Restarting began.
func (t *Tenure) AllAnswered(names []string) bool {
	return !slices.ContainsFunc(names, func(n string) bool { return !t.answers[n] })
}
