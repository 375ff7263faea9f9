package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// The worker's TCP service. A connection opens with one byte naming its use:
//
//	'C' control: the scheduler and the worker exchange Msg values in
//	    both directions until one side closes, in frames of many messages
//	    each (see codec.go).
//	'F' fetch: the client sends a chunk ID (8 bytes, big-endian); the worker
//	    answers with a chunk frame. A client may send several IDs at once:
//	    the worker answers them in order, flushing its answers once it has
//	    read no further ID.
//	'P' put: the client sends a chunk ID and a chunk frame; the worker
//	    stores the chunk and answers with a status byte (and error text).
//	'L' locate: the client sends a chunk ID; the worker answers where the
//	    chunk's file is, for a process on its host to map (see exec/sched/mapped.go and exec/worker/locate.go).
//
// A chunk frame is a status byte (0 ok, 1 error followed by a 4-byte length
// and the error text) then the dtype (1 byte), the number of dimensions
// (1 byte), each dimension (8 bytes) and the raw C-order little-endian data.
// Bulk data never goes through gob, and control messages only for the
// kernel arguments of ops.
const (
	ConnControl = 'C'
	ConnFetch   = 'F'
	ConnPut     = 'P'
	ConnLocate  = 'L'
)

// Kinds of control messages.
const (
	// scheduler → worker
	MsgSubmit uint8 = iota + 1
	MsgCancel
	MsgFree
	MsgStatus
	// worker → scheduler
	MsgStarted
	MsgDone
	MsgFailed
	MsgCancelled
	MsgStatusReply
	// scheduler → worker: take these chunks, held since an earlier
	// control connection broke, as this connection's (IDs)
	MsgAdopt
	// worker → scheduler: the chunks it holds that no connection claims
	// (IDs, with Sizes); with a Session, those a claim of the session at
	// Epoch took from another connection (a stale home's)
	MsgHeld
	// worker → scheduler: the worker is leaving; move its kept chunks
	MsgLeaving
	// scheduler → worker: its kept chunks are moved; it may go
	MsgHandedOff
	// worker → scheduler: a free or adopt of Session at Epoch was
	// refused, the worker having seen a later epoch of the session (Err
	// names both)
	MsgFenced
)

// Msg is one control message; Kind says which fields matter.
type Msg struct {
	Kind     uint8
	Job      uint64
	Key      int
	Attempt  int
	Priority int
	// Unit, on a submit, is the number of submits, this one and those right
	// after it, that form one dispatch unit: the worker runs them one after
	// the other in one slot (see Core). 0 and 1 mean the op alone.
	Unit    int
	Flush   bool            // submit: report this op of a unit at once (see RunOp)
	Op      *chunk.Op       // submit
	ID      uint64          // submit, done: the chunk the op makes
	Inputs  []core.Location // submit: where each input is
	Addrs   []string        // submit: data address of each input's worker
	IDs     []uint64        // free, adopt, held
	Sizes   []int64         // held: the bytes of each chunk of IDs
	NBytes  int64           // done
	Spilled int64           // done: bytes the worker spilled since its last report
	Err     string          // failed
	Final   bool            // failed: the kernel rejected the op; retrying cannot help
	Peer    string          // failed: the worker an input could not be fetched from
	Timing  core.Timing     // started, done: what the worker measured of the run (timing.go)
	Seq     uint64          // status, status reply
	Text    string          // status reply
	// runs, on a submit a scheduler sends, stands for a submit of each of
	// its runs (see runBatch); the other fields are then unused.
	Runs *RunBatch
	// Session and Epoch, on a submit, free or adopt, are the session the
	// scheduler acts for and the epoch it holds the session at; a worker
	// that has seen a later epoch of the session refuses it (worker.State).
	// Session 0 acts for no session and is not fenced. On a fenced
	// report, the session and epoch refused; on a held report, the claim
	// that took the chunks.
	Session int
	Epoch   uint64
}

const maxDims = 32

func WriteChunk(w io.Writer, a *tensor.Array) error {
	if len(a.Shape) > maxDims {
		return fmt.Errorf("chunk has %d dimensions, more than %d", len(a.Shape), maxDims)
	}
	hdr := make([]byte, 3+8*len(a.Shape))
	hdr[0], hdr[1], hdr[2] = 0, byte(a.DType), byte(len(a.Shape))
	for i, d := range a.Shape {
		binary.LittleEndian.PutUint64(hdr[3+8*i:], uint64(d))
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err := w.Write(a.Data)
	return err
}

func WriteErr(w io.Writer, msg string) error {
	b := make([]byte, 5+len(msg))
	b[0] = 1
	binary.LittleEndian.PutUint32(b[1:], uint32(len(msg)))
	copy(b[5:], msg)
	_, err := w.Write(b)
	return err
}

// readStatus reads a status byte and, on error, the error text.
func readStatus(r *bufio.Reader) error {
	st, err := r.ReadByte()
	if err != nil {
		return err
	}
	if st == 0 {
		return nil
	}
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	l := binary.LittleEndian.Uint32(n[:])
	if l > 1<<16 {
		return errors.New("malformed error reply")
	}
	msg := make([]byte, l)
	if _, err := io.ReadFull(r, msg); err != nil {
		return err
	}
	return remoteError(msg)
}

// A remoteError is an error the other end reported; the connection it came
// on is still in step.
type remoteError string

func (e remoteError) Error() string { return string(e) }

// ReadChunk reads a chunk frame. limit bounds the data size accepted.
func ReadChunk(r *bufio.Reader, limit int64) (*tensor.Array, error) {
	if err := readStatus(r); err != nil {
		return nil, err
	}
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	dt, nd := tensor.DType(h[0]), int(h[1])
	if !dt.Valid() || nd > maxDims {
		return nil, fmt.Errorf("malformed chunk header (dtype %d, %d dims)", h[0], nd)
	}
	shape := make([]int, nd)
	n := int64(dt.Size())
	var d [8]byte
	for i := range shape {
		if _, err := io.ReadFull(r, d[:]); err != nil {
			return nil, err
		}
		v := binary.LittleEndian.Uint64(d[:])
		if v > uint64(limit) || (v > 0 && n > limit/int64(v)) {
			return nil, fmt.Errorf("chunk too large")
		}
		shape[i] = int(v)
		n *= int64(v)
	}
	if n > limit {
		return nil, fmt.Errorf("chunk of %d bytes exceeds %d", n, limit)
	}
	a := &tensor.Array{DType: dt, Shape: shape, Data: make([]byte, n)}
	if _, err := io.ReadFull(r, a.Data); err != nil {
		return nil, err
	}
	return a, nil
}

func putID(id uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], id)
	return b[:]
}

type RunKey struct {
	Job          uint64
	Key, Attempt int
}

func GetID(b []byte) uint64 {
	var id uint64
	for _, x := range b[:8] {
		id = id<<8 | uint64(x)
	}
	return id
}
