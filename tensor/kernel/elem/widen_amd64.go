package elem

// widenF32AVX2 does WidenFloat32's first n elements (a multiple of 16).
//
//go:noescape
func widenF32AVX2(dst *float64, src *float32, n int)
