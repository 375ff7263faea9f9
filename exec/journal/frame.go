package journal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

const (
	headerSize = 9 // length uint32, kind uint8, crc uint32
	// MaxRecord bounds a record's payload: a longer length read from a
	// file is damage, not a record to allocate for.
	MaxRecord = 256 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrTorn is a file that ends inside a record.
var ErrTorn = errors.New("torn record at the end")

// ErrChecksum is a record whose checksum does not match its bytes.
var ErrChecksum = errors.New("checksum mismatch")

// A DamageError says where a file stops being readable, and why.
type DamageError struct {
	Offset int64 // of the first record not read
	Err    error // ErrTorn, ErrChecksum, or what was wrong with the record
}

func (e *DamageError) Error() string { return fmt.Sprintf("at byte %d: %v", e.Offset, e.Err) }
func (e *DamageError) Unwrap() error { return e.Err }

// Encode appends record r, framed, to buf.
func Encode(buf []byte, r Record) ([]byte, error) {
	if r.Kind == 0 || r.Kind >= kindEnd {
		return buf, fmt.Errorf("journal: encode: unknown record %v", r.Kind)
	}
	payload, err := json.Marshal(r)
	if err != nil {
		return buf, fmt.Errorf("journal: encode %v: %w", r.Kind, err)
	}
	if len(payload) > MaxRecord {
		return buf, fmt.Errorf("journal: encode %v: %d bytes, more than %d", r.Kind, len(payload), MaxRecord)
	}
	var h [headerSize]byte
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	h[4] = byte(r.Kind)
	crc := crc32.Update(crc32.Checksum(h[:5], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[5:9], crc)
	return append(append(buf, h[:]...), payload...), nil
}

// Decode reads the records framed in data. It returns every record up to
// the first damage, and, if there is any, a *DamageError naming where
// and why; a file ending exactly after a record is not damaged.
func Decode(data []byte) ([]Record, error) {
	var rs []Record
	off := 0
	for off < len(data) {
		damage := func(err error) ([]Record, error) {
			return rs, &DamageError{Offset: int64(off), Err: err}
		}
		if len(data)-off < headerSize {
			return damage(ErrTorn)
		}
		h := data[off : off+headerSize]
		n := int(binary.LittleEndian.Uint32(h[0:4]))
		if n > MaxRecord {
			// A length this long is a flipped byte, not a record.
			return damage(fmt.Errorf("%w: record length %d", ErrChecksum, n))
		}
		if len(data)-off-headerSize < n {
			return damage(ErrTorn)
		}
		payload := data[off+headerSize : off+headerSize+n]
		crc := crc32.Update(crc32.Checksum(h[:5], castagnoli), castagnoli, payload)
		if crc != binary.LittleEndian.Uint32(h[5:9]) {
			return damage(ErrChecksum)
		}
		r := Record{Kind: Kind(h[4])}
		if r.Kind == 0 || r.Kind >= kindEnd {
			return damage(fmt.Errorf("unknown record %v", r.Kind))
		}
		if err := json.Unmarshal(payload, &r); err != nil {
			return damage(fmt.Errorf("%v record: %w", r.Kind, err))
		}
		r.Kind = Kind(h[4])
		rs = append(rs, r)
		off += headerSize + n
	}
	return rs, nil
}

// Restore folds the records framed in data into a session's state. Any
// damage, or records that do not make a history (State.Apply), is an
// error: the session is lost, and the state is nil, never half-made.
func Restore(data []byte) (*State, error) {
	rs, err := Decode(data)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, errors.New("empty journal")
	}
	s := &State{}
	for i, r := range rs {
		if err := s.Apply(r); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
	}
	return s, nil
}

// Torn says whether err, the damage Restore or Decode found in data, is
// a torn record at the end of the file (the machine stopped, or the disk
// filled, while the record was written, and the bytes written of it
// could not be cut off again), and where that record begins. A torn
// record is told from other damage that also reads as a record longer
// than the file (a flipped bit in a length) by what it cannot be: its
// bytes are not a whole record of a shorter length (the checksum, which
// covers the length, would match it), and no whole record begins after
// it. Such damage loses the session; a torn record only itself.
func Torn(data []byte, err error) (int64, bool) {
	var d *DamageError
	if !errors.As(err, &d) || !errors.Is(d.Err, ErrTorn) {
		return 0, false
	}
	off := int(d.Offset)
	rest := data[off:]
	if len(rest) >= headerSize {
		// A length that was flipped: the rest, taken whole, checks.
		var h [headerSize]byte
		copy(h[:], rest[:headerSize])
		binary.LittleEndian.PutUint32(h[0:4], uint32(len(rest)-headerSize))
		if crc32.Update(crc32.Checksum(h[:5], castagnoli), castagnoli, rest[headerSize:]) == binary.LittleEndian.Uint32(h[5:9]) {
			return 0, false
		}
	}
	for o := off + 1; o+headerSize <= len(data); o++ {
		if wholeAt(data, o) {
			return 0, false
		}
	}
	return d.Offset, true
}

// wholeAt says whether a record whose checksum matches begins at byte
// off of data.
func wholeAt(data []byte, off int) bool {
	h := data[off : off+headerSize]
	n := int(binary.LittleEndian.Uint32(h[0:4]))
	if n > len(data)-off-headerSize {
		return false
	}
	payload := data[off+headerSize : off+headerSize+n]
	return crc32.Update(crc32.Checksum(h[:5], castagnoli), castagnoli, payload) == binary.LittleEndian.Uint32(h[5:9])
}
