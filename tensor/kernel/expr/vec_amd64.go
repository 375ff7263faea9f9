package expr

// The packed loops of fuse_expr_vec_amd64.s, the wider ones chosen once
// when the CPU and the OS support AVX.

var (
	addF64 = pick(addAVX, addSSE)
	subF64 = pick(subAVX, subSSE)
	mulF64 = pick(mulAVX, mulSSE)
	divF64 = pick(divAVX, divSSE)
	useAVX = hasAVX()
)

// sum8F64 calls the assembly directly, not through a variable, so that
// r, declared noescape, can stay on the caller's stack.
func sum8F64(x []float64, r *[8]float64) {
	if useAVX {
		sum8AVX(x, r)
	} else {
		sum8SSE(x, r)
	}
}

// vecVariants are the loop sets this CPU can run, for tests.
func vecVariants() []vecSet {
	v := []vecSet{{"sse2", addSSE, subSSE, mulSSE, divSSE, sum8SSE}}
	if hasAVX() {
		v = append(v, vecSet{"avx", addAVX, subAVX, mulAVX, divAVX, sum8AVX})
	}
	return v
}

func pick[F any](avx, sse F) F {
	if hasAVX() {
		return avx
	}
	return sse
}

// hasAVX reports whether the CPU has AVX and the OS saves the YMM
// registers (CPUID.1:ECX.OSXSAVE and .AVX, XCR0 bits 1 and 2).
func hasAVX() bool {
	_, _, c, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if c&osxsave == 0 || c&avx == 0 {
		return false
	}
	return xgetbv0()&6 == 6
}

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv0() (lo uint32)

//go:noescape
func addSSE(d, a, b []float64)

//go:noescape
func subSSE(d, a, b []float64)

//go:noescape
func mulSSE(d, a, b []float64)

//go:noescape
func divSSE(d, a, b []float64)

//go:noescape
func addAVX(d, a, b []float64)

//go:noescape
func subAVX(d, a, b []float64)

//go:noescape
func mulAVX(d, a, b []float64)

//go:noescape
func divAVX(d, a, b []float64)

//go:noescape
func sum8SSE(x []float64, r *[8]float64)

//go:noescape
func sum8AVX(x []float64, r *[8]float64)
