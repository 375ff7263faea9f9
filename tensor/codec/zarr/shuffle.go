package zarr

import "encoding/binary"

// Blosc's shuffles of a block of n elements of typesize bytes.
//
// The byte shuffle writes byte plane j (byte j of every element) at
// j*n: a transpose of an n x typesize matrix of bytes. Typesizes 4 and 8
// (float32, float64, int32, int64: nearly every chunk) have vector
// kernels (shuffle_amd64.s) for all but the last few elements; every
// other typesize, the tails, and builds with the purego tag take the
// loops here, which are also the vector kernels' reference in the tests.
//
// The bit shuffle is built of the same pieces. Byte plane j, seen as n/8
// words of 8 bytes, holds in each word an 8 x 8 matrix of bits (byte t:
// element 8b+t's byte j); transposing each matrix (transpose8) puts bit k
// of the eight elements in byte k, and a byte shuffle of typesize 8 over
// the plane's words lays those bytes out as c-blosc's rows: row j*8+k
// holds bit k of byte j of every element, element i at bit i%8 of byte
// i/8. Unshuffling runs the three steps backwards. So the bit shuffles
// ride on the byte shuffles' kernels, with one cheap pass of word
// arithmetic between them, all within a block that stays in cache.

// shuffleBytes writes src's elements of typesize bytes byte plane by
// byte plane into dst; bytes past the last whole element are copied as
// they are. dst and src must not overlap.
func shuffleBytes(dst, src []byte, typesize int) {
	n := len(src) / typesize
	dst = dst[:len(src)]
	done := 0
	if typesize > 1 {
		done = shuffleVector(dst, src, typesize, n)
		shuffleGo(dst, src, typesize, n, done)
	} else {
		copy(dst, src[:n])
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// unshuffle undoes shuffleBytes.
func unshuffle(dst, src []byte, typesize int) {
	n := len(src) / typesize
	dst = dst[:len(src)]
	if typesize > 1 {
		done := unshuffleVector(dst, src, typesize, n)
		unshuffleGo(dst, src, typesize, n, done)
	} else {
		copy(dst, src[:n])
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// shuffleGo shuffles elements from..n-1 of src (n elements of typesize
// bytes) into the planes of dst.
func shuffleGo(dst, src []byte, typesize, n, from int) {
	switch typesize {
	case 4:
		p0, p1, p2, p3 := dst[:n], dst[n:2*n], dst[2*n:3*n], dst[3*n:4*n]
		for i := from; i < n; i++ {
			v := binary.LittleEndian.Uint32(src[4*i:])
			p0[i], p1[i], p2[i], p3[i] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
	case 8:
		p0, p1, p2, p3 := dst[:n], dst[n:2*n], dst[2*n:3*n], dst[3*n:4*n]
		p4, p5, p6, p7 := dst[4*n:5*n], dst[5*n:6*n], dst[6*n:7*n], dst[7*n:8*n]
		for i := from; i < n; i++ {
			v := binary.LittleEndian.Uint64(src[8*i:])
			p0[i], p1[i], p2[i], p3[i] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
			p4[i], p5[i], p6[i], p7[i] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
		}
	default:
		for j := range typesize {
			plane := dst[j*n : (j+1)*n]
			for i := from; i < n; i++ {
				plane[i] = src[i*typesize+j]
			}
		}
	}
}

// unshuffleGo gathers elements from..n-1 of dst from the planes of src.
func unshuffleGo(dst, src []byte, typesize, n, from int) {
	switch typesize {
	case 4:
		p0, p1, p2, p3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		for i := from; i < n; i++ {
			binary.LittleEndian.PutUint32(dst[4*i:], uint32(p0[i])|uint32(p1[i])<<8|uint32(p2[i])<<16|uint32(p3[i])<<24)
		}
	case 8:
		p0, p1, p2, p3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		p4, p5, p6, p7 := src[4*n:5*n], src[5*n:6*n], src[6*n:7*n], src[7*n:8*n]
		for i := from; i < n; i++ {
			lo := uint32(p0[i]) | uint32(p1[i])<<8 | uint32(p2[i])<<16 | uint32(p3[i])<<24
			hi := uint32(p4[i]) | uint32(p5[i])<<8 | uint32(p6[i])<<16 | uint32(p7[i])<<24
			binary.LittleEndian.PutUint64(dst[8*i:], uint64(lo)|uint64(hi)<<32)
		}
	default:
		for j := range typesize {
			plane := src[j*n : (j+1)*n]
			for i := from; i < n; i++ {
				dst[i*typesize+j] = plane[i]
			}
		}
	}
}

// transpose8 transposes, in place, the 8 x 8 matrix of bits in each
// 8-byte word of b (bit t of byte k trades places with bit k of byte t),
// by three rounds of swapping off-diagonal blocks (2 x 2, 4 x 4 of
// those, then 16 x 16 bits).
func transpose8(b []byte) {
	for i := transpose8Vector(b); i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if x == 0 || x == ^uint64(0) {
			continue // its own transpose; common in the high bytes
		}
		t := (x ^ x>>7) & 0x00aa00aa00aa00aa
		x ^= t ^ t<<7
		t = (x ^ x>>14) & 0x0000cccc0000cccc
		x ^= t ^ t<<14
		t = (x ^ x>>28) & 0x00000000f0f0f0f0
		x ^= t ^ t<<28
		binary.LittleEndian.PutUint64(b[i:], x)
	}
}

// bitshuffle writes the bits of src's elements plane by plane into dst,
// using tmp (at least len(src) bytes) between the steps: for each byte j
// of an element and each bit k of it (least significant first), a row of
// n/8 bytes holding that bit of every element. As c-blosc's, it shuffles
// only when the number of elements n is a multiple of 8 and copies the
// block as it is otherwise; bytes past the last whole element are copied
// as they are.
func bitshuffle(dst, src, tmp []byte, typesize int) {
	n := len(src) / typesize
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	body := n * typesize
	tmp = tmp[:body]
	shuffleBytes(tmp, src[:body], typesize)
	transpose8(tmp)
	for j := range typesize {
		shuffleBytes(dst[j*n:(j+1)*n], tmp[j*n:(j+1)*n], 8)
	}
	copy(dst[body:len(src)], src[body:])
}

// bitunshuffle undoes bitshuffle, with tmp as scratch.
func bitunshuffle(dst, src, tmp []byte, typesize int) {
	n := len(src) / typesize
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	body := n * typesize
	tmp = tmp[:body]
	for j := range typesize {
		unshuffle(tmp[j*n:(j+1)*n], src[j*n:(j+1)*n], 8)
	}
	transpose8(tmp)
	unshuffle(dst[:body], tmp, typesize)
	copy(dst[body:len(src)], src[body:])
}
