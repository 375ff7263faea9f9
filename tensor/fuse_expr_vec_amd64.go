package tensor

// The packed loops of fuse_expr_vec_amd64.s.

//go:noescape
func addF64(d, a, b []float64)

//go:noescape
func subF64(d, a, b []float64)

//go:noescape
func mulF64(d, a, b []float64)

//go:noescape
func divF64(d, a, b []float64)

//go:noescape
func sum8F64(x []float64, r *[8]float64)
