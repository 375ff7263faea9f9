package gemm

import (
	"sync"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas/gonum"
)

// TestShared checks the product on threads sharing B against gonum.
func TestShared(t *testing.T) {
	if !haveKernels {
		t.Skip("no AVX2 and FMA")
	}
	seed := uint64(7000)
	for _, s := range [][3]int{{5, 7, 3}, {archF64.mc*3 + 5, 41, archF64.kc + 3}, {archF64.mc + 1, archF64.nc + 9, 17}} {
		for _, threads := range []int{2, 3} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					seed++
					tc := testCase{transA: tA, transB: tB, m: s[0], n: s[1], k: s[2], padA: 1, padC: 2, alpha: 1, beta: 0.5}
					a, lda, b, ldb, c, ldc := operands[float64](tc, seed)
					want := append([]float64(nil), c...)
					p := product[float64]{tA, tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, full}
					p.runShared(&archF64, threads)
					gonum.Implementation{}.Dgemm(trans(tA), trans(tB), tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, want, ldc)
					checkClose(t, tc, c, want, ldc, 1e-15)
				}
			}
		}
	}
}

// BenchmarkShared compares two ways of using two cores for W3's work, 128
// GFLOP: "apart", two goroutines each making eight 1000 x 1000 blocks of
// C, each the sum of four 1000³ products (W3's ops, one a core, as marsfs
// runs them); "shared", one 4000³ product on two goroutines sharing each
// packed block of B (as OpenBLAS' threads do, and NumPy's matmul); and
// "ops-shared", W3's sixteen ops one after another, each on both cores.
func BenchmarkShared(b *testing.B) {
	if !haveKernels {
		b.Skip("no AVX2 and FMA")
	}
	const n = 1000
	newMat := func(r, c int) []float64 {
		x := make([]float64, r*c)
		for i := range x {
			x[i] = float64(i%7) - 3
		}
		return x
	}
	flops := 2 * 4.0 * n * 4 * n * 4 * n
	b.Run("apart", func(b *testing.B) {
		cpu0 := processSeconds()
		var a, bb, c [2][]float64
		for g := range 2 {
			a[g], bb[g], c[g] = newMat(n, n), newMat(n, n), newMat(n, n)
		}
		for b.Loop() {
			var wg sync.WaitGroup
			for g := range 2 {
				wg.Go(func() {
					for range 8 {
						for l := range 4 {
							Dgemm(false, false, n, n, n, 1, a[g], n, bb[g], n, float64(min(l, 1)), c[g], n)
						}
					}
				})
			}
			wg.Wait()
		}
		reportGFLOPS(b, flops, 0)
		reportProcessCPU(b, flops, cpu0)
	})
	b.Run("shared", func(b *testing.B) {
		cpu0 := processSeconds()
		a, bb, c := newMat(4*n, 4*n), newMat(4*n, 4*n), newMat(4*n, 4*n)
		for b.Loop() {
			p := product[float64]{false, false, 4 * n, 4 * n, 4 * n, 1, a, 4 * n, bb, 4 * n, 0, c, 4 * n, full}
			p.runShared(&archF64, 2)
		}
		reportGFLOPS(b, flops, 0)
		reportProcessCPU(b, flops, cpu0)
	})
	b.Run("ops-shared", func(b *testing.B) {
		cpu0 := processSeconds()
		a, bb, c := newMat(n, n), newMat(n, n), newMat(n, n)
		for b.Loop() {
			for range 16 {
				for l := range 4 {
					p := product[float64]{false, false, n, n, n, 1, a, n, bb, n, float64(min(l, 1)), c, n, full}
					p.runShared(&archF64, 2)
				}
			}
		}
		reportGFLOPS(b, flops, 0)
		reportProcessCPU(b, flops, cpu0)
	})
}

// reportProcessCPU reports GFLOP a CPU-second of the process since cpu0:
// with several goroutines, how well the cores' time went to the product,
// whatever else the machine ran.
func reportProcessCPU(b *testing.B, flops, cpu0 float64) {
	if cpu := processSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(flops*float64(b.N)/cpu/1e9, "GFLOP/cpu-s")
	}
}

func processSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
