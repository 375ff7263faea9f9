package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkStrips: C (n x n block of x.T @ x) += x_s[:, I].T x_s[:, J]
// over strips x_s of k rows and w columns, as a Gram matrix of an array in
// row strips makes its blocks.
func BenchmarkStrips(b *testing.B) {
	for _, c := range []struct{ n, k, w int }{{2000, 417, 10000}, {2000, 2000, 10000}, {1000, 417, 10000}} {
		b.Run(fmt.Sprintf("n%d_k%d_w%d", c.n, c.k, c.w), func(b *testing.B) {
			x := make([]float64, c.k*c.w)
			for i := range x {
				x[i] = float64(i%7) * 0.25
			}
			cm := make([]float64, c.n*c.n)
			b.ResetTimer()
			for b.Loop() {
				Dgemm(true, false, c.n, c.n, c.k, 1, x, c.w, x[c.n:], c.w, 1, cm, c.n)
			}
			b.ReportMetric(2*float64(c.n)*float64(c.n)*float64(c.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
