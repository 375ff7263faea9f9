package expr

import (
	"testing"

	"marsfs/tensor/kernel/elem"
)

func TestSumBytes(t *testing.T) {
	s := elem.NewRandStream(9, 0)
	for _, n := range []int{0, 1, 7, 8, 9, 1023, 1024, 1025, 5000} {
		for _, full := range []bool{false, true} {
			b := make([]byte, n)
			want := 0
			for i := range b {
				b[i] = byte(s.Bits(uint64(i)))
				if full {
					b[i] = 255
				}
				want += int(b[i])
			}
			if got := sumBytes(b); got != want {
				t.Errorf("n=%d full=%v: %d, want %d", n, full, got, want)
			}
		}
	}
}
