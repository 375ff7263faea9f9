package elem

import (
	"math"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
)

// WidenFloat32, vector loop and scalar one, and CastInto from float32 to
// float64 through it, are Go's conversion to the bit for every length up
// to a few vectors, unaligned starts, NaN, infinities, -0 and subnormals.
func TestWidenFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	defer func(v bool) { useWideAVX2 = v }(useWideAVX2)
	for _, vec := range []bool{true, false} {
		useWideAVX2 = vec && useWideAVX2
		for n := range 70 {
			src := wideRows(r, 1, n)[0]
			if n > 3 {
				src[0], src[1], src[2] = float32(math.Copysign(0, -1)), math.Float32frombits(1), math.MaxFloat32
			}
			dst := make([]float64, n+1)
			dst[n] = 7 // past the end: untouched
			WidenFloat32(dst[:n], src)
			for i, v := range src {
				if !sameBits(dst[i], float64(v)) || math.Signbit(dst[i]) != math.Signbit(float64(v)) {
					t.Fatalf("vector %v, n %d: [%d] %v, want %v", vec, n, i, dst[i], float64(v))
				}
			}
			if dst[n] != 7 {
				t.Fatalf("vector %v, n %d: wrote past the end", vec, n)
			}
			in := tensor.NewArray(tensor.Float32, []int{n})
			copy(in.Float32s(), src)
			out := tensor.NewArray(tensor.Float64, []int{n})
			CastInto(out, in)
			for i, v := range src {
				if !sameBits(out.Float64s()[i], float64(v)) {
					t.Fatalf("CastInto, n %d: [%d] %v, want %v", n, i, out.Float64s()[i], float64(v))
				}
			}
		}
	}
}
