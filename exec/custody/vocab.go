package custody

import "fmt"

// An Epoch numbers the homes of a session: each change of home or of
// target raises it.
type Epoch uint64

// A Rec is one record of a session's journal, as the Machine sees it:
// its place (Epoch, Seq) and what it does to the session's chunks and
// graphs. The runner keeps the full journal record beside it (Body).
type Rec struct {
	Epoch Epoch
	Seq   uint64 // 1 for the session's first record, one more each record
	Kind  RecKind
	// KindEpoch: the epoch's home, target and witnesses.
	Home, Target string
	Witnesses    []string
	Graph        int     // KindSubmit, KindGraphEnd
	Chunks       []Chunk // KindKeep, KindUpload: chunks kept; KindDrop: chunks dropped
	OK           bool    // KindGraphEnd: the graph succeeded
	Body         string  // what the runner journals besides (a spec's text, a tensor's name)
}

// RecKind says what a record does.
type RecKind uint8

// The kinds of records.
const (
	KindEpoch RecKind = 1 + iota
	KindSubmit
	KindGraphEnd
	KindKeep
	KindUpload
	KindDrop
	KindClose
)

var recNames = [...]string{"", "epoch", "submit", "graph-end", "keep", "upload", "drop", "close"}

func (k RecKind) String() string {
	if int(k) < len(recNames) && k > 0 {
		return recNames[k]
	}
	return fmt.Sprintf("RecKind(%d)", k)
}

// A Chunk is a kept chunk of a session: its ID, size and where its copies
// are.
type Chunk struct {
	ID      uint64
	NBytes  int64
	Workers []string // where its copies are, the first the one read
	Upload  bool     // an upload's: two copies, no lineage
}

// An Input is one thing that happened, fed to the Machine by Step.
type Input struct {
	Kind    InputKind
	Now     int64  // InTick: the clock, in nanoseconds of the runner's monotonic clock
	Peer    string // the scheduler it is about or from
	Worker  string // the worker it is about or from
	Session int
	Epoch   Epoch
	Seq     uint64
	Recs    []Rec  // InShip: records from Seq on (Whole: the whole journal); InRestart: the journal
	Whole   bool   // InShip: Recs is the whole journal of the session
	Write   *Rec   // InWrite: the client's record (Epoch and Seq are the Machine's to set)
	Req     uint64 // InWrite, InRead: the runner's number for the request, echoed back
	Err     string // InAppended: why the append failed; InShipAck: why the target refused
	Home    string // InShipAck, InFenced, InTold: the home the answerer knows
	OK      bool   // InFenced: the worker accepted; InJobEnd: the job succeeded
	Decided bool   // InFenced: a refusal names an epoch a home holds, not a vote
	Sent    int64  // InShip, InShipAck: the home's clock when it sent the ship (Ship.Sent)
	Lost    bool   // InJobEnd: the job failed because a chunk it read was lost
	Replica bool   // InAppended: the append was to the replica of Peer's session
	Graph   int    // InJobEnd
	Chunks  []Chunk
}

// InputKind says what an Input reports.
type InputKind uint8

// The inputs of a Machine.
const (
	// InTick: the clock reads Now.
	InTick InputKind = iota
	// InPeerUp, InPeerDown: scheduler Peer joined, or was declared failed
	// (or left).
	InPeerUp
	InPeerDown
	// InWorkerUp, InWorkerDown: worker Worker joined, or went with its
	// chunks.
	InWorkerUp
	InWorkerDown
	// InOffered: Worker holds Chunks (IDs and sizes) it made for a
	// scheduler whose connection broke, and offers them; or, Session
	// not 0, it took them for Session at Epoch, recalled (Output.Recall).
	InOffered
	// InOpen: a client made session Session here (its number is homed
	// here); acknowledged as a write (Req).
	InOpen
	// InWrite: a client's write (Write) to session Session.
	InWrite
	// InRead: a client's read of session Session.
	InRead
	// InShip: Peer, the home of Session at Epoch, ships Recs.
	InShip
	// InShipAck: Peer has Session's records up to Seq at Epoch (Err empty),
	// or refuses them (Err; Epoch and Home are the latest it knows, or
	// Seq what it has when it wants the whole journal).
	InShipAck
	// InAppended: the append of records of Session up to Seq is durable
	// (Err empty) or failed (Err). Replica: to the replica of Peer's
	// session.
	InAppended
	// InFenced: Worker accepted epoch Epoch of Session (OK), or refuses it
	// for Epoch at Home, which a home holds (Decided) or it voted for.
	InFenced
	// InTold: Peer says Session is at Epoch on Home.
	InTold
	// InJobEnd: graph Graph of Session ended (OK), or failed having lost a
	// chunk it read (Lost), or failed for good.
	InJobEnd
	// InRestart: the Machine starts on its own journal (Recs of each
	// session, one input a session), as a scheduler restarted on its old
	// state dir.
	InRestart
	// InCopied: the copy of chunk Chunks[0] on Worker is made, or could
	// not be (Err); Session and Epoch are the Copy's, given back.
	InCopied
)

var inputNames = [...]string{"tick", "peer-up", "peer-down", "worker-up", "worker-down", "offered", "open",
	"write", "read", "ship", "ship-ack", "appended", "fenced", "told", "job-end", "restart", "copied"}

func (k InputKind) String() string {
	if int(k) < len(inputNames) {
		return inputNames[k]
	}
	return fmt.Sprintf("InputKind(%d)", k)
}

// An Output is what the runner must do after a Step, in this order:
// append, ship, fence, tell, then the rest.
type Output struct {
	Append   []Append   // records to make durable in this scheduler's journal or a replica
	Ship     []Ship     // records to send to a target, or an answer to a home
	Fence    []FenceReq // epochs for workers to accept
	Tell     []Tell     // a session's home, for another scheduler
	Acks     []Answer   // client requests: acknowledged writes, served reads
	Refuse   []Answer   // client requests refused (Err says why)
	Forward  []Answer   // client requests for another home (To)
	TakeOver []Session  // sessions now served here, at their epoch: restore them
	StepDown []Session  // sessions no longer served here
	Claim    []Chunks   // chunks for a worker to keep for a session
	Free     []Chunks   // chunks for a worker to drop
	Copy     []Copy     // second copies of uploads to make
	Lost     []uint64   // chunks with no copy: made again from lineage when read
	// Recall asks each live worker to take, for Session at Epoch, the
	// chunks of IDs it holds for another connection (a takeover's
	// chunks no worker offered: the old home may be paused with its
	// connections up); the worker offers back those it took.
	Recall []Chunks
	Rerun  []GraphRef // graphs to run again
}

// An Append makes records durable: in the journal of Session, or in the
// replica of Peer's Session.
type Append struct {
	Session int
	Replica bool
	Peer    string
	Whole   bool // Recs replace the file
	Recs    []Rec
}

// A Ship carries records of a session from its home to its target
// (Recs), or the target's answer (Ack).
type Ship struct {
	To      string
	Session int
	Epoch   Epoch
	Seq     uint64
	Whole   bool
	Recs    []Rec
	Ack     bool // an answer: Seq is held (Err empty) or refused (Err)
	// Sent is the home's clock when it sent the ship, which the answer
	// carries back: the lease counts from the send of the ship answered,
	// never from a later one (an answer held up while the home was
	// paused must not renew it).
	Sent int64
	Err  string // why it is refused
	Home string // the home the answerer knows
}

// A FenceReq asks Worker to accept Session moving on from epoch Base to
// Epoch at Home.
type FenceReq struct {
	Worker  string
	Session int
	Base    Epoch
	Epoch   Epoch
	Home    string
}

// A Tell says to scheduler To that Session is at Epoch on Home.
type Tell struct {
	To      string
	Session int
	Epoch   Epoch
	Home    string
}

// An Answer is the outcome of a client's request Req on Session.
type Answer struct {
	Req     uint64
	Session int
	Seq     uint64 // an acknowledged write's place
	To      string // Forward: the home
	Err     string // Refuse: why
}

// A Session names a session at an epoch.
type Session struct {
	Session int
	Epoch   Epoch
	Home    string
}

// Chunks are chunks of Session, at Epoch, on Worker.
type Chunks struct {
	Worker  string
	Session int
	Epoch   Epoch
	IDs     []uint64
}

// A Copy makes a copy of chunk ID, held on From, on To. Session and
// Epoch are the chunk's session and the epoch the copy is asked at: the
// runner gives them back with the copy made (Directory.Copied), and a
// copy no longer wanted is freed at them, so that a worker that has seen
// a later epoch of the session (another home holds the chunk there now)
// refuses the free.
type Copy struct {
	ID       uint64
	From, To string
	Session  int
	Epoch    Epoch
}

// A GraphRef names graph Graph of Session.
type GraphRef struct {
	Session int
	Graph   int
}

// MovedError is the refusal of a request to a home that is no longer.
func MovedError(session int, home string, e Epoch) string {
	return fmt.Sprintf("session %d moved to %s (epoch %d)", session, home, e)
}
