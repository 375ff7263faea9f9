package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkBlockSizes times 1000³ products with other cache blocks than
// blockSizes chooses, to tune it: kc, the depth, and mc, the rows of A
// packed at once. The blocks are the arch's, changed for the benchmark.
func BenchmarkBlockSizes(b *testing.B) {
	const n = 1000
	a, bb, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	saveKC, saveMC := archF64.kc, archF64.mc
	defer func() { archF64.kc, archF64.mc = saveKC, saveMC }()
	for _, kc := range []int{256, 320} {
		for _, mc := range []int{72, 96, 126, 144, 192, 252} {
			b.Run(fmt.Sprintf("kc%d-mc%d", kc, mc), func(b *testing.B) {
				archF64.kc, archF64.mc = kc, mc
				done := threadCPU(b, 2*n*n*n)
				for b.Loop() {
					Dgemm(false, false, n, n, n, 1, a, n, bb, n, 1, c, n)
				}
				done()
				reportGFLOPS(b, 2*n*n*n, peakGFLOPS())
			})
		}
	}
}
