package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// refPackA is packA by its definition: panel r of mr rows holds, for each
// column p, op(A)(i0+r*mr+i, p0+p) for i < mr, zero past row mb.
func refPackA[T float32 | float64](a []T, lda int, trans bool, i0, p0, mb, kb, mr int) []T {
	panels := (mb + mr - 1) / mr
	dst := make([]T, panels*mr*kb)
	for r := range panels {
		for p := range kb {
			for i := range mr {
				if row := r*mr + i; row < mb {
					at := (i0+row)*lda + p0 + p
					if trans {
						at = (p0+p)*lda + i0 + row
					}
					dst[r*mr*kb+p*mr+i] = a[at]
				}
			}
		}
	}
	return dst
}

// refPackB is packB by its definition.
func refPackB[T float32 | float64](b []T, ldb int, trans bool, p0, j0, kb, nb, nr int) []T {
	panels := (nb + nr - 1) / nr
	dst := make([]T, panels*nr*kb)
	for r := range panels {
		for p := range kb {
			for j := range nr {
				if col := r*nr + j; col < nb {
					at := (p0+p)*ldb + j0 + col
					if trans {
						at = (j0+col)*ldb + p0 + p
					}
					dst[r*nr*kb+p*nr+j] = b[at]
				}
			}
		}
	}
	return dst
}

// TestPack checks packA and packB, the assembly loops where the CPU runs
// them, against their definitions: every orientation, blocks at offsets
// into matrices with leading dimensions longer than their rows, sizes that
// leave edges of every width, and depths that leave every remainder of the
// unrolled loops. The destination starts out as garbage, which packing
// must overwrite, padding included.
func TestPack(t *testing.T) {
	for _, a := range f64Archs() {
		testPack[float64](t, a.ar.mr, a.ar.nr)
	}
	testPack[float64](t, 4, 8)
	testPack[float64](t, 12, 8)
	testPack[float32](t, archF32.mr, archF32.nr)
	testPack[float32](t, 8, 16)
}

func testPack[T float32 | float64](t *testing.T, mr, nr int) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, trans := range []bool{false, true} {
		for _, m := range []int{1, 5, 6, 7, 12, 13, 2*nr - 1, 2 * nr, 3*nr + 5, mr - 1, mr, mr + 1, 2*mr + 3} {
			for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 31, 64} {
				i0, p0 := r.IntN(4), r.IntN(4)
				ld := max(i0+m, p0+k) + r.IntN(5)
				src := make([]T, (max(i0+m, p0+k)+1)*ld)
				for i := range src {
					src[i] = T(r.IntN(1000) + 1)
				}
				name := fmt.Sprintf("%T mr %d nr %d trans %v m %d k %d at (%d, %d) ld %d", src[0], mr, nr, trans, m, k, i0, p0, ld)

				want := refPackA(src, ld, trans, i0, p0, m, k, mr)
				got := make([]T, len(want))
				for i := range got {
					got[i] = -7
				}
				packA(got, src, ld, trans, i0, p0, m, k, mr)
				checkPacked(t, "packA "+name, got, want)

				want = refPackB(src, ld, trans, p0, i0, k, m, nr)
				got = make([]T, len(want))
				for i := range got {
					got[i] = -7
				}
				packB(got, src, ld, trans, p0, i0, k, m, nr)
				checkPacked(t, "packB "+name, got, want)
			}
		}
	}
}

func checkPacked[T float32 | float64](t *testing.T, name string, got, want []T) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d is %v, want %v", name, i, got[i], want[i])
		}
	}
}

// BenchmarkPack times packing one cache block of A and of B, 126 x 256
// and 256 x 1000 float64, from matrices with rows of 1000, in each
// orientation.
func BenchmarkPack(b *testing.B) {
	const ld = 1000
	src := make([]float64, 1000*ld)
	ar := archF64
	dstA := make([]float64, ar.mc*ar.kc)
	dstB := make([]float64, ar.kc*1000)
	for _, trans := range []bool{false, true} {
		b.Run("A/trans="+map[bool]string{false: "no", true: "yes"}[trans], func(b *testing.B) {
			for b.Loop() {
				packA(dstA, src, ld, trans, 0, 0, ar.mc, ar.kc, ar.mr)
			}
			b.SetBytes(int64(8 * ar.mc * ar.kc))
		})
		b.Run("B/trans="+map[bool]string{false: "no", true: "yes"}[trans], func(b *testing.B) {
			for b.Loop() {
				packB(dstB, src, ld, trans, 0, 0, ar.kc, 1000, ar.nr)
			}
			b.SetBytes(int64(8 * ar.kc * 1000))
		})
	}
}
