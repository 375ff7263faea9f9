package expr

import (
	"marsfs/tensor/kernel/elem"
)

// UseAVX2 selects the four-wide uniform fill of fuse_expr_rand_amd64.s.
var UseAVX2 = useAVX && cpuidAVX2()

func cpuidAVX2() bool

//go:noescape
func uniformAVX2(d []float64, lanes *[4]uint64, step uint64)

// uniformWide fills as many leading elements of d as it can, four at a
// time, with uniformFill's values, and returns how many.
func uniformWide(d []float64, s elem.RandStream, c uint64) int {
	n := len(d) &^ 3
	if !UseAVX2 || n == 0 {
		return 0
	}
	g := uint64(elem.Golden)
	z := c*elem.Golden + s.K
	lanes := [4]uint64{z, z + g, z + 2*g, z + 3*g}
	uniformAVX2(d[:n], &lanes, 4*g)
	return n
}
