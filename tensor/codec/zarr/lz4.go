package zarr

import (
	"encoding/binary"
	"math/bits"
)

// An LZ4 block (lz4's block format, as liblz4 and numcodecs write it) is
// a run of sequences: a token (literal count in the high 4 bits, match
// length less 4 in the low 4; 15 means more follows in bytes, while they
// are 255), the literals, a 16-bit little-endian distance back, and the
// match's extra length bytes. The last sequence is literals only, and
// holds at least the block's last 5 bytes; no match starts in its last
// 12.
//
// The compressor here is the greedy single-probe kind liblz4's
// LZ4_compress_fast is: one hash table of recent positions of 4-byte
// sequences, a probe per position, extended backwards and forwards by
// 8-byte compares. Its acceleration skips positions faster the longer no
// match is found (c-blosc asks for 10 - clevel, so 5 at zarr-python's
// default clevel 5): data that does not compress passes quickly.
const (
	lz4HashLog    = 12
	lz4MinMatch   = 4
	lz4LastLits   = 5  // the block ends with this many literals at least
	lz4MFLimit    = 12 // no match starts this close to the end
	lz4MaxOffset  = 65535
	lz4SkipLog    = 6 // a longer step every 1<<6 misses
	lz4MinCompLen = lz4MFLimit + 1
)

// lz4Table holds positions of the block being compressed by their
// sequence's hash; reused from block to block, cleared for each.
type lz4Table [1 << lz4HashLog]uint32

func lz4Hash(v uint32) uint32 { return v * 2654435761 >> (32 - lz4HashLog) }

// lz4Bound is the most an LZ4 block of n bytes can take.
func lz4Bound(n int) int { return n + n/255 + 16 }

// lz4Compress appends src compressed as one LZ4 block to dst, skipping
// ahead accel times faster on misses (1 is liblz4's default).
//
// Its sequences are written by index into room made once (the block's
// bound), not appended a byte at a time, and a short literal run (most
// are: the shuffled planes of a float's mantissa match in 5-7 byte
// pieces) is copied 16 bytes at once: appends, a call to copy a run and
// matchLen's first 32-byte round were half its time on a climate
// anomaly's chunk. The blocks are those of lz4CompressRef (in the tests)
// to the byte.
func lz4Compress(dst, src []byte, accel int, t *lz4Table) []byte {
	n := len(src)
	if n < lz4MinCompLen {
		return lz4Literals(dst, src)
	}
	accel = max(accel, 1)
	clear(t[:])
	dst = grow(dst, lz4Bound(n))
	out := dst[:cap(dst)]
	o := len(dst)
	mflimit := n - lz4MFLimit
	matchlimit := n - lz4LastLits
	anchor, ip := 0, 1
	t[lz4Hash(binary.LittleEndian.Uint32(src))] = 0
	for ip < mflimit {
		// Find a match: probe the table at ip, stepping further on each
		// miss.
		step, misses := 1, accel<<lz4SkipLog
		var ref int
		for {
			v := binary.LittleEndian.Uint32(src[ip:])
			h := lz4Hash(v)
			ref = int(t[h])
			t[h] = uint32(ip)
			if ip-ref <= lz4MaxOffset && binary.LittleEndian.Uint32(src[ref:]) == v {
				break
			}
			ip += step
			step = misses >> lz4SkipLog
			misses++
			if ip >= mflimit {
				return lz4Last(out[:o], src[anchor:])
			}
		}
		for ip > anchor && ref > 0 && src[ip-1] == src[ref-1] {
			ip--
			ref--
		}
		// The match's length: most differ within their first word past
		// the four bytes the probe compared.
		ml := lz4MinMatch
		if a := ip + lz4MinMatch; a+8 <= matchlimit {
			if x := binary.LittleEndian.Uint64(src[a:]) ^ binary.LittleEndian.Uint64(src[ref+lz4MinMatch:]); x != 0 {
				ml += bits.TrailingZeros64(x) >> 3
			} else {
				ml += 8 + matchLen(src[a+8:matchlimit], src[ref+lz4MinMatch+8:])
			}
		} else {
			ml += matchLen(src[a:matchlimit], src[ref+lz4MinMatch:])
		}
		o = lz4PutSequence(out, o, src, anchor, ip, ip-ref, ml)
		ip += ml
		anchor = ip
		if ip >= mflimit {
			break
		}
		// The position two back, for the matches to come; the next probe
		// is at ip itself.
		t[lz4Hash(binary.LittleEndian.Uint32(src[ip-2:]))] = uint32(ip - 2)
	}
	return lz4Last(out[:o], src[anchor:])
}

// lz4PutSequence writes at out[o:] the sequence of the literals
// src[anchor:ip] and a match of ml bytes off back, and returns where it
// ends. out has room for the block's bound; a literal run of 16 bytes or
// fewer is copied as two words when 16 bytes past it are in both slices
// (the bytes past its end are written over by what follows).
func lz4PutSequence(out []byte, o int, src []byte, anchor, ip, off, ml int) int {
	ll, m := ip-anchor, ml-lz4MinMatch
	tok := byte(min(m, 15))
	tp := o
	o++
	if ll >= 15 {
		tok |= 15 << 4
		o = lz4PutLength(out, o, ll-15)
	} else {
		tok |= byte(ll << 4)
	}
	out[tp] = tok
	if ll <= 16 && anchor+16 <= len(src) && o+16 <= len(out) {
		s, d := src[anchor:anchor+16], out[o:o+16]
		binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(s))
		binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(s[8:]))
	} else {
		copy(out[o:], src[anchor:ip])
	}
	o += ll
	out[o], out[o+1] = byte(off), byte(off>>8)
	o += 2
	if m >= 15 {
		o = lz4PutLength(out, o, m-15)
	}
	return o
}

// lz4PutLength writes at out[o:] the extra bytes of a length (255 while
// more follows) and returns where they end.
func lz4PutLength(out []byte, o, n int) int {
	for ; n >= 255; n -= 255 {
		out[o] = 255
		o++
	}
	out[o] = byte(n)
	return o + 1
}

// matchLen returns how many bytes a and b have in common from the start,
// up to len(a) (b is at least as long).
func matchLen(a, b []byte) int {
	n := 0
	// 32 bytes a round while they match: runs (a shuffled float's
	// exponent plane is one) go four words a test.
	for ; n+32 <= len(a); n += 32 {
		x, y := a[n:n+32], b[n:n+32]
		d0 := binary.LittleEndian.Uint64(x) ^ binary.LittleEndian.Uint64(y)
		d1 := binary.LittleEndian.Uint64(x[8:]) ^ binary.LittleEndian.Uint64(y[8:])
		d2 := binary.LittleEndian.Uint64(x[16:]) ^ binary.LittleEndian.Uint64(y[16:])
		d3 := binary.LittleEndian.Uint64(x[24:]) ^ binary.LittleEndian.Uint64(y[24:])
		if d0|d1|d2|d3 != 0 {
			break
		}
	}
	for ; n+8 <= len(a); n += 8 {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
	}
	for n < len(a) && a[n] == b[n] {
		n++
	}
	return n
}

// lz4Length appends the extra bytes of a length: 255 while more follows.
func lz4Length(dst []byte, n int) []byte {
	for ; n >= 255; n -= 255 {
		dst = append(dst, 255)
	}
	return append(dst, byte(n))
}

// lz4Last appends the last sequence, literals only.
func lz4Last(dst, lit []byte) []byte { return lz4Literals(dst, lit) }

// lz4Literals appends src as an LZ4 sequence of literals only (a whole
// block when it is the only one).
func lz4Literals(dst, src []byte) []byte {
	n := len(src)
	if n < 15 {
		dst = append(dst, byte(n<<4))
	} else {
		dst = append(dst, 15<<4)
		dst = lz4Length(dst, n-15)
	}
	return append(dst, src...)
}
