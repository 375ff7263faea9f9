package wire

import (
	"marsfs/exec/core"
)

// A report's Timing (core.Timing) travels after its other fields, in a few
// bytes: a flag byte (0: no timing; else 1 + the phase), the time the
// worker received the op as a difference from the previous report's on
// the connection (reports follow each other closely, so it is most often
// two or three bytes), the other points as microseconds after it (plus
// one, 0 for a point not reached), then the slot and the bytes fetched.
// A done report of a small op costs about a dozen bytes more.

func (e *Encoder) timing(t *core.Timing) {
	if t.Received == 0 {
		e.buf = append(e.buf, 0)
		return
	}
	e.buf = append(e.buf, 1+byte(t.Phase))
	e.int(t.Received - e.lastAt)
	e.lastAt = t.Received
	for _, at := range [...]int64{t.Started, t.Allocated, t.Loaded, t.Computed, t.Stored, t.Since} {
		e.uint(after(at, t.Received))
	}
	e.uint(uint64(t.Slot))
	e.uint(uint64(max(t.Fetched, 0)))
}

// after encodes point at as microseconds after base, plus one; 0 for none.
// A point before base (which one clock cannot give) is taken as base.
func after(at, base int64) uint64 {
	if at == 0 {
		return 0
	}
	return uint64(max(at-base, 0)) + 1
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
	for _, p := range [...]*int64{&t.Started, &t.Allocated, &t.Loaded, &t.Computed, &t.Stored, &t.Since} {
		v, err := d.uint()
		if err != nil {
			return err
		}
		if v > 0 {
			*p = t.Received + int64(v-1)
		}
	}
	slot, err := d.uint()
	if err != nil {
		return err
	}
	fetched, err := d.uint()
	if err != nil {
		return err
	}
	if slot > 1<<20 || fetched > 1<<62 {
		return errMalformed
	}
	t.Slot, t.Fetched = int(slot), int64(fetched)
	return nil
}
