package gemm

import "testing"

// BenchmarkPack times packing one cache block of A and of B, 126 x 256
// and 256 x 1000 float64, from matrices with rows of 1000, in each
// orientation.
func BenchmarkPack(b *testing.B) {
	const ld = 1000
	src := make([]float64, 1000*ld)
	ar := &archF64
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
