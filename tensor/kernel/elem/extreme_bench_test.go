package elem

import (
	"math"
	"math/rand/v2"
	"testing"
)

func BenchmarkMaxRow(b *testing.B) {
	row := make([]float64, 1<<16)
	for i := range row {
		row[i] = rand.Float64()
	}
	b.Run("one", func(b *testing.B) {
		b.SetBytes(8 << 16)
		for b.Loop() {
			acc := math.Inf(-1)
			for _, v := range row {
				acc = max(acc, v)
			}
			sink = acc
		}
	})
	b.Run("avx2", func(b *testing.B) {
		b.SetBytes(8 << 16)
		for b.Loop() {
			acc, n := extremeWide(math.Inf(-1), row, false)
			sink = foldRow(acc, row[n:], func(a, b float64) float64 { return max(a, b) })
		}
	})
	b.Run("four", func(b *testing.B) {
		b.SetBytes(8 << 16)
		for b.Loop() {
			sink = foldRow(math.Inf(-1), row, func(a, b float64) float64 { return max(a, b) })
		}
	})
}

var sink float64
