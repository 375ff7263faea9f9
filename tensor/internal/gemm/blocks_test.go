package gemm

import (
	"fmt"
	"testing"
)

// TestBlockSizes checks the blocks chosen for known caches, and that any
// caches give blocks the kernels can use: multiples of their shape.
func TestBlockSizes(t *testing.T) {
	l1, l2, l3 := cacheSizes()
	t.Logf("this CPU: caches %d, %d, %d bytes; float64 blocks mc %d kc %d nc %d; float32 mc %d kc %d nc %d",
		l1, l2, l3, archF64.mc, archF64.kc, archF64.nc, archF32.mc, archF32.kc, archF32.nc)
	mc, kc, nc := blockSizes(32<<10, 1<<20, 32<<20, 6, 8, 8)
	if mc != 126 || kc != 256 || nc != 2048 {
		t.Errorf("Zen 4, float64: mc, kc, nc = %d, %d, %d, want 126, 256, 2048", mc, kc, nc)
	}
	for _, c := range [][3]int{{0, 0, 0}, {16 << 10, 256 << 10, 0}, {48 << 10, 2 << 20, 256 << 20}, {1 << 30, 1 << 30, 1 << 30}} {
		for _, k := range [][3]int{{6, 8, 8}, {6, 16, 4}} {
			mc, kc, nc := blockSizes(c[0], c[1], c[2], k[0], k[1], k[2])
			if mc <= 0 || mc%k[0] != 0 || kc <= 0 || nc <= 0 || nc%k[1] != 0 {
				t.Errorf("caches %v, kernel %v: mc, kc, nc = %d, %d, %d", c, k, mc, kc, nc)
			}
		}
	}
}

// BenchmarkBlockSizes times 1000³ products with other cache blocks than
// blockSizes chooses, to tune it: kc, the depth, and mc, the rows of A
// packed at once. The blocks are the arch's, changed for the benchmark.
func BenchmarkBlockSizes(b *testing.B) {
	const n = 1000
	a, bb, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	saveKC, saveMC, saveMR := archF64.kc, archF64.mc, archF64.mr
	defer func() { archF64.kc, archF64.mc = saveKC, saveMC }()
	for _, kc := range []int{192, 256, 320, 384} {
		for _, panels := range []int{4, 6, 8, 12, 16, 21} {
			mc := panels * saveMR
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
