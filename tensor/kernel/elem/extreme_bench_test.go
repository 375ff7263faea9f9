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

func BenchmarkMaxRow32(b *testing.B) {
	row := make([]float32, 1<<16)
	for i := range row {
		row[i] = rand.Float32()
	}
	for _, vec := range []bool{false, true} {
		b.Run(map[bool]string{false: "four", true: "avx2"}[vec], func(b *testing.B) {
			saved := useExtremeAVX2
			useExtremeAVX2 = vec
			defer func() { useExtremeAVX2 = saved }()
			b.SetBytes(4 << 16)
			for b.Loop() {
				acc, row := extremeRow(float32(math.Inf(-1)), row, false)
				sink = float64(foldRow(acc, row, func(a, b float32) float32 { return max(a, b) }))
			}
		})
	}
}
