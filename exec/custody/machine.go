package custody

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"

	"marsfs/cluster/ring"
)

// Config describes the scheduler a Machine decides for.
type Config struct {
	Name string // this scheduler's cluster name
	// LeaseTerm is how long, in nanoseconds, a target's acknowledgement
	// lets the home serve the session; 2 s when 0. It must be shorter
	// than the time membership takes to declare a scheduler failed, or a
	// takeover waits for the lease after the declaration.
	LeaseTerm int64
	// Witnesses is the number of workers that fence each epoch; 3 when 0.
	Witnesses int
	// MaxReruns bounds the runs of a graph again after it lost a chunk it
	// read; 3 when 0.
	MaxReruns int
}

// A Machine is the custody of one scheduler. It is not safe for
// concurrent use: the runner steps it from one goroutine, or under a lock.
type Machine struct {
	cfg      Config
	now      int64
	born     int64           // the clock at the first input: a young Machine waits for its workers
	peers    map[string]bool // schedulers other than this one: alive or not
	sessions map[int]*session
	// dir holds the kept chunks of the sessions served here, the
	// workers and their offers; it adds its instructions to out.
	dir *Directory
	out Output
}

type role uint8

const (
	roleNone    role = iota
	roleHome         // served here
	roleReplica      // the target of its home: a replica of its journal is kept here
	roleGone         // served elsewhere (home, epoch known)
)

var roleNames = [...]string{"none", "home", "replica", "gone"}

type session struct {
	id        int
	role      role
	epoch     Epoch
	home      string
	target    string
	witnesses []string
	recs      []Rec // the journal (home) or its replica

	// Home side.
	durable    uint64 // records durable in this scheduler's journal
	committed  uint64 // records durable here and at a target: never taken back
	acked      uint64 // records the target holds
	leaseUntil int64  // serve until then (by this clock)
	started    bool   // TakeOver was output for the session's current epoch
	// confirm: restored from this scheduler's own journal, the session
	// is served only once a round past the journal's epoch is won at its
	// witnesses: its target alone may have forgotten a later epoch.
	confirm       bool
	flight        *flight
	writes        []pendingWrite
	reads         []uint64
	fence         *fenceRound
	roundDue      bool // a round is wanted and waits for a worker to witness it
	roundTakeover bool
	wholeNext     bool // the next ship sends the whole journal
	// rewrite: the journal file must be written whole before any append
	// counts (a whole write failed, or an epoch record did not go in);
	// tick asks again, no more often than every rewriteEvery.
	rewrite     bool
	rewriteSent int64

	// Replica side.
	grantUntil int64 // the lease granted to the home lapses then
	homeDown   bool  // membership declared the home failed
	replicaAck []pendingAck

	graphs map[int]*graph
}

// A flight is a ship sent to the target and not yet answered.
type flight struct {
	seq  uint64
	sent int64
}

type pendingWrite struct {
	req uint64
	seq uint64
}

// A pendingAck is a ship whose records the replica is appending: the
// home is answered when they are durable.
type pendingAck struct {
	sent   int64 // the home's clock at sending, echoed
	to     string
	epoch  Epoch
	seq    uint64
	at     int64 // when the ship came: the grant counts from then
	before int   // the replica's records before them
	// prev, for a whole journal, is the session as it was before: what
	// stands if the file is not written.
	prev *session
}

// moving reports whether s is changing home or target: until the round
// ends the session is not served here. A round that only changes the
// witnesses (one died) leaves it served: the lease still bounds a
// takeover by the target.
func (s *session) moving() bool {
	return s.fence != nil && (s.fence.takeover || s.fence.target != s.target || s.role != roleHome)
}

type fenceRound struct {
	epoch     Epoch
	target    string
	witnesses []string // the new epoch's
	voters    []string // the previous epoch's witnesses, whose majority decides
	yes, no   map[string]bool
	takeover  bool // the target taking the session over, not the home moving on
	began     int64
}

type graph struct {
	running bool
	reruns  int
}

type chunk struct {
	Chunk
	session int
}

type offer struct {
	worker string
	nbytes int64
	at     int64
}

// New returns the custody of scheduler cfg.Name, holding nothing.
func New(cfg Config) *Machine {
	if cfg.LeaseTerm == 0 {
		cfg.LeaseTerm = 2e9
	}
	if cfg.Witnesses == 0 {
		cfg.Witnesses = 3
	}
	if cfg.MaxReruns == 0 {
		cfg.MaxReruns = 3
	}
	m := &Machine{cfg: cfg, peers: map[string]bool{}, sessions: map[int]*session{}}
	m.dir = NewDirectory(&m.out)
	m.dir.Epoch = func(sess int) (Epoch, bool) {
		if s := m.sessions[sess]; s != nil && s.role == roleHome {
			return s.epoch, true
		}
		return 0, false
	}
	return m
}

// Name is the scheduler's name.
func (m *Machine) Name() string { return m.cfg.Name }

// Step feeds one input to the Machine and returns what the runner must do
// about it. The Output is valid until the next Step.
func (m *Machine) Step(in Input) Output {
	m.out = Output{}
	if m.born == 0 {
		m.born = max(in.Now, 1)
	}
	if in.Now > m.now {
		m.now = in.Now
	}
	switch in.Kind {
	case InTick:
		m.tick()
	case InPeerUp:
		m.peerUp(in.Peer)
	case InPeerDown:
		m.peerDown(in.Peer)
	case InWorkerUp:
		m.dir.WorkerUp(in.Worker)
	case InWorkerDown:
		m.workerDown(in.Worker)
	case InOffered:
		m.dir.Offered(in.Worker, in.Chunks, m.now, in.Session, in.Epoch)
	case InOpen:
		m.open(in.Session, in.Req)
	case InWrite:
		m.write(in.Session, in.Req, in.Write)
	case InRead:
		m.read(in.Session, in.Req)
	case InShip:
		m.shipped(in)
	case InShipAck:
		m.shipAnswered(in)
	case InAppended:
		m.appended(in)
	case InFenced:
		m.fenced(in)
	case InTold:
		m.told(in.Session, in.Epoch, in.Home)
	case InJobEnd:
		m.jobEnd(in.Session, in.Graph, in.OK, in.Lost)
	case InRestart:
		m.restart(in.Session, in.Recs)
	case InCopied:
		if in.Err != "" {
			for _, c := range in.Chunks {
				m.dir.CopyFailed(c.ID)
			}
			break
		}
		m.copied(in.Worker, in.Session, in.Epoch, in.Chunks)
	}
	return m.out
}

// liveWorkers lists the live workers, sorted.
func (m *Machine) liveWorkers() []string { return m.dir.LiveWorkers() }

// successor is the scheduler after this one on the ring of the live
// ones, "" when alone.
func (m *Machine) successor() string {
	names := []string{m.cfg.Name}
	for p, up := range m.peers {
		if up {
			names = append(names, p)
		}
	}
	return ring.New(names).Successor(m.cfg.Name)
}

// pickWitnesses chooses a session's witnesses among the live workers: the
// first by a hash of the session and the worker's name, so that sessions
// spread their fences over the workers.
func (m *Machine) pickWitnesses(sess int) []string {
	ws := m.liveWorkers()
	key := func(w string) uint64 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", sess, w)
		return h.Sum64()
	}
	if len(ws) < m.cfg.Witnesses && m.now-m.born < 2*m.cfg.LeaseTerm {
		// Just started: the workers are still connecting, and an epoch
		// fenced by fewer than it could be dies with them.
		return nil
	}
	sort.Slice(ws, func(i, j int) bool { return key(ws[i]) < key(ws[j]) })
	if len(ws) > m.cfg.Witnesses {
		ws = ws[:m.cfg.Witnesses]
	}
	sort.Strings(ws)
	return ws
}

// serving says whether s is served here at time now.
func (s *session) serving(now int64) bool {
	return s.role == roleHome && !s.moving() && s.started && (s.target == "" || now < s.leaseUntil)
}

// refuseOrForward answers a request on a session not served here.
func (m *Machine) refuseOrForward(s *session, sess int, req uint64) {
	switch {
	case s != nil && s.role == roleGone:
		m.out.Refuse = append(m.out.Refuse, Answer{Req: req, Session: sess, To: s.home, Err: MovedError(sess, s.home, s.epoch)})
	case s != nil && s.role == roleReplica && !s.homeDown:
		m.out.Forward = append(m.out.Forward, Answer{Req: req, Session: sess, To: s.home})
	default:
		m.out.Refuse = append(m.out.Refuse, Answer{Req: req, Session: sess, Err: fmt.Sprintf("session %d is not served here", sess)})
	}
}

// open makes a new session homed here at epoch 1.
func (m *Machine) open(sess int, req uint64) {
	if s := m.sessions[sess]; s != nil {
		m.out.Refuse = append(m.out.Refuse, Answer{Req: req, Session: sess, Err: fmt.Sprintf("session %d exists", sess)})
		return
	}
	ws := m.pickWitnesses(sess)
	if len(ws) == 0 {
		// An epoch with no witness could be taken over by anyone: the
		// session waits for a worker.
		m.out.Refuse = append(m.out.Refuse, Answer{Req: req, Session: sess, Err: "no worker to witness the session yet"})
		return
	}
	s := &session{id: sess, role: roleHome, epoch: 1, home: m.cfg.Name, target: m.successor(),
		witnesses: ws, started: true, graphs: map[int]*graph{}}
	m.sessions[sess] = s
	m.appendRec(s, Rec{Kind: KindEpoch, Home: s.home, Target: s.target, Witnesses: s.witnesses}, req)
	s.wholeNext = true
}

// write appends a client's record to a session served here.
func (m *Machine) write(sess int, req uint64, r *Rec) {
	s := m.sessions[sess]
	if s == nil || s.role != roleHome {
		m.refuseOrForward(s, sess, req)
		return
	}
	if r == nil || r.Kind == KindEpoch {
		m.out.Refuse = append(m.out.Refuse, Answer{Req: req, Session: sess, Err: "not a client's record"})
		return
	}
	if s.closed() {
		m.out.Refuse = append(m.out.Refuse, Answer{Req: req, Session: sess, Err: fmt.Sprintf("session %d is closed", sess)})
		return
	}
	m.appendRec(s, *r, req)
	m.shipNext(s)
}

func (s *session) closed() bool {
	return len(s.recs) > 0 && s.recs[len(s.recs)-1].Kind == KindClose
}

// appendRec gives r its place in s's journal and asks for it to be made
// durable; req, if not 0, is acknowledged once it is durable here and at
// the target.
func (m *Machine) appendRec(s *session, r Rec, req uint64) {
	r.Epoch, r.Seq = s.epoch, uint64(len(s.recs))+1
	r.Chunks = slices.Clone(r.Chunks)
	s.recs = append(s.recs, r)
	m.applyRec(s, r)
	if s.rewrite && s.role == roleHome {
		// The file is to be written whole (an append of the epoch
		// record, or a whole write, failed): appended, r would follow
		// records the file lacks. It goes in with the whole journal, as
		// exec/journal writes a stale file again before its next record.
		s.rewriteSent = m.now
		m.out.Append = append(m.out.Append, Append{Session: s.id, Whole: true, Recs: slices.Clone(s.recs)})
	} else {
		m.out.Append = append(m.out.Append, Append{Session: s.id, Recs: []Rec{r}})
	}
	if req != 0 {
		s.writes = append(s.writes, pendingWrite{req: req, seq: r.Seq})
	}
}

// applyRec applies what a record of a session served here does to the
// chunk directory and the graphs.
func (m *Machine) applyRec(s *session, r Rec) {
	if s.applyGraphRec(r) {
		return
	}
	switch r.Kind {
	case KindKeep, KindUpload:
		for _, c := range r.Chunks {
			m.dir.Place(s.id, c)
		}
	case KindDrop:
		for _, c := range r.Chunks {
			m.dir.Drop(s.id, s.epoch, []uint64{c.ID})
		}
	case KindClose:
		m.dir.dropSession(s.id, s.epoch)
	}
}

// applyGraphRec applies a graph's submit or end to the session's graphs,
// reporting whether r was one.
func (s *session) applyGraphRec(r Rec) bool {
	switch r.Kind {
	case KindSubmit:
		s.graphs[r.Graph] = &graph{running: true}
	case KindGraphEnd:
		if g := s.graphs[r.Graph]; g != nil {
			g.running = false
		}
	default:
		return false
	}
	return true
}

// read serves a client's read, or waits for the lease.
func (m *Machine) read(sess int, req uint64) {
	s := m.sessions[sess]
	if s == nil || s.role != roleHome {
		m.refuseOrForward(s, sess, req)
		return
	}
	if s.serving(m.now) {
		m.out.Acks = append(m.out.Acks, Answer{Req: req, Session: sess})
		return
	}
	s.reads = append(s.reads, req)
	m.shipNext(s)
}

// shipNext sends the target what it lacks, or a renewal of the lease, if
// nothing is in flight; a home alone acknowledges what is durable.
func (m *Machine) shipNext(s *session) {
	if s.role != roleHome || s.moving() {
		return
	}
	if s.target == "" {
		s.acked = uint64(len(s.recs))
		m.settle(s)
		return
	}
	// Only records durable here are shipped: one this disk refuses never
	// reaches a replica.
	seq := s.durable
	needed := s.wholeNext || s.acked < seq || len(s.reads) > 0 || !s.started || s.leaseUntil-m.now < m.cfg.LeaseTerm/2
	if s.flight != nil || !needed {
		return
	}
	sh := Ship{To: s.target, Session: s.id, Epoch: s.epoch, Seq: seq, Sent: m.now}
	switch {
	case s.wholeNext:
		sh.Whole, sh.Recs = true, slices.Clone(s.recs[:seq])
	case s.acked < seq:
		sh.Recs = slices.Clone(s.recs[s.acked:seq])
	}
	s.flight = &flight{seq: seq, sent: m.now}
	m.out.Ship = append(m.out.Ship, sh)
}

// settle acknowledges the writes durable here and at the target, serves
// the reads waiting when the lease holds, and starts a session restored
// here once its lease is confirmed.
func (m *Machine) settle(s *session) {
	if s.role != roleHome || s.moving() {
		return
	}
	if !s.started && !s.confirm && (s.target == "" || m.now < s.leaseUntil) && min(s.acked, s.durable) >= uint64(len(s.recs)) {
		s.started = true
		m.out.TakeOver = append(m.out.TakeOver, Session{Session: s.id, Epoch: s.epoch, Home: s.home})
		for n, g := range s.graphs {
			if g.running {
				m.out.Rerun = append(m.out.Rerun, GraphRef{Session: s.id, Graph: n})
			}
		}
	}
	done := min(s.durable, s.acked)
	s.committed = max(s.committed, done)
	keep := s.writes[:0]
	for _, w := range s.writes {
		if w.seq <= done && s.started {
			m.out.Acks = append(m.out.Acks, Answer{Req: w.req, Session: s.id, Seq: w.seq})
		} else {
			keep = append(keep, w)
		}
	}
	s.writes = keep
	if s.serving(m.now) {
		for _, r := range s.reads {
			m.out.Acks = append(m.out.Acks, Answer{Req: r, Session: s.id})
		}
		s.reads = nil
	}
}

// appended takes the outcome of an append.
func (m *Machine) appended(in Input) {
	s := m.sessions[in.Session]
	if s == nil {
		return
	}
	if in.Replica {
		m.replicaAppended(s, in.Seq, in.Err)
		return
	}
	if s.role != roleHome {
		return
	}
	switch {
	case in.Err != "" && (in.Whole || in.Seq >= 1 && in.Seq <= uint64(len(s.recs)) && s.recs[in.Seq-1].Kind == KindEpoch):
		// The file is not what the records say (a takeover's first
		// write, an undo's), or the epoch the witnesses granted is not
		// in it: nothing counts as durable until it is written whole.
		s.rewrite, s.rewriteSent, s.durable = true, m.now, 0
		return
	case in.Err != "":
		m.undo(s, in.Seq, "journal on "+m.cfg.Name+": "+in.Err, false)
		return
	case in.Whole:
		s.rewrite = false
	case s.rewrite:
		return // appended to a file to be written again
	}
	s.durable = max(s.durable, min(in.Seq, uint64(len(s.recs))))
	m.settle(s)
	m.shipNext(s)
}

// undo takes back the records of s from seq on, which could not be made
// durable here or at the target, and refuses their writes with why. The
// journal is written again whole without them (beside the old file, then
// renamed, so the last good one is kept until then).
//
// A failed append leaves the journal as it was (exec/journal takes its
// torn tail back), so only records the target refused (rewrite) need the
// file written again.
func (m *Machine) undo(s *session, seq uint64, why string, rewrite bool) {
	// What a target held, and the epoch records, are never taken back.
	seq = max(seq, s.committed+1)
	for i := len(s.recs) - 1; i >= int(seq)-1 && i >= 0; i-- {
		if s.recs[i].Kind == KindEpoch {
			seq = uint64(i) + 2
			break
		}
	}
	if seq == 0 || seq > uint64(len(s.recs)) {
		return
	}
	s.recs = s.recs[:seq-1]
	keep := s.writes[:0]
	for _, w := range s.writes {
		if w.seq >= seq {
			m.out.Refuse = append(m.out.Refuse, Answer{Req: w.req, Session: s.id, Err: "not made durable: " + why})
		} else {
			keep = append(keep, w)
		}
	}
	s.writes = keep
	s.durable = min(s.durable, seq-1)
	s.acked = min(s.acked, seq-1)
	m.rebuild(s)
	if rewrite {
		m.out.Append = append(m.out.Append, Append{Session: s.id, Whole: true, Recs: slices.Clone(s.recs)})
	}
	s.wholeNext = true
	if len(s.recs) == 0 {
		// Not even the session's first record is durable: it is not.
		m.out.StepDown = append(m.out.StepDown, Session{Session: s.id, Epoch: s.epoch, Home: s.home})
		delete(m.sessions, s.id)
	}
}

// rebuild makes the graphs of s again from its records, and makes its
// chunk directory agree with them (Directory.Retain): the chunks the
// records still keep stay where the directory has them, not where the
// records say. A record names the workers of the job that kept the
// chunk; claims, recalls and copies since then moved it (seed 72: after
// a takeover claimed a chunk on w0001, a refused write's undo put it
// back on w0002, the old home's job's worker, which had freed it as a
// recall's unwanted answer).
func (m *Machine) rebuild(s *session) {
	s.graphs = map[int]*graph{}
	kept := map[uint64]Chunk{}
	for _, r := range s.recs {
		if s.applyGraphRec(r) {
			continue
		}
		switch r.Kind {
		case KindKeep, KindUpload:
			for _, c := range r.Chunks {
				kept[c.ID] = c
			}
		case KindDrop:
			for _, c := range r.Chunks {
				delete(kept, c.ID)
			}
		case KindClose:
			clear(kept)
		}
	}
	cs := make([]Chunk, 0, len(kept))
	for _, c := range kept {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b Chunk) int { return cmp.Compare(a.ID, b.ID) })
	m.dir.Retain(s.id, cs)
}

// applyRecQuiet applies r without freeing anything on the workers.
func (m *Machine) applyRecQuiet(s *session, r Rec) {
	m.quietly(func() { m.applyRec(s, r) })
}

// quietly runs f and takes back the directory's instructions it made:
// the copies it asked for are not being made.
func (m *Machine) quietly(f func()) {
	out := m.out
	f()
	for _, c := range m.out.Copy[len(out.Copy):] {
		m.dir.CopyFailed(c.ID)
	}
	m.out.Free, m.out.Copy, m.out.Lost, m.out.Claim = out.Free, out.Copy, out.Lost, out.Claim
}
