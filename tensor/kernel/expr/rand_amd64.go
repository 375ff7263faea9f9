package expr

import (
	"golang.org/x/sys/cpu"

	"marsfs/tensor/kernel/elem"
)

// UseAVX2 selects the four-wide uniform fill of rand_amd64.s.
var UseAVX2 = useAVX && cpuidAVX2()

// UseAVX512 selects the eight-wide fill, which needs AVX-512F and DQ (for
// the 64-bit multiply and the int64 conversion) and the OS saving the ZMM
// registers, which cpu.X86 checks. It is chosen before UseAVX2.
var UseAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

func cpuidAVX2() bool

//go:noescape
func uniformAVX2(d []float64, lanes *[4]uint64, step uint64)

//go:noescape
func uniformAVX512(d []float64, lanes *[8]uint64, step uint64)

// uniformWide fills as many leading elements of d as it can, eight or four
// at a time, with UniformFill's values, and returns how many.
func uniformWide(d []float64, s elem.RandStream, c uint64) int {
	g := uint64(elem.Golden)
	z := c*elem.Golden + s.K
	if UseAVX512 {
		n := len(d) &^ 7
		if n == 0 {
			return 0
		}
		var lanes [8]uint64
		for i := range lanes {
			lanes[i] = z + uint64(i)*g
		}
		uniformAVX512(d[:n], &lanes, 8*g)
		return n
	}
	n := len(d) &^ 3
	if !UseAVX2 || n == 0 {
		return 0
	}
	lanes := [4]uint64{z, z + g, z + 2*g, z + 3*g}
	uniformAVX2(d[:n], &lanes, 4*g)
	return n
}
