package expr

import (
	"math/rand/v2"
	"testing"

	"marsfs/tensor/kernel/elem"
)

// A fillPath is one setting of the fill's selectors.
type fillPath struct {
	name         string
	avx2, avx512 bool
}

// uniformPaths are the fills this CPU can run: scalar, AVX2, AVX-512.
func uniformPaths() []fillPath {
	paths := []fillPath{{"scalar", false, false}}
	if UseAVX2 {
		paths = append(paths, fillPath{"avx2", true, false})
	}
	if UseAVX512 {
		paths = append(paths, fillPath{"avx512", UseAVX2, true})
	}
	return paths
}

// forPaths runs f with each fill of uniformPaths selected in turn.
func forPaths(t *testing.T, f func(t *testing.T)) {
	avx2, avx512 := UseAVX2, UseAVX512
	defer func() { UseAVX2, UseAVX512 = avx2, avx512 }()
	for _, p := range uniformPaths() {
		UseAVX2, UseAVX512 = p.avx2, p.avx512
		t.Run(p.name, f)
	}
}

func TestUniformFill(t *testing.T) {
	forPaths(t, func(t *testing.T) {
		s := elem.NewRandStream(77, 0)
		for _, c := range []uint64{0, 1, 1 << 40, 1<<53 + 3, 0x9E3779B97F4A7C15, ^uint64(0) - 5} {
			for _, n := range []int{0, 1, 3, 4, 5, 9, 4096, 4099, 1 << 16} {
				checkFill(t, s, c, 0, n)
			}
		}
	})
}

// TestUniformFillExhaustive checks every length from 0 to 70 at every
// offset into the buffer from 0 to 8 (so that the wide stores fall on
// every alignment), for random keys and counters, the wraparound of the
// counter's product included.
func TestUniformFillExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	forPaths(t, func(t *testing.T) {
		for range 20 {
			s := elem.RandStream{K: r.Uint64()}
			c := r.Uint64()
			if r.IntN(4) == 0 {
				c = ^uint64(0) - uint64(r.IntN(80)) // the counter wraps within the fill
			}
			for off := range 9 {
				for n := range 71 {
					checkFill(t, s, c, off, n)
				}
			}
		}
	})
}

// checkFill fills n values from counter c at offset off into a buffer,
// and checks them against s.Uniform and the guard values around them
// against being written.
func checkFill(t *testing.T, s elem.RandStream, c uint64, off, n int) {
	t.Helper()
	const guard = -1.5
	buf := make([]float64, off+n+9)
	for i := range buf {
		buf[i] = guard
	}
	UniformFill(buf[off:off+n], s, c)
	for i, v := range buf {
		j := i - off
		if j < 0 || j >= n {
			if v != guard {
				t.Fatalf("key %#x counter %d offset %d length %d: wrote %v at %d, outside the fill", s.K, c, off, n, v, j)
			}
			continue
		}
		if w := s.Uniform(c + uint64(j)); v != w {
			t.Fatalf("key %#x counter %d+%d offset %d length %d: %v, want %v", s.K, c, j, off, n, v, w)
		}
	}
}
