package zarr

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// refShuffle is the byte shuffle by its definition.
func refShuffle(src []byte, typesize int) []byte {
	n := len(src) / typesize
	dst := bytes.Clone(src)
	for i := range n {
		for j := range typesize {
			dst[j*n+i] = src[i*typesize+j]
		}
	}
	return dst
}

// refBitshuffle is the bit shuffle by its definition: row j*8+k holds
// bit k of byte j of every element, element i at bit i%8 of byte i/8.
func refBitshuffle(src []byte, typesize int) []byte {
	n := len(src) / typesize
	dst := bytes.Clone(src)
	if n%8 != 0 {
		return dst
	}
	clear(dst[:n*typesize])
	for i := range n {
		for j := range typesize {
			for k := range 8 {
				if src[i*typesize+j]>>k&1 != 0 {
					dst[(j*8+k)*(n/8)+i/8] |= 1 << (i % 8)
				}
			}
		}
	}
	return dst
}

// shuffleSizes are block sizes in elements around the vector kernels'
// rounds of 32: none, short of one, a few, and with tails.
var shuffleSizes = []int{0, 1, 7, 8, 31, 32, 33, 40, 64, 96, 255, 256, 257, 1000, 4096, 4104}

// eachPath runs f with the vector kernels on (where the CPU has them)
// and off.
func eachPath(t *testing.T, f func(t *testing.T)) {
	saved := useShuffleAVX2
	defer func() { useShuffleAVX2 = saved }()
	for _, vec := range []bool{false, true} {
		if vec && !saved {
			continue
		}
		useShuffleAVX2 = vec
		t.Run(fmt.Sprintf("vector=%v", vec), f)
	}
}

// TestShuffleDefinition checks the byte and bit shuffles, on every
// typesize from 1 to 16 (and 32, 255) and on block sizes that are not a
// multiple of the element or of the kernels' rounds, against their
// definitions, and that each unshuffle undoes its shuffle; with the
// vector kernels and with the loops alone.
func TestShuffleDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	eachPath(t, func(t *testing.T) {
		for _, ts := range append([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 32, 255) {
			for _, n := range shuffleSizes {
				for _, extra := range []int{0, 1, ts - 1} {
					size := n*ts + extra
					src := make([]byte, size)
					for i := range src {
						src[i] = byte(r.Uint32())
					}
					got, back, tmp := make([]byte, size), make([]byte, size), make([]byte, size)
					shuffleBytes(got, src, ts)
					if want := refShuffle(src, ts); !bytes.Equal(got, want) {
						t.Fatalf("shuffle typesize %d, %d bytes: differs from the definition", ts, size)
					}
					unshuffle(back, got, ts)
					if !bytes.Equal(back, src) {
						t.Fatalf("unshuffle typesize %d, %d bytes: not the input", ts, size)
					}
					bitshuffle(got, src, tmp, ts)
					if want := refBitshuffle(src, ts); !bytes.Equal(got, want) {
						t.Fatalf("bitshuffle typesize %d, %d bytes: differs from the definition", ts, size)
					}
					clear(back)
					bitunshuffle(back, got, tmp, ts)
					if !bytes.Equal(back, src) {
						t.Fatalf("bitunshuffle typesize %d, %d bytes: not the input", ts, size)
					}
				}
			}
		}
	})
}

// TestShuffleVectorMatchesLoops runs the vector kernels and the loops on
// the same large random blocks, with planes at odd offsets (a stream's
// start in a frame is any byte), and compares them byte for byte.
func TestShuffleVectorMatchesLoops(t *testing.T) {
	if !useShuffleAVX2 {
		t.Skip("no vector kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, ts := range []int{4, 8} {
		for _, n := range []int{32, 64, 4096 + 31, 131072} {
			buf := make([]byte, n*ts+3)
			for i := range buf {
				buf[i] = byte(r.Uint32())
			}
			src := buf[3:] // unaligned
			vec, loop := make([]byte, len(src)), make([]byte, len(src))
			shuffleBytes(vec, src, ts)
			useShuffleAVX2 = false
			shuffleBytes(loop, src, ts)
			useShuffleAVX2 = true
			if !bytes.Equal(vec, loop) {
				t.Fatalf("shuffle typesize %d, %d elements: the kernel differs from the loop", ts, n)
			}
			unshuffle(vec, src, ts)
			useShuffleAVX2 = false
			unshuffle(loop, src, ts)
			useShuffleAVX2 = true
			if !bytes.Equal(vec, loop) {
				t.Fatalf("unshuffle typesize %d, %d elements: the kernel differs from the loop", ts, n)
			}
		}
	}
}

// BenchmarkShuffle times the shuffles of a 512 KiB block (c-blosc's for
// float32 at zarr-python's default level), in cache.
func BenchmarkShuffle(b *testing.B) {
	const size = 512 << 10
	src := testData(size, 4, 1)
	dst, tmp := make([]byte, size), make([]byte, size)
	for _, ts := range []int{4, 8} {
		for _, vec := range []bool{false, true} {
			if vec && !useShuffleAVX2 {
				continue
			}
			saved := useShuffleAVX2
			useShuffleAVX2 = vec
			name := fmt.Sprintf("ts%d/vector=%v", ts, vec)
			b.Run("byte/"+name, func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					shuffleBytes(dst, src, ts)
				}
			})
			b.Run("unbyte/"+name, func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					unshuffle(dst, src, ts)
				}
			})
			b.Run("bit/"+name, func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					bitshuffle(dst, src, tmp, ts)
				}
			})
			b.Run("unbit/"+name, func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					bitunshuffle(dst, src, tmp, ts)
				}
			})
			useShuffleAVX2 = saved
		}
	}
}
