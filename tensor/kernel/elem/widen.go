package elem

// WidenFloat32 sets dst[i] to float64(src[i]) for every i of dst (src at
// least as long): exact, as every float32 is a float64. A fused program
// of a float32 array and float64 operands (x * w for a float32 x and
// float64 weights, which NumPy's promotion makes float64) widens every
// block of x so; done an element at a time through castTo's conversion
// function, it was 28% of CLIM-GMEAN's workers.
func WidenFloat32(dst []float64, src []float32) {
	n := len(dst)
	if n == 0 {
		return
	}
	src = src[:n]
	j := 0
	if useWideAVX2 {
		if j = n &^ 15; j > 0 {
			widenF32AVX2(&dst[0], &src[0], j)
		}
	}
	for ; j < n; j++ {
		dst[j] = float64(src[j])
	}
}
