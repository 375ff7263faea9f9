package expr

import (
	"testing"

	"marsfs/tensor/kernel/elem"
)

func TestUniformFill(t *testing.T) {
	wide := UseAVX2
	defer func() { UseAVX2 = wide }()
	for _, UseAVX2 = range []bool{false, wide} {
		testUniformFill(t)
	}
}

func testUniformFill(t *testing.T) {
	s := elem.NewRandStream(77, 0)
	for _, c := range []uint64{0, 1, 1 << 40, 1<<53 + 3, 0x9E3779B97F4A7C15, ^uint64(0) - 5} {
		for _, n := range []int{0, 1, 3, 4, 5, 9, 4096, 4099, 1 << 16} {
			d := make([]float64, n)
			UniformFill(d, s, c)
			for j, v := range d {
				if w := s.Uniform(c + uint64(j)); v != w {
					t.Fatalf("wide %v, counter %d+%d: %v, want %v", UseAVX2, c, j, v, w)
				}
			}
		}
	}
}
