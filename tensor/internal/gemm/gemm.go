package gemm

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Fast says whether the products run the assembly micro-kernels (true on
// amd64 with AVX2 and FMA) rather than gonum's pure-Go BLAS.
func Fast() bool { return haveKernels }

// Dgemm sets the row-major m x n matrix c to alpha op(a) op(b) + beta c,
// where op(a) is m x k (a, or aᵀ when transA) and op(b) k x n, all given by
// their buffers and leading dimensions as BLAS takes them. beta == 0 sets
// c without reading it. It panics on sizes its buffers do not hold.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !haveKernels {
		slowDgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	p := product[float64]{transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, full, nil, nil}
	p.run(archF64)
}

// DgemmFilled is Dgemm with neither matrix transposed, and A (m x k) and B
// (k x n) given by functions that make their values on demand: fillA(dst,
// i, j) sets dst[c] to A(i, j+c) for every c < len(dst), and fillB likewise
// for B. The product asks for each row segment of B once, and for each of
// A once for each block of nc columns of C (once when n <= nc), a few rows
// at a time just before it packs them: a matrix whose values are computed
// (random draws) is then never stored whole, and its values are packed
// from cache rather than read back from memory.
func DgemmFilled(m, n, k int, alpha float64, fillA, fillB func(dst []float64, i, j int), beta float64, c []float64, ldc int) {
	if !haveKernels {
		// Stored whole, with room for gonum's checks of empty ones.
		lda, ldb := max(1, k), max(1, n)
		a, b := make([]float64, max(1, m)*lda), make([]float64, max(1, k)*ldb)
		for i := range m {
			fillA(a[i*lda:i*lda+k], i, 0)
		}
		for i := range k {
			fillB(b[i*ldb:i*ldb+n], i, 0)
		}
		slowDgemm(false, false, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	p := product[float64]{false, false, m, n, k, alpha, nil, max(1, k), nil, max(1, n), beta, c, ldc, full, fillA, fillB}
	p.run(archF64)
}

// Sgemm is Dgemm for float32.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !haveKernels {
		slowSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	p := product[float32]{transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, full, nil, nil}
	p.run(archF32)
}

// Dsyrk sets a triangle of the row-major n x n matrix c, the upper one
// (with the diagonal) when upper, else the lower one, to that of
// alpha a aᵀ + beta c for a of n x k, or of alpha aᵀ a + beta c for a of
// k x n when trans; the other triangle is left alone. It computes only the
// blocks of C that reach into the triangle: about half the flops of the
// product.
func Dsyrk(upper, trans bool, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if !haveKernels {
		slowSyrk(gonum.Implementation{}.Dsyrk, upper, trans, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	p := product[float64]{trans, !trans, n, n, k, alpha, a, lda, a, lda, beta, c, ldc, lowerTriangle, nil, nil}
	if upper {
		p.tri = upperTriangle
	}
	p.run(archF64)
}

// Ssyrk is Dsyrk for float32.
func Ssyrk(upper, trans bool, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	if !haveKernels {
		slowSyrk(gonum.Implementation{}.Ssyrk, upper, trans, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	p := product[float32]{trans, !trans, n, n, k, alpha, a, lda, a, lda, beta, c, ldc, lowerTriangle, nil, nil}
	if upper {
		p.tri = upperTriangle
	}
	p.run(archF32)
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func uplo(upper bool) blas.Uplo {
	if upper {
		return blas.Upper
	}
	return blas.Lower
}

// A triangle is the part of C a product computes: all of it, or for a
// symmetric update one triangle with the diagonal.
type triangle int

const (
	full triangle = iota
	upperTriangle
	lowerTriangle
)

// An arch is what a type's products run on: its micro-kernel, the
// kernel's block of C (mr x nr), and the cache blocks.
type arch[T float32 | float64] struct {
	kernel     func(k int, a, b, c *T, ldc int, alpha, beta T)
	mr, nr     int
	mc, kc, nc int

	mu   sync.Mutex
	free []*buffers[T] // packing buffers to reuse, at most maxFree
}

// maxFree is how many sets of packing buffers an arch keeps for reuse:
// one for each of the products that run at once (one a core, and a few
// more).
const maxFree = 4

// buffers are the packed blocks of A and B of one product, and the block
// of C at an edge.
type buffers[T float32 | float64] struct {
	a, b, c []T
	ta, tb  []T // rows made by a product's fillA and fillB, to pack
}

func (ar *arch[T]) get(na, nb int) *buffers[T] {
	ar.mu.Lock()
	var bufs *buffers[T]
	if n := len(ar.free); n > 0 {
		bufs, ar.free = ar.free[n-1], ar.free[:n-1]
	}
	ar.mu.Unlock()
	if bufs == nil {
		bufs = &buffers[T]{c: make([]T, ar.mr*ar.nr)}
	}
	if cap(bufs.a) < na {
		bufs.a = make([]T, na)
	}
	if cap(bufs.b) < nb {
		bufs.b = make([]T, nb)
	}
	bufs.a, bufs.b = bufs.a[:na], bufs.b[:nb]
	return bufs
}

func (ar *arch[T]) put(bufs *buffers[T]) {
	ar.mu.Lock()
	if len(ar.free) < maxFree {
		ar.free = append(ar.free, bufs)
	}
	ar.mu.Unlock()
}

// A product is the arguments of one call.
type product[T float32 | float64] struct {
	transA, transB bool
	m, n, k        int
	alpha          T
	a              []T
	lda            int
	b              []T
	ldb            int
	beta           T
	c              []T
	ldc            int
	tri            triangle
	// fillA and fillB, when set, make A's and B's values instead of a and
	// b (see DgemmFilled).
	fillA, fillB func(dst []T, i, j int)
}

// check panics, as gonum's BLAS does, on arguments whose buffers are too
// short or whose leading dimensions are too small: the kernels read and
// write through pointers, so no slice bound would catch them.
func (p *product[T]) check() {
	if p.m < 0 || p.n < 0 || p.k < 0 {
		panic(fmt.Sprintf("gemm: negative size %d x %d x %d", p.m, p.n, p.k))
	}
	need := func(name string, buf []T, rows, cols, ld int) {
		if ld < max(1, cols) {
			panic(fmt.Sprintf("gemm: leading dimension %d of %s < %d", ld, name, cols))
		}
		if rows > 0 && cols > 0 && len(buf) < (rows-1)*ld+cols {
			panic(fmt.Sprintf("gemm: %s holds %d elements, want %d", name, len(buf), (rows-1)*ld+cols))
		}
	}
	ra, ca := p.m, p.k
	if p.transA {
		ra, ca = ca, ra
	}
	rb, cb := p.k, p.n
	if p.transB {
		rb, cb = cb, rb
	}
	if p.fillA == nil {
		need("a", p.a, ra, ca, p.lda)
	}
	if p.fillB == nil {
		need("b", p.b, rb, cb, p.ldb)
	}
	need("c", p.c, p.m, p.n, p.ldc)
}

// inTriangle says whether element (i, j) of C is the product's to set.
func (p *product[T]) inTriangle(i, j int) bool {
	switch p.tri {
	case upperTriangle:
		return i <= j
	case lowerTriangle:
		return i >= j
	}
	return true
}

// scale sets c to beta c (0 when beta is 0, whatever c held) where the
// product has nothing to add: k or alpha is 0.
func (p *product[T]) scale() {
	for i := range p.m {
		row := p.c[i*p.ldc : i*p.ldc+p.n]
		for j := range row {
			if !p.inTriangle(i, j) {
				continue
			}
			if p.beta == 0 {
				row[j] = 0
			} else {
				row[j] *= p.beta
			}
		}
	}
}

func (p *product[T]) run(ar *arch[T]) {
	p.check()
	if p.m == 0 || p.n == 0 {
		return
	}
	if p.k == 0 || p.alpha == 0 {
		p.scale()
		return
	}
	mr, nr := ar.mr, ar.nr
	kc := min(ar.kc, p.k)
	mc := min(ar.mc, roundUp(p.m, mr))
	nc := min(ar.nc, roundUp(p.n, nr))
	bufs := ar.get(mc*kc, kc*nc)
	defer ar.put(bufs)
	for jc := 0; jc < p.n; jc += nc {
		nb := min(nc, p.n-jc)
		for pc := 0; pc < p.k; pc += kc {
			kb := min(kc, p.k-pc)
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			if p.fillB != nil {
				packBFilled(bufs.b, &bufs.tb, p.fillB, pc, jc, kb, nb, nr)
			} else {
				packB(bufs.b, p.b, p.ldb, p.transB, pc, jc, kb, nb, nr)
			}
			for ic := 0; ic < p.m; ic += mc {
				mb := min(mc, p.m-ic)
				if p.tri == upperTriangle && ic >= jc+nb {
					break // this block of rows and all below lie under the diagonal
				}
				if p.tri == lowerTriangle && ic+mb <= jc {
					continue // above the diagonal
				}
				if p.fillA != nil {
					packAFilled(bufs.a, &bufs.ta, p.fillA, ic, pc, mb, kb, mr)
				} else {
					packA(bufs.a, p.a, p.lda, p.transA, ic, pc, mb, kb, mr)
				}
				p.macro(ar, bufs, ic, jc, mb, nb, kb, beta)
			}
		}
	}
}

// macro multiplies the packed blocks, mb x kb of A and kb x nb of B, into
// the block of C at (ic, jc): one micro-kernel call for each mr x nr block
// of C. The B micro-panel is the outer loop, so that it stays in L1 while
// the micro-panels of A pass by from L2.
func (p *product[T]) macro(ar *arch[T], bufs *buffers[T], ic, jc, mb, nb, kb int, beta T) {
	mr, nr := ar.mr, ar.nr
	for jr := 0; jr < nb; jr += nr {
		w := min(nr, nb-jr)
		j0 := jc + jr
		bp := &bufs.b[jr*kb]
		for ir := 0; ir < mb; ir += mr {
			h := min(mr, mb-ir)
			i0 := ic + ir
			if p.tri == upperTriangle && i0 > j0+w-1 {
				break // this block and every one below it lie under the diagonal
			}
			if p.tri == lowerTriangle && i0+h-1 < j0 {
				continue // above the diagonal
			}
			ap := &bufs.a[ir*kb]
			whole := h == mr && w == nr &&
				(p.tri == full || p.tri == upperTriangle && i0+h-1 <= j0 || p.tri == lowerTriangle && i0 >= j0+w-1)
			if whole {
				ar.kernel(kb, ap, bp, &p.c[i0*p.ldc+j0], p.ldc, p.alpha, beta)
				continue
			}
			// An edge, or a block the diagonal crosses: computed aside,
			// then the part of it that is C's added.
			ar.kernel(kb, ap, bp, &bufs.c[0], nr, p.alpha, 0)
			for i := range h {
				row := p.c[(i0+i)*p.ldc+j0:][:w]
				edge := bufs.c[i*nr:][:w]
				for j, v := range edge {
					if !p.inTriangle(i0+i, j0+j) {
						continue
					}
					if beta == 0 {
						row[j] = v
					} else {
						row[j] = v + beta*row[j]
					}
				}
			}
		}
	}
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }
