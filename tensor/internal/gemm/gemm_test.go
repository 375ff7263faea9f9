package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas/gonum"
)

// A testCase is one product: sizes, transposes, the padding of each
// leading dimension beyond the width, alpha and beta.
type testCase struct {
	transA, transB bool
	m, n, k        int
	padA, padB     int
	padC           int
	alpha, beta    float64
	nanC           bool // fill C with NaN (for beta 0)
}

func (tc testCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,%dx%dx%d,pad=%d/%d/%d,alpha=%g,beta=%g", tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.padA, tc.padB, tc.padC, tc.alpha, tc.beta)
}

// operands makes the buffers of a case, random, from seed.
func operands[T float32 | float64](tc testCase, seed uint64) (a []T, lda int, b []T, ldb int, c []T, ldc int) {
	r := rand.New(rand.NewPCG(seed, 7))
	fill := func(rows, cols, pad int) ([]T, int) {
		ld := cols + pad
		if ld == 0 {
			ld = 1
		}
		buf := make([]T, max(0, rows*ld))
		for i := range buf {
			buf[i] = T(r.Float64()*2 - 1)
		}
		return buf, ld
	}
	ra, ca := tc.m, tc.k
	if tc.transA {
		ra, ca = ca, ra
	}
	rb, cb := tc.k, tc.n
	if tc.transB {
		rb, cb = cb, rb
	}
	a, lda = fill(ra, ca, tc.padA)
	b, ldb = fill(rb, cb, tc.padB)
	c, ldc = fill(tc.m, tc.n, tc.padC)
	if tc.nanC {
		for i := range c {
			c[i] = T(math.NaN())
		}
	}
	return
}

// checkClose fails t unless got equals want within a tolerance that
// grows with k, and the padding of c (past n in each row) is untouched.
func checkClose[T float32 | float64](t *testing.T, tc testCase, got, want []T, ldc int, eps float64) {
	t.Helper()
	tol := eps * float64(tc.k+2) * 4 * max(1, math.Abs(tc.alpha)+math.Abs(tc.beta))
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > tol {
			t.Errorf("%v: c[%d, %d] = %v, want %v", tc, i/ldc, i%ldc, g, w)
			return // the first difference says enough
		}
	}
}

var alphaBetas = [][2]float64{{1, 0}, {1, 1}, {-0.5, 0}, {2, -1.5}, {0, 0.5}, {0, 0}, {1.25, 0.75}}

// The tests compare the products with gonum's; without the kernels
// (-tags purego) they check the pure-Go path's own handling (beta 0 and
// NaN, blocks) the same way.

// The tests of products run on each float64 kernel the CPU runs
// (forF64Archs), the AVX2 one included where AVX-512 is chosen.

// TestGemmSmall checks every transpose combination, every size from 1 to
// 17 along each axis (and 0), leading dimensions wider than the matrices,
// and alpha and beta of 0, 1 and others, against gonum, in both types.
func TestGemmSmall(t *testing.T) {
	forF64Archs(t, testGemmSmall)
}

func testGemmSmall(t *testing.T) {
	seed := uint64(0)
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for m := 0; m <= 17; m++ {
				for n := 0; n <= 17; n++ {
					for k := 0; k <= 17; k++ {
						seed++
						ab := alphaBetas[int(seed)%len(alphaBetas)]
						tc := testCase{transA: tA, transB: tB, m: m, n: n, k: k,
							padA: int(seed % 3), padB: int(seed / 3 % 3), padC: int(seed / 9 % 3),
							alpha: ab[0], beta: ab[1], nanC: ab[1] == 0 && seed%2 == 0}
						checkGemm[float64](t, tc, seed)
						checkGemm[float32](t, tc, seed)
					}
				}
			}
		}
	}
}

// TestGemmBlocks checks products larger than the cache blocks along each
// axis, so that every loop of the driver turns more than once and ends
// on an edge.
func TestGemmBlocks(t *testing.T) {
	forF64Archs(t, testGemmBlocks)
}

func testGemmBlocks(t *testing.T) {
	ar := archF64
	sizes := [][3]int{
		{ar.mc + 7, 33, 29},
		{31, ar.nc + 13, 17},
		{19, 23, ar.kc*2 + 3},
		{ar.mc*2 + 1, 70, ar.kc + 1},
		{archF32.mc + 5, archF32.nc/4 + 3, archF32.kc + 9},
	}
	seed := uint64(1000)
	for _, s := range sizes {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, ab := range [][2]float64{{1, 0}, {0.5, -1}} {
					seed++
					tc := testCase{transA: tA, transB: tB, m: s[0], n: s[1], k: s[2], padA: 3, padB: 1, padC: 2, alpha: ab[0], beta: ab[1], nanC: ab[1] == 0}
					checkGemm[float64](t, tc, seed)
					checkGemm[float32](t, tc, seed)
				}
			}
		}
	}
}

// checkGemm runs one case on the kernels and on gonum and compares them.
func checkGemm[T float32 | float64](t *testing.T, tc testCase, seed uint64) {
	t.Helper()
	a, lda, b, ldb, c, ldc := operands[T](tc, seed)
	want := append([]T(nil), c...)
	switch any(a).(type) {
	case []float64:
		Dgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, any(a).([]float64), lda, any(b).([]float64), ldb, tc.beta, any(c).([]float64), ldc)
		gonum.Implementation{}.Dgemm(trans(tc.transA), trans(tc.transB), tc.m, tc.n, tc.k, tc.alpha, any(a).([]float64), lda, any(b).([]float64), ldb, tc.beta, any(want).([]float64), ldc)
		checkClose(t, tc, c, want, ldc, 1e-15)
	case []float32:
		Sgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, float32(tc.alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(tc.beta), any(c).([]float32), ldc)
		gonum.Implementation{}.Sgemm(trans(tc.transA), trans(tc.transB), tc.m, tc.n, tc.k, float32(tc.alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(tc.beta), any(want).([]float32), ldc)
		checkClose(t, tc, c, want, ldc, 1e-6)
	}
}

// TestSyrk checks the symmetric rank-k updates, both triangles and both
// forms (a aᵀ and aᵀ a), against gonum: the triangle asked for is set,
// the other left as it was.
func TestSyrk(t *testing.T) {
	forF64Archs(t, testSyrk)
}

func testSyrk(t *testing.T) {
	seed := uint64(5000)
	ns := []int{0, 1, 2, 5, 6, 7, 8, 9, 13, 16, 17, 31, archF64.mc + 5, archF32.nc/8 + 3}
	for _, n := range ns {
		for _, k := range []int{0, 1, 3, 8, 17, archF64.kc + 5} {
			for _, upper := range []bool{false, true} {
				for _, tr := range []bool{false, true} {
					seed++
					ab := alphaBetas[int(seed)%len(alphaBetas)]
					tc := testCase{transA: tr, m: n, n: n, k: k, padA: int(seed % 3), padC: int(seed / 3 % 3), alpha: ab[0], beta: ab[1], nanC: ab[1] == 0 && seed%2 == 0}
					checkSyrk[float64](t, tc, upper, seed)
					checkSyrk[float32](t, tc, upper, seed)
				}
			}
		}
	}
}

func checkSyrk[T float32 | float64](t *testing.T, tc testCase, upper bool, seed uint64) {
	t.Helper()
	a, lda, _, _, c, ldc := operands[T](tc, seed)
	want := append([]T(nil), c...)
	if tc.nanC {
		// gonum's Dsyrk (v0.17) scales C by beta 0 where BLAS sets it to
		// zero, and so keeps NaNs: the reference gets zeros in the
		// triangle instead, and the other triangle must keep its NaNs.
		p := product[T]{m: tc.n, n: tc.n, tri: lowerTriangle}
		if upper {
			p.tri = upperTriangle
		}
		for i := range tc.n {
			for j := range tc.n {
				if p.inTriangle(i, j) {
					want[i*ldc+j] = 0
				}
			}
		}
	}
	switch any(a).(type) {
	case []float64:
		Dsyrk(upper, tc.transA, tc.n, tc.k, tc.alpha, any(a).([]float64), lda, tc.beta, any(c).([]float64), ldc)
		gonum.Implementation{}.Dsyrk(uplo(upper), trans(tc.transA), tc.n, tc.k, tc.alpha, any(a).([]float64), lda, tc.beta, any(want).([]float64), ldc)
		checkClose(t, tc, c, want, ldc, 1e-15)
	case []float32:
		Ssyrk(upper, tc.transA, tc.n, tc.k, float32(tc.alpha), any(a).([]float32), lda, float32(tc.beta), any(c).([]float32), ldc)
		gonum.Implementation{}.Ssyrk(uplo(upper), trans(tc.transA), tc.n, tc.k, float32(tc.alpha), any(a).([]float32), lda, float32(tc.beta), any(want).([]float32), ldc)
		checkClose(t, tc, c, want, ldc, 1e-6)
	}
}

// FuzzGemm compares the kernels with gonum on products the fuzzer
// chooses: sizes up to 40 along each axis, the transposes, paddings and
// alpha and beta from the input bytes.
func FuzzGemm(f *testing.F) {
	f.Add(uint8(6), uint8(8), uint8(4), uint8(0), uint8(0), 1.0, 0.0, uint64(1))
	f.Add(uint8(17), uint8(17), uint8(17), uint8(3), uint8(0x15), -2.5, 1.0, uint64(2))
	f.Add(uint8(1), uint8(33), uint8(40), uint8(2), uint8(0x2a), 0.0, 0.5, uint64(3))
	f.Add(uint8(13), uint8(1), uint8(0), uint8(1), uint8(0x3f), 1.0, 0.0, uint64(4))
	f.Fuzz(func(t *testing.T, m, n, k, flags, pads uint8, alpha, beta float64, seed uint64) {
		if math.IsNaN(alpha) || math.IsInf(alpha, 0) || math.IsNaN(beta) || math.IsInf(beta, 0) || math.Abs(alpha) > 1e6 || math.Abs(beta) > 1e6 {
			t.Skip()
		}
		tc := testCase{transA: flags&1 != 0, transB: flags&2 != 0,
			m: int(m % 41), n: int(n % 41), k: int(k % 41),
			padA: int(pads & 3), padB: int(pads >> 2 & 3), padC: int(pads >> 4 & 3),
			alpha: alpha, beta: beta, nanC: beta == 0 && flags&4 != 0}
		checkGemm[float64](t, tc, seed)
		checkGemm[float32](t, tc, seed)
		if tc.m == tc.n && tc.transA != tc.transB {
			checkSyrk[float64](t, tc, flags&8 != 0, seed)
			checkSyrk[float32](t, tc, flags&8 != 0, seed)
		}
	})
}

// TestSlowGemm checks the pure-Go path, gonum a block at a time, against
// one call of gonum, on products larger than its blocks along each axis.
func TestSlowGemm(t *testing.T) {
	seed := uint64(9000)
	for _, s := range [][3]int{{slowRows + 3, slowCols + 5, slowDepth + 7}, {7, 2*slowCols + 1, 3}, {2*slowRows + 1, 5, 2*slowDepth + 1}, {0, 3, 3}, {3, 3, 0}} {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				seed++
				tc := testCase{transA: tA, transB: tB, m: s[0], n: s[1], k: s[2], padA: 1, padB: 2, padC: 3, alpha: 1.5, beta: 0.5}
				a, lda, b, ldb, c, ldc := operands[float64](tc, seed)
				want := append([]float64(nil), c...)
				slowDgemm(tA, tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
				gonum.Implementation{}.Dgemm(trans(tA), trans(tB), tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, want, ldc)
				checkClose(t, tc, c, want, ldc, 1e-15)
				a32, lda, b32, ldb, c32, ldc := operands[float32](tc, seed)
				want32 := append([]float32(nil), c32...)
				slowSgemm(tA, tB, tc.m, tc.n, tc.k, float32(tc.alpha), a32, lda, b32, ldb, float32(tc.beta), c32, ldc)
				gonum.Implementation{}.Sgemm(trans(tA), trans(tB), tc.m, tc.n, tc.k, float32(tc.alpha), a32, lda, b32, ldb, float32(tc.beta), want32, ldc)
				checkClose(t, tc, c32, want32, ldc, 1e-6)
			}
		}
	}
}

// TestGemmConcurrent runs products on several goroutines at once, as a
// worker's slots do: each must get packing buffers of its own (run it
// with -race).
func TestGemmConcurrent(t *testing.T) {
	forF64Archs(t, testGemmConcurrent)
}

func testGemmConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 5 {
				tc := testCase{m: 40 + g, n: 70 + i, k: 300, alpha: 1, beta: 0.5, padA: 1}
				checkGemm[float64](t, tc, uint64(100*g+i))
				checkGemm[float32](t, tc, uint64(100*g+i))
			}
		})
	}
	wg.Wait()
}

// TestDgemmFilled checks the product of matrices given by functions
// against Dgemm's of the same matrices stored: the same values packed in
// the same order, so the same results bit for bit, on sizes with edges
// and sizes past every cache block, with alpha and beta of every kind.
func TestDgemmFilled(t *testing.T) {
	forF64Archs(t, testDgemmFilled)
}

func testDgemmFilled(t *testing.T) {
	ar := archF64
	sizes := [][3]int{{0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {1, 1, 1}, {5, 9, 7}, {ar.mr, ar.nr, 3}, {ar.mr + 1, 2*ar.nr + 3, fillRows + 1},
		{ar.mc + 7, 33, ar.kc + 5}, {31, ar.nc + 13, 17}, {2*ar.mc + 1, 70, 2*ar.kc + 3}}
	seed := uint64(7000)
	for _, s := range sizes {
		for _, ab := range alphaBetas {
			seed++
			tc := testCase{m: s[0], n: s[1], k: s[2], padC: 2, alpha: ab[0], beta: ab[1], nanC: ab[1] == 0}
			a, lda, b, ldb, c, ldc := operands[float64](tc, seed)
			want := append([]float64(nil), c...)
			Dgemm(false, false, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, want, ldc)
			calls := 0
			fill := func(x []float64, ld, rows, cols int) func([]float64, int, int) {
				return func(dst []float64, i, j int) {
					calls++
					if i < 0 || i >= rows || j < 0 || j+len(dst) > cols {
						t.Fatalf("%v: fill of row %d, columns [%d, %d) of %d x %d", tc, i, j, j+len(dst), rows, cols)
					}
					copy(dst, x[i*ld+j:i*ld+j+len(dst)])
				}
			}
			DgemmFilled(tc.m, tc.n, tc.k, tc.alpha, fill(a, lda, tc.m, tc.k), fill(b, ldb, tc.k, tc.n), tc.beta, c, ldc)
			for i := range c {
				if c[i] != want[i] && !(math.IsNaN(c[i]) && math.IsNaN(want[i])) {
					t.Fatalf("%v: c[%d, %d] = %v, want %v (Dgemm's)", tc, i/ldc, i%ldc, c[i], want[i])
				}
			}
			if tc.m > 0 && tc.n > 0 && tc.k > 0 && tc.alpha != 0 && calls == 0 {
				t.Fatalf("%v: the fills were never called", tc)
			}
		}
	}
}
