package expr

import (
	"marsfs/tensor"
)

// useCmpAVX selects the packed comparisons of fuse_expr_cmp_amd64.s,
// which need AVX and BMI2's PDEP.
var useCmpAVX = useAVX && cpuidBMI2()

// cpuidBMI2 reports CPUID.(EAX=7, ECX=0):EBX bit 8.
func cpuidBMI2() bool {
	_, b, _, _ := cpuid(7, 0)
	return b&(1<<8) != 0
}

//go:noescape
func lessAVX(d []uint8, a, b []float64)

//go:noescape
func lessEqAVX(d []uint8, a, b []float64)

//go:noescape
func equalAVX(d []uint8, a, b []float64)

//go:noescape
func notEqualAVX(d []uint8, a, b []float64)

// cmpWide returns the packed loop for comparison kind, with its operands
// swapped for greater and greater_equal (a > b is b < a, NaNs included),
// or nil.
func cmpWide(kind string) (loop func(d []uint8, a, b []float64), swap bool) {
	if !useCmpAVX {
		return nil, false
	}
	switch kind {
	case tensor.OpLess:
		return lessAVX, false
	case tensor.OpLessEq:
		return lessEqAVX, false
	case tensor.OpGreater:
		return lessAVX, true
	case tensor.OpGreaterEq:
		return lessEqAVX, true
	case tensor.OpEqual:
		return equalAVX, false
	case tensor.OpNotEqual:
		return notEqualAVX, false
	}
	return nil, false
}
