package zarr

import (
	"encoding/binary"
	"fmt"
)

// blosclzDecode decompresses src, a BloscLZ stream (c-blosc's FastLZ
// variant), into dst, and returns the number of bytes written.
//
// The stream is a sequence of instructions, each starting with a control
// byte. Below 32 it is a literal run of ctrl+1 bytes that follow. Else its
// top three bits give a match length (7 meaning: add the following bytes,
// while they are 255), its low five bits and the next byte the distance
// back; a distance byte of 255 with the low bits all set means a 16-bit
// distance follows (big-endian), counted past 8191. As in c-blosc, the
// stream ends at its last byte: a match read at the very end is not
// copied (the compressor never ends with one).
func blosclzDecode(dst, src []byte) (int, error) {
	const maxDistance = 8191
	if len(src) == 0 {
		return 0, nil
	}
	ip, op := 1, 0
	ctrl := int(src[0] & 31)
	for {
		if ctrl >= 32 {
			length := ctrl>>5 - 1
			ofs := (ctrl & 31) << 8
			if length == 6 {
				for {
					if ip+1 >= len(src) {
						return 0, fmt.Errorf("blosclz: a match length runs past the end, at %d", ip)
					}
					code := int(src[ip])
					ip++
					length += code
					if code != 255 {
						break
					}
				}
			} else if ip+1 >= len(src) {
				return 0, fmt.Errorf("blosclz: a match runs past the end, at %d", ip)
			}
			code := int(src[ip])
			ip++
			length += 3
			dist := ofs + code
			if code == 255 && ofs == 31<<8 {
				if ip+1 >= len(src) {
					return 0, fmt.Errorf("blosclz: a far match runs past the end, at %d", ip)
				}
				dist = int(src[ip])<<8 | int(src[ip+1]) + maxDistance
				ip += 2
			}
			ref := op - dist - 1
			if op+length > len(dst) {
				return 0, fmt.Errorf("blosclz: a match of %d bytes at %d overflows %d", length, op, len(dst))
			}
			if ref < 0 {
				return 0, fmt.Errorf("blosclz: a match %d bytes back at %d", dist+1, op)
			}
			if ip >= len(src) {
				break
			}
			ctrl = int(src[ip])
			ip++
			blosclzCopy(dst[:op+length], op, op-ref)
			op += length
		} else {
			n := ctrl + 1
			if op+n > len(dst) || ip+n > len(src) {
				return 0, fmt.Errorf("blosclz: a literal run of %d bytes at %d overflows", n, ip)
			}
			copy(dst[op:], src[ip:ip+n])
			op += n
			ip += n
			if ip >= len(src) {
				break
			}
			ctrl = int(src[ip])
			ip++
		}
	}
	return op, nil
}

// BloscLZ's limits: literal runs of 32 bytes at most; distances of 8191
// fit the short form, to 65535 + 8191 the long one.
const (
	blosclzMaxCopy  = 32
	blosclzMaxNear  = 8191
	blosclzMaxFar   = 65535 + blosclzMaxNear
	blosclzHashLog  = 14
	blosclzMinNear  = 5 // shorter matches cost the decoder more than literals
	blosclzMinFar   = 8
	blosclzMinInput = 16
)

// blosclzTable holds positions of the stream being compressed by the
// hash of their 4 bytes; reused, cleared for each stream.
type blosclzTable [1 << blosclzHashLog]uint32

// blosclzCompress appends src compressed as a BloscLZ stream to dst:
// greedy matches of 5 bytes or more (8 far back) found by one hash probe
// a position, skipping ahead faster the longer no match is found, and
// always ending with literals, as the format needs.
func blosclzCompress(dst, src []byte, t *blosclzTable) []byte {
	n := len(src)
	if n < blosclzMinInput {
		return blosclzLiterals(dst, src)
	}
	clear(t[:])
	limit := n - 12   // no match starts past here
	matchEnd := n - 4 // nor ends: the stream ends with literals
	anchor, ip := 0, 1
	for ip < limit {
		v := binary.LittleEndian.Uint32(src[ip:])
		h := v * 2654435761 >> (32 - blosclzHashLog)
		ref := int(t[h])
		t[h] = uint32(ip)
		d := ip - ref
		if d <= 0 || d > blosclzMaxFar || binary.LittleEndian.Uint32(src[ref:]) != v {
			ip += 1 + (ip-anchor)>>6
			continue
		}
		ml := 4 + matchLen(src[ip+4:matchEnd], src[ref+4:])
		d-- // distances are stored less one
		if ml < blosclzMinNear || d >= blosclzMaxNear && ml < blosclzMinFar {
			ip++
			continue
		}
		dst = blosclzLiterals(dst, src[anchor:ip])
		dst = blosclzMatch(dst, ml-2, d)
		ip += ml
		anchor = ip
		if ip < limit {
			t[binary.LittleEndian.Uint32(src[ip-1:])*2654435761>>(32-blosclzHashLog)] = uint32(ip - 1)
		}
	}
	return blosclzLiterals(dst, src[anchor:])
}

// blosclzLiterals appends lit as literal runs.
func blosclzLiterals(dst, lit []byte) []byte {
	for len(lit) > 0 {
		k := min(len(lit), blosclzMaxCopy)
		dst = append(dst, byte(k-1))
		dst = append(dst, lit[:k]...)
		lit = lit[k:]
	}
	return dst
}

// blosclzMatch appends a match of length l+2 at distance d+1.
func blosclzMatch(dst []byte, l, d int) []byte {
	far := d >= blosclzMaxNear
	hi := d >> 8
	if far {
		hi = 31
	}
	if l < 7 {
		dst = append(dst, byte(l<<5|hi))
	} else {
		dst = append(dst, byte(7<<5|hi))
		for l -= 7; l >= 255; l -= 255 {
			dst = append(dst, 255)
		}
		dst = append(dst, byte(l))
	}
	if !far {
		return append(dst, byte(d))
	}
	d -= blosclzMaxNear
	return append(dst, 255, byte(d>>8), byte(d))
}

// blosclzCopy fills dst[op:] with the bytes from dist back. An
// overlapping match (a run of one byte is one at distance 1, which
// shuffled floats' exponent planes are full of) repeats every dist
// bytes, so it is laid by copies that double each time, not a byte at a
// time.
func blosclzCopy(dst []byte, op, dist int) {
	switch {
	case dist >= len(dst)-op:
		copy(dst[op:], dst[op-dist:op])
	default:
		from := op - dist
		for op < len(dst) {
			n := copy(dst[op:], dst[from:op])
			op += n
		}
	}
}
