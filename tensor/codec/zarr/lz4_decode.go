package zarr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Why an LZ4 block does not decode: the decoders return one of these
// (lz4DecodeGo's reference loop and the assembly one alike), and
// lz4Decode says where.
var (
	errLZ4Src    = errors.New("lz4: the block ends inside a sequence")
	errLZ4Dst    = errors.New("lz4: the block decodes to more bytes than its chunk")
	errLZ4Offset = errors.New("lz4: a match reaches back before the block's start")
)

// lz4Decode decodes the LZ4 block src into dst and returns the number
// of bytes written. It never writes outside dst nor reads outside src,
// whatever src holds. On amd64 the loop is in assembly (lz4_amd64.s),
// which copies 16 bytes at a time where both buffers have room, and
// lays repeating patterns (runs, which byte-shuffled floats' exponent
// planes are full of) 16 bytes a store.
func lz4Decode(dst, src []byte) (int, error) {
	n := lz4DecodeBlock(dst, src)
	if n >= 0 {
		return n, nil
	}
	return 0, lz4Errs[-n-1]
}

var lz4Errs = [...]error{errLZ4Src, errLZ4Dst, errLZ4Offset}

// lz4DecodeGo is lz4DecodeBlock in Go: the bytes written, or -1, -2, -3
// for the errors of lz4Errs.
func lz4DecodeGo(dst, src []byte) int {
	ip, op := 0, 0
	for {
		if ip >= len(src) {
			return -1
		}
		tok := int(src[ip])
		ip++
		lit := tok >> 4
		if lit == 15 {
			for {
				if ip >= len(src) {
					return -1
				}
				b := int(src[ip])
				ip++
				lit += b
				if b != 255 {
					break
				}
			}
		}
		if lit > len(src)-ip {
			return -1
		}
		if lit > len(dst)-op {
			return -2
		}
		copy(dst[op:], src[ip:ip+lit])
		ip += lit
		op += lit
		if ip == len(src) {
			return op
		}
		if len(src)-ip < 2 {
			return -1
		}
		off := int(binary.LittleEndian.Uint16(src[ip:]))
		ip += 2
		if off == 0 || off > op {
			return -3
		}
		ml := tok & 15
		if ml == 15 {
			for {
				if ip >= len(src) {
					return -1
				}
				b := int(src[ip])
				ip++
				ml += b
				if b != 255 {
					break
				}
			}
		}
		ml += lz4MinMatch
		if ml > len(dst)-op {
			return -2
		}
		if off >= ml {
			copy(dst[op:op+ml], dst[op-off:])
		} else {
			for i := range ml { // overlapping: repeats the pattern
				dst[op+i] = dst[op-off+i]
			}
		}
		op += ml
	}
}

// lz4Block decodes src into all of dst: fewer bytes is an error.
func lz4Block(dst, src []byte) error {
	n, err := lz4Decode(dst, src)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("lz4: %d bytes decoded for %d", n, len(dst))
	}
	return nil
}
