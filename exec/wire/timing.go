package wire

import (
	"encoding/binary"
	"math"

	"marsfs/exec/core"
)

// A report's Timing (core.Timing) travels after its other fields: a flag
// byte (0: no timing; else 1 + the phase), the time the worker received
// the op as a varint difference from the previous report's on the
// connection (reports follow each other closely: two or three bytes),
// then a fixed block of timingBlock bytes, little-endian: the other
// points (Started, Allocated, Loaded, Computed, Stored, Since) as 4-byte
// microseconds after the received time plus one (0 for a point not
// reached; a point more than 71 minutes after it saturates), and the slot
// in 2 bytes; last the bytes fetched as a varint. Fixed widths cost a few
// bytes more than varints and far less time: a done report of a small op
// is some 30 bytes longer, and encodes and decodes in a few nanoseconds
// more.

const timingBlock = 6*4 + 2

func (e *Encoder) timing(t *core.Timing) {
	if t.Received == 0 {
		e.buf = append(e.buf, 0)
		return
	}
	e.buf = append(e.buf, 1+byte(t.Phase))
	e.buf = binary.AppendVarint(e.buf, t.Received-e.lastAt)
	e.lastAt = t.Received
	var blk [timingBlock]byte
	for i, at := range [...]int64{t.Started, t.Allocated, t.Loaded, t.Computed, t.Stored, t.Since} {
		binary.LittleEndian.PutUint32(blk[4*i:], after(at, t.Received))
	}
	binary.LittleEndian.PutUint16(blk[24:], uint16(min(max(t.Slot, 0), math.MaxUint16)))
	e.buf = append(e.buf, blk[:]...)
	e.buf = binary.AppendUvarint(e.buf, uint64(max(t.Fetched, 0)))
}

// after encodes point at as microseconds after base, plus one; 0 for none.
// A point before base (which one clock cannot give) is taken as base.
func after(at, base int64) uint32 {
	if at == 0 {
		return 0
	}
	return uint32(min(max(at-base, 0), math.MaxUint32-1)) + 1
}

func (d *Decoder) timing(t *core.Timing) error {
	flag, err := d.byte()
	if err != nil || flag == 0 {
		return err
	}
	if flag > 1+byte(core.Storing) {
		return errMalformed
	}
	t.Phase = core.Phase(flag - 1)
	delta, err := d.int()
	if err != nil {
		return err
	}
	t.Received = d.lastAt + delta
	d.lastAt = t.Received
	if len(d.p) < timingBlock {
		return errMalformed
	}
	blk := d.p[:timingBlock]
	d.p = d.p[timingBlock:]
	for i, p := range [...]*int64{&t.Started, &t.Allocated, &t.Loaded, &t.Computed, &t.Stored, &t.Since} {
		if v := binary.LittleEndian.Uint32(blk[4*i:]); v > 0 {
			*p = t.Received + int64(v-1)
		}
	}
	t.Slot = int(binary.LittleEndian.Uint16(blk[24:]))
	fetched, err := d.uint()
	if err != nil {
		return err
	}
	if fetched > 1<<62 {
		return errMalformed
	}
	t.Fetched = int64(fetched)
	return nil
}
