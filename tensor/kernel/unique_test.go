package kernel

import (
	"math"
	"slices"
	"testing"
)

func TestRadixSort(t *testing.T) {
	for _, n := range []int{0, 1, 255, 256, 1000, 5000} {
		for _, spread := range []uint64{1, 300, 1 << 20, math.MaxUint64} {
			keys := make([]uint64, n)
			x := uint64(n) + spread
			for i := range keys {
				x = x*6364136223846793005 + 1442695040888963407
				keys[i] = 1<<63 | (x>>11)%max(spread, 1)
				if spread == math.MaxUint64 {
					keys[i] = x
				}
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			if got := radixSort(keys); !slices.Equal(got, want) {
				t.Errorf("n %d spread %d: not sorted", n, spread)
			}
		}
	}
}
