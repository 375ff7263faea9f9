package gemm

import (
	"fmt"
	"testing"
)

func BenchmarkSweep(b *testing.B) {
	n := 1000
	a, bb, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	save := archF64
	for _, kc := range []int{256, 320} {
		for _, mc := range []int{96, 126, 144, 192, 252} {
			b.Run(fmt.Sprintf("kc%d-mc%d", kc, mc), func(b *testing.B) {
				archF64.kc, archF64.mc = kc, mc
				for b.Loop() {
					Dgemm(false, false, n, n, 4*n/4, 1, a, n, bb, n, 1, c, n)
				}
				reportGFLOPS(b, 2*float64(n)*float64(n)*float64(n), peakGFLOPS())
			})
		}
	}
	archF64.kc, archF64.mc = save.kc, save.mc
}
