package zarr

import "fmt"

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
			if op-ref >= length {
				copy(dst[op:op+length], dst[ref:])
			} else { // overlapping: byte by byte repeats the pattern
				for i := range length {
					dst[op+i] = dst[ref+i]
				}
			}
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
