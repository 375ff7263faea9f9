package kernel

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRadixSortPairs checks the radix sort against the comparison sort:
// few distinct keys (ties ordered by index), keys differing only in
// their top or bottom digit, and short slices.
func TestRadixSortPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n   int
		key func() uint64
	}{
		{10000, r.Uint64},
		{10000, func() uint64 { return uint64(r.IntN(5)) }},
		{5000, func() uint64 { return uint64(r.IntN(4)) << 60 }},
		{300, func() uint64 { return 7 }},
		{100, r.Uint64},
		{1, r.Uint64},
	} {
		d := make([]keyIndex, tc.n)
		for i := range d {
			d[i] = keyIndex{tc.key(), int64(i)}
		}
		want := slices.Clone(d)
		slices.SortFunc(want, comparePair)
		radixSortPairs(d)
		if !slices.Equal(d, want) {
			t.Errorf("n %d: the radix sort differs from the comparison sort", tc.n)
		}
	}
}

// BenchmarkSortPairs sorts 10⁶ pairs of uniform float64 keys by radix and
// by comparison.
func BenchmarkSortPairs(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]keyIndex, 1_000_000)
	for i := range src {
		src[i] = keyIndex{uint64(r.Float64()*(1<<52)) | 0xbfe<<52, int64(i)}
	}
	d := make([]keyIndex, len(src))
	b.Run("radix", func(b *testing.B) {
		for range b.N {
			copy(d, src)
			radixSortPairs(d)
		}
	})
	b.Run("compare", func(b *testing.B) {
		for range b.N {
			copy(d, src)
			slices.SortFunc(d, comparePair)
		}
	})
}
