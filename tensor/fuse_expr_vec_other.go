//go:build !amd64

package tensor

// Portable versions of the packed loops of fuse_expr_vec_amd64.s.

func addF64(d, a, b []float64) { addLoop(d, a, b) }

func subF64(d, a, b []float64) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] - b[i]
	}
}

func mulF64(d, a, b []float64) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] * b[i]
	}
}

func divF64(d, a, b []float64) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] / b[i]
	}
}

func sum8F64(x []float64, r *[8]float64) {
	copy(r[:], x[:8])
	for i := 8; i+8 <= len(x); i += 8 {
		for k := range r {
			r[k] += x[i+k]
		}
	}
}
