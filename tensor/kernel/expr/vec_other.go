//go:build !amd64

package expr

import "marsfs/tensor/kernel/elem"

// Portable versions of the packed loops of fuse_expr_vec_amd64.s.

var (
	addF64 = addGo
	subF64 = subGo
	mulF64 = mulGo
	divF64 = divGo
)

func sum8F64(x []float64, r *[8]float64) { sum8Go(x, r) }

// vecVariants are the loop sets this CPU can run, for tests.
func vecVariants() []vecSet {
	return []vecSet{{"go", addGo, subGo, mulGo, divGo, sum8Go}}
}

func addGo(d, a, b []float64) { elem.AddLoop(d, a, b) }

func subGo(d, a, b []float64) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] - b[i]
	}
}

func mulGo(d, a, b []float64) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] * b[i]
	}
}

func divGo(d, a, b []float64) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] / b[i]
	}
}

func sum8Go(x []float64, r *[8]float64) {
	copy(r[:], x[:8])
	for i := 8; i+8 <= len(x); i += 8 {
		for k := range r {
			r[k] += x[i+k]
		}
	}
}

// uniformWide has no wide form here: it fills nothing.
func uniformWide(d []float64, s elem.RandStream, c uint64) int { return 0 }

// UseAVX2 and UseAVX512 are never set here.
var UseAVX2, UseAVX512 = false, false

// cmpWide has no packed loops here.
func cmpWide(kind string) (loop func(d []uint8, a, b []float64), swap bool) { return nil, false }

// useCmpAVX is never set here.
var useCmpAVX = false
