package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// The control connection's encoding. Messages travel in frames: a 4-byte
// little-endian payload length, then the payload, one or more messages one
// after the other. A message is its kind byte and its fields, integers as
// varints, strings and byte strings behind their length. A writer puts
// every message queued while it was busy into one frame, so that many
// submissions or reports cost one system call and one read.
//
// An op's kernel arguments (chunk.Op.Args, any of the types the tensor
// package registers with gob) are the one part encoded with gob, and not
// once per op: the sender keeps, per kind of op, the last arguments it sent
// in one of argSlots numbered slots, and an op whose arguments equal them
// names the slot. New arguments first go in a msgArgs message that fills a
// slot (gob, in one stream a connection, so each type is described once).
// The ops of one graph mostly share their arguments, so most submissions
// carry none.
//
// A reader checks every length against what the frame still holds, so a
// short or malformed frame is an error, never a panic or a huge
// allocation; the connection is then closed.

const (
	maxFrame = 64 << 20 // largest frame accepted
	argSlots = 256      // argument slots a connection
)

// msgArgs fills an argument slot (scheduler → worker).
const msgArgs uint8 = 0x40

var errMalformed = errors.New("malformed control message")

// argsBox carries an op's arguments through gob, which needs a concrete
// type around an interface value.
type argsBox struct{ A any }

// Encoder encodes control messages into frames. It is not safe for
// concurrent use: a connection's writer goroutine owns it.
type Encoder struct {
	buf    []byte
	slots  [argSlots]any
	byKind map[string]int // the slot holding the last arguments of a kind
	next   int            // the slot to fill next
	gobBuf bytes.Buffer
	gobEnc *gob.Encoder
	lastAt int64 // the last Timing.Received encoded (timing.go)
}

func NewEncoder() *Encoder {
	e := &Encoder{byKind: make(map[string]int)}
	e.gobEnc = gob.NewEncoder(&e.gobBuf)
	return e
}

// frame encodes ms as one frame and returns it; the result is valid until
// the next call.
func (e *Encoder) frame(ms []*Msg) ([]byte, error) {
	e.buf = append(e.buf[:0], 0, 0, 0, 0)
	for _, m := range ms {
		if err := e.encode(m); err != nil {
			return nil, err
		}
	}
	n := len(e.buf) - 4
	if n > maxFrame {
		return nil, fmt.Errorf("control frame of %d bytes exceeds %d", n, maxFrame)
	}
	binary.LittleEndian.PutUint32(e.buf, uint32(n))
	return e.buf, nil
}

func (e *Encoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *Encoder) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *Encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}
func (e *Encoder) ints(v []int) {
	e.uint(uint64(len(v)))
	for _, x := range v {
		e.int(int64(x))
	}
}

// ranges encodes an op's input ranges: their count (0 for none), then
// each as its rank plus one (0 for a whole chunk), its offset and shape.
func (e *Encoder) ranges(rs []chunk.Range) {
	e.uint(uint64(len(rs)))
	for _, r := range rs {
		if r.Whole() {
			e.uint(0)
			continue
		}
		e.uint(uint64(len(r.Shape)) + 1)
		e.buf = append(e.buf, byte(r.DType))
		e.int(int64(r.Off))
		for _, d := range r.Shape {
			e.int(int64(d))
		}
	}
}

func (e *Encoder) bool(b bool) {
	if b {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// argSlot returns the slot holding args (0 for none, else slot+1), first
// encoding a msgArgs that fills it when no slot holds them yet.
func (e *Encoder) argSlot(kind string, args any) (uint64, error) {
	if args == nil {
		return 0, nil
	}
	if s, ok := e.byKind[kind]; ok && sameArgs(e.slots[s], args) {
		// Keep the newest of equal arguments: the next ops' are likely to
		// share its parts (a later graph's program), which compare by
		// reference.
		e.slots[s] = args
		return uint64(s) + 1, nil
	}
	s := e.next
	e.next = (e.next + 1) % argSlots
	for k, v := range e.byKind {
		if v == s {
			delete(e.byKind, k)
		}
	}
	e.gobBuf.Reset()
	if err := e.gobEnc.Encode(&argsBox{args}); err != nil {
		// The stream is in an unknown state: this encoder cannot go on.
		return 0, fmt.Errorf("encode %s arguments: %w", kind, err)
	}
	e.buf = append(e.buf, msgArgs)
	e.uint(uint64(s))
	e.uint(uint64(e.gobBuf.Len()))
	e.buf = append(e.buf, e.gobBuf.Bytes()...)
	e.slots[s] = args
	e.byKind[kind] = s
	return uint64(s) + 1, nil
}

// sameArgs reports whether kernel arguments a and b are equal. The chunks
// of one tensor mostly carry arguments equal but apart (each its own
// shape slice), sharing their large parts (an expr program's code): the
// common types are compared field by field, shared slices by reference,
// which costs a fraction of reflect.DeepEqual. (Like gob, which carries
// the arguments, it does not tell a nil slice from an empty one.)
func sameArgs(a, b any) bool {
	switch x := a.(type) {
	case chunk.ExprArgs:
		y, ok := b.(chunk.ExprArgs)
		return ok && x.Regs == y.Regs && x.Block == y.Block &&
			slices.Equal(x.Shape, y.Shape) && slices.Equal(x.Offsets, y.Offsets) &&
			(sameBacking(x.Code, y.Code) || reflect.DeepEqual(x.Code, y.Code)) &&
			(sameBacking(x.Members, y.Members) || slices.Equal(x.Members, y.Members))
	case chunk.ReduceArgs:
		y, ok := b.(chunk.ReduceArgs)
		return ok && x.Op == y.Op && x.In == y.In && x.Flat == y.Flat && x.Keepdims == y.Keepdims &&
			x.Ddof == y.Ddof && slices.Equal(x.Axes, y.Axes) && slices.Equal(x.Offset, y.Offset) &&
			slices.Equal(x.Global, y.Global)
	}
	return reflect.DeepEqual(a, b)
}

// sameBacking reports whether a and b are one slice.
func sameBacking[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// A RunBatch is the submits of a job's runs to one worker, which the
// scheduler queues as one message: the encoder writes a submit for each
// run of runs that goes to worker, in order, so that no message is built
// an op. The runs and maps must not change once queued.
type RunBatch struct {
	Job    uint64
	Worker string
	// The session the job runs for and its epoch (see Msg.Session).
	Session int
	Epoch   uint64
	Runs    []core.RunOp
	G       *chunk.Graph
	Ids     []uint64
	Addrs   map[string]string // the workers' data addresses
}

// submit encodes the submit of op, made as chunk id, reading inputs from
// the workers at the data addresses addr gives.
func (e *Encoder) submit(job uint64, session int, epoch uint64, key, attempt, prio int, id uint64, unit int, flush bool, op *chunk.Op,
	inputs []core.Location, addr func(i int) string) error {
	if op == nil || len(inputs) != len(op.Inputs) {
		return errors.New("encode: malformed submit")
	}
	slot, err := e.argSlot(string(op.Kind), op.Args)
	if err != nil {
		return err
	}
	e.buf = append(e.buf, MsgSubmit)
	e.uint(job)
	e.uint(uint64(session))
	e.uint(epoch)
	e.int(int64(key))
	e.int(int64(attempt))
	e.int(int64(prio))
	e.uint(id)
	e.uint(uint64(unit))
	e.bool(flush)
	e.int(int64(op.Key))
	e.str(string(op.Kind))
	e.ints(op.Inputs)
	e.ints(op.Shape)
	e.buf = append(e.buf, byte(op.DType))
	e.uint(op.Stored)
	e.int(int64(op.Node))
	e.uint(slot)
	e.ranges(op.RangeList())
	for i, in := range inputs {
		e.uint(in.ID)
		e.str(in.Worker)
		e.int(in.NBytes)
		e.str(addr(i))
	}
	return nil
}

func (e *Encoder) encode(m *Msg) error {
	switch m.Kind {
	case MsgSubmit:
		if b := m.Runs; b != nil {
			for _, r := range b.Runs {
				if r.Worker != b.Worker {
					continue
				}
				addr := func(i int) string { return b.Addrs[r.Inputs[i].Worker] }
				if err := e.submit(b.Job, b.Session, b.Epoch, r.Key, r.Attempt, r.Priority, b.Ids[r.Key], r.Unit, r.Flush, b.G.Ops[r.Key], r.Inputs, addr); err != nil {
					return err
				}
			}
			return nil
		}
		if len(m.Addrs) != len(m.Inputs) {
			return errors.New("encode: malformed submit")
		}
		return e.submit(m.Job, m.Session, m.Epoch, m.Key, m.Attempt, m.Priority, m.ID, m.Unit, m.Flush, m.Op, m.Inputs, func(i int) string { return m.Addrs[i] })
	case MsgCancel:
		e.buf = append(e.buf, m.Kind)
		e.uint(m.Job)
		e.int(int64(m.Key))
		e.int(int64(m.Attempt))
	case MsgFree, MsgAdopt:
		e.buf = append(e.buf, m.Kind)
		e.uint(uint64(m.Session))
		e.uint(m.Epoch)
		e.uint(uint64(len(m.IDs)))
		for _, id := range m.IDs {
			e.uint(id)
		}
	case MsgHeld:
		if len(m.Sizes) != len(m.IDs) {
			return errors.New("encode: malformed held")
		}
		e.buf = append(e.buf, m.Kind)
		e.uint(uint64(m.Session))
		e.uint(m.Epoch)
		e.uint(uint64(len(m.IDs)))
		for i, id := range m.IDs {
			e.uint(id)
			e.int(m.Sizes[i])
		}
	case MsgLeaving, MsgHandedOff:
		e.buf = append(e.buf, m.Kind)
	case MsgStatus:
		e.buf = append(e.buf, m.Kind)
		e.uint(m.Seq)
	case MsgStarted, MsgDone, MsgFailed, MsgCancelled:
		e.buf = append(e.buf, m.Kind)
		e.uint(m.Job)
		e.int(int64(m.Key))
		e.int(int64(m.Attempt))
		e.uint(m.ID)
		e.int(m.NBytes)
		e.int(m.Spilled)
		e.str(m.Err)
		e.bool(m.Final)
		e.str(m.Peer)
		e.timing(&m.Timing)
	case MsgStatusReply:
		e.buf = append(e.buf, m.Kind)
		e.uint(m.Seq)
		e.str(m.Text)
	case MsgFenced:
		e.buf = append(e.buf, m.Kind)
		e.uint(uint64(m.Session))
		e.uint(m.Epoch)
		e.str(m.Err)
	default:
		return fmt.Errorf("encode: unknown control message kind %d", m.Kind)
	}
	return nil
}

// Decoder reads control messages from frames. It is not safe for
// concurrent use.
type Decoder struct {
	r      *bufio.Reader
	frame  []byte
	p      []byte // what is left of the frame
	slots  [argSlots]any
	gobIn  byteStream
	gobDec *gob.Decoder
	intern map[string]string
	// recent holds the strings str returned last, nextRecent the one to
	// replace next.
	recent     [8]string
	nextRecent int
	// Submissions are cut from slabs: one allocation for many ops, not
	// five an op.
	ops     []chunk.Op
	intSlab []int
	locs    []core.Location
	strs    []string
	lastAt  int64 // the last Timing.Received decoded (timing.go)
}

// slabSize is the number of items of a decoder's slabs.
const slabSize = 256

// Take returns n items cut from *slab, refilling it when short.
func Take[T any](slab *[]T, n int) []T {
	if len(*slab) < n {
		*slab = make([]T, max(n, slabSize))
	}
	v := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return v
}

func NewDecoder(r *bufio.Reader) *Decoder {
	d := &Decoder{r: r, intern: make(map[string]string)}
	d.gobDec = gob.NewDecoder(&d.gobIn)
	return d
}

// byteStream is the gob stream of the arguments, fed a message at a time.
type byteStream struct{ b []byte }

func (s *byteStream) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

func (s *byteStream) ReadByte() (byte, error) {
	if len(s.b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c, nil
}

// Next decodes the next message into m, reading a frame when the last one
// is used up. Errors from the connection pass through; a malformed message
// is errMalformed or an error naming what is wrong.
func (d *Decoder) Next(m *Msg) error {
	for len(d.p) == 0 {
		var h [4]byte
		if _, err := io.ReadFull(d.r, h[:]); err != nil {
			return err
		}
		n := binary.LittleEndian.Uint32(h[:])
		if n > maxFrame {
			return fmt.Errorf("control frame of %d bytes exceeds %d", n, maxFrame)
		}
		if cap(d.frame) < int(n) || cap(d.frame) > 1<<20 && n < 1<<16 {
			d.frame = make([]byte, n)
		}
		d.frame = d.frame[:n]
		if _, err := io.ReadFull(d.r, d.frame); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		d.p = d.frame
	}
	for {
		kind, err := d.byte()
		if err != nil {
			return err
		}
		if kind != msgArgs {
			*m = Msg{Kind: kind}
			return d.body(m)
		}
		if err := d.args(); err != nil {
			return err
		}
		if len(d.p) == 0 {
			return errMalformed // arguments with no op after them
		}
	}
}

// Buffered reports whether the current frame holds more messages: the
// next call to next will not read from the connection.
func (d *Decoder) Buffered() bool { return len(d.p) > 0 }

func (d *Decoder) byte() (byte, error) {
	if len(d.p) == 0 {
		return 0, errMalformed
	}
	c := d.p[0]
	d.p = d.p[1:]
	return c, nil
}

func (d *Decoder) uint() (uint64, error) {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		return 0, errMalformed
	}
	d.p = d.p[n:]
	return v, nil
}

func (d *Decoder) int() (int64, error) {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		return 0, errMalformed
	}
	d.p = d.p[n:]
	return v, nil
}

// count reads a length of items of at least one byte each.
func (d *Decoder) count() (int, error) {
	n, err := d.uint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(d.p)) {
		return 0, errMalformed
	}
	return int(n), nil
}

func (d *Decoder) bytes() ([]byte, error) {
	n, err := d.count()
	if err != nil {
		return nil, err
	}
	b := d.p[:n:n]
	d.p = d.p[n:]
	return b, nil
}

// str reads a string; short ones (worker names, addresses, kinds) are
// interned, since the same few come again and again.
func (d *Decoder) str() (string, error) {
	b, err := d.bytes()
	if err != nil || len(b) == 0 {
		return "", err
	}
	if len(b) > 64 {
		return string(b), nil
	}
	// The strings of a submit come in the same few shapes: its kind, and
	// a worker and an address an input. Comparing with the last ones is
	// cheaper than hashing.
	for _, s := range d.recent {
		if s == string(b) {
			return s, nil
		}
	}
	s, ok := d.intern[string(b)]
	if !ok {
		if len(d.intern) >= 4096 {
			clear(d.intern)
		}
		s = string(b)
		d.intern[s] = s
	}
	d.recent[d.nextRecent] = s
	d.nextRecent = (d.nextRecent + 1) % len(d.recent)
	return s, nil
}

func (d *Decoder) ints() ([]int, error) {
	n, err := d.count()
	if err != nil || n == 0 {
		return nil, err
	}
	v := Take(&d.intSlab, n)
	for i := range v {
		x, err := d.int()
		if err != nil {
			return nil, err
		}
		v[i] = int(x)
	}
	return v, nil
}

// ranges decodes what Encoder.ranges encoded.
func (d *Decoder) ranges() ([]chunk.Range, error) {
	n, err := d.count()
	if err != nil || n == 0 {
		return nil, err
	}
	rs := make([]chunk.Range, n)
	for k := range rs {
		rank, err := d.count()
		if err != nil {
			return nil, err
		}
		if rank == 0 {
			continue
		}
		dt, err := d.byte()
		if err != nil {
			return nil, err
		}
		off, err := d.int()
		if err != nil {
			return nil, err
		}
		shape := make([]int, rank-1)
		for i := range shape {
			v, err := d.int()
			if err != nil {
				return nil, err
			}
			shape[i] = int(v)
		}
		rs[k] = chunk.Range{Off: int(off), Shape: shape, DType: tensor.DType(dt)}
	}
	return rs, nil
}

func (d *Decoder) args() error {
	s, err := d.uint()
	if err != nil {
		return err
	}
	if s >= argSlots {
		return errMalformed
	}
	b, err := d.bytes()
	if err != nil {
		return err
	}
	d.gobIn.b = b
	var box argsBox
	if err := d.gobDec.Decode(&box); err != nil {
		return fmt.Errorf("decode op arguments: %w", err)
	}
	if len(d.gobIn.b) != 0 {
		return errMalformed
	}
	d.slots[s] = box.A
	return nil
}

// body decodes the fields of a message of kind m.Kind.
func (d *Decoder) body(m *Msg) error {
	var err error
	u := func() uint64 {
		var v uint64
		if err == nil {
			v, err = d.uint()
		}
		return v
	}
	i := func() int64 {
		var v int64
		if err == nil {
			v, err = d.int()
		}
		return v
	}
	s := func() string {
		var v string
		if err == nil {
			v, err = d.str()
		}
		return v
	}
	switch m.Kind {
	case MsgSubmit:
		m.Job, m.Session, m.Epoch = u(), int(min(u(), 1<<62)), u()
		m.Key, m.Attempt, m.Priority, m.ID = int(i()), int(i()), int(i()), u()
		m.Unit = int(min(u(), 1<<20))
		if err == nil {
			var f byte
			f, err = d.byte()
			m.Flush = f == 1
		}
		op := &Take(&d.ops, 1)[0]
		op.Key, op.Kind = int(i()), chunk.Kind(s())
		if err == nil {
			op.Inputs, err = d.ints()
		}
		if err == nil {
			op.Shape, err = d.ints()
		}
		if err == nil {
			var dt byte
			dt, err = d.byte()
			op.DType = tensor.DType(dt)
		}
		op.Stored, op.Node = u(), int32(i())
		slot := u()
		if err == nil {
			var rs []chunk.Range
			rs, err = d.ranges()
			op.Ranges = chunk.RangesOf(rs)
		}
		if err != nil {
			return err
		}
		if op.Ranges != nil && len(*op.Ranges) != len(op.Inputs) {
			return errMalformed
		}
		if slot > argSlots {
			return errMalformed
		}
		if slot > 0 {
			if op.Args = d.slots[slot-1]; op.Args == nil {
				return errMalformed
			}
		}
		m.Op = op
		if len(op.Inputs) > len(d.p) {
			return errMalformed
		}
		if len(op.Inputs) > 0 {
			m.Inputs = Take(&d.locs, len(op.Inputs))
			m.Addrs = Take(&d.strs, len(op.Inputs))
		}
		for k := range m.Inputs {
			m.Inputs[k] = core.Location{ID: u(), Worker: s(), NBytes: i()}
			m.Addrs[k] = s()
		}
	case MsgCancel:
		m.Job, m.Key, m.Attempt = u(), int(i()), int(i())
	case MsgFree, MsgAdopt:
		m.Session, m.Epoch = int(min(u(), 1<<62)), u()
		var n int
		if n, err = d.count(); err == nil {
			m.IDs = make([]uint64, n)
			for k := range m.IDs {
				m.IDs[k] = u()
			}
		}
	case MsgHeld:
		m.Session, m.Epoch = int(min(u(), 1<<62)), u()
		var n int
		if n, err = d.count(); err == nil {
			m.IDs, m.Sizes = make([]uint64, n), make([]int64, n)
			for k := range m.IDs {
				m.IDs[k], m.Sizes[k] = u(), i()
			}
		}
	case MsgLeaving, MsgHandedOff:
	case MsgStatus:
		m.Seq = u()
	case MsgStarted, MsgDone, MsgFailed, MsgCancelled:
		m.Job, m.Key, m.Attempt, m.ID, m.NBytes, m.Spilled = u(), int(i()), int(i()), u(), i(), i()
		if err == nil {
			var b []byte
			if b, err = d.bytes(); err == nil {
				m.Err = string(b)
			}
		}
		var f byte
		if err == nil {
			f, err = d.byte()
		}
		m.Final = f == 1
		if f > 1 {
			return errMalformed
		}
		if err == nil {
			var b []byte
			if b, err = d.bytes(); err == nil {
				m.Peer = string(b)
			}
		}
		if err == nil {
			err = d.timing(&m.Timing)
		}
	case MsgStatusReply:
		m.Seq = u()
		if err == nil {
			var b []byte
			if b, err = d.bytes(); err == nil {
				m.Text = string(b)
			}
		}
	case MsgFenced:
		m.Session, m.Epoch = int(min(u(), 1<<62)), u()
		if err == nil {
			var b []byte
			if b, err = d.bytes(); err == nil {
				m.Err = string(b)
			}
		}
	default:
		return fmt.Errorf("unknown control message kind %d", m.Kind)
	}
	return err
}
