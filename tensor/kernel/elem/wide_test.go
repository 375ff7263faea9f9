package elem

import (
	"math"
	"math/rand/v2"
	"testing"
)

// wideRows are k rows of n float32 values, each starting at an offset of
// its own in a longer slice (so that the vector loops meet unaligned
// starts), with values of every magnitude, where the order of additions
// shows in the float64 result, and a few NaNs and infinities.
func wideRows(r *rand.Rand, k, n int) [][]float32 {
	rows := make([][]float32, k)
	for i := range rows {
		off := r.IntN(4)
		b := make([]float32, n+off)
		for j := range b {
			switch r.IntN(40) {
			case 0:
				b[j] = float32(math.NaN())
			case 1:
				b[j] = float32(math.Inf(1 - 2*r.IntN(2)))
			default:
				b[j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(16)-4)))
			}
		}
		rows[i] = b[off:]
	}
	return rows
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// AddWideRows and AddSqDevWideRows, vector loops and scalar ones, are the
// rows added one after another in float64, to the bit, for every number of
// rows and every width up to a few vectors.
func TestWideRows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, vec := range []bool{false, true} {
		if vec && !useWideAVX2 {
			continue
		}
		saved := useWideAVX2
		useWideAVX2 = vec
		for k := 1; k <= MaxWideRows; k++ {
			for n := 0; n <= 50; n++ {
				rows := wideRows(r, k, n)
				acc, m2, mean := make([]float64, n), make([]float64, n), make([]float64, n)
				for j := range acc {
					acc[j] = r.NormFloat64() * 1e3
					m2[j] = math.Abs(r.NormFloat64())
					mean[j] = r.NormFloat64()
				}
				wantAcc, wantM2 := append([]float64(nil), acc...), append([]float64(nil), m2...)
				for _, row := range rows {
					for j := range n {
						wantAcc[j] += float64(row[j])
						d := float64(row[j]) - mean[j]
						wantM2[j] += d * d
					}
				}
				AddWideRows(acc, rows)
				AddSqDevWideRows(m2, mean, rows)
				for j := range n {
					if !sameBits(acc[j], wantAcc[j]) || !sameBits(m2[j], wantM2[j]) {
						t.Fatalf("vector %v, %d rows of %d, column %d: sum %v, M2 %v; want %v, %v", vec, k, n, j, acc[j], m2[j], wantAcc[j], wantM2[j])
					}
				}
			}
		}
		useWideAVX2 = saved
	}
}

func BenchmarkAddWideRows(b *testing.B) {
	const n = 181 * 360
	r := rand.New(rand.NewPCG(1, 2))
	rows := wideRows(r, MaxWideRows, n)
	acc := make([]float64, n)
	for _, k := range []int{1, 4, 8} {
		b.Run(string(rune('0'+k)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * k))
			for b.Loop() {
				AddWideRows(acc, rows[:k])
			}
		})
	}
}
