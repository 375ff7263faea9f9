package tensortest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/fuse"
)

// x ** 2 in an expression program is x * x: the same values, to the bit,
// as the power kernel's math.Pow, for float32 and float64, with
// subnormals, huge values, infinities, NaNs and signed zeros; and an
// exponent other than 2 still takes the power.
func TestFusedSquare(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	edge := []float64{0, math.Copysign(0, -1), 1, -1, 1e-310, -3e-320, 1e-160, 1e154, -1e155, 1e200, 3e38, 2e19, 1e-23, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		a := tensor.NewArray(dt, []int{4000})
		for i := range a.Len() {
			v := r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
			if i < len(edge) {
				v = edge[i]
			}
			if dt == tensor.Float32 {
				a.Float32s()[i] = float32(v)
			} else {
				a.Float64s()[i] = v
			}
		}
		env := newCatEnv()
		env.store(t, "x", a, [][]int{{1000, 1000, 1000, 1000}})
		for _, p := range []int{2, 3} {
			text := fmt.Sprintf("y = (x * 1) ** %d", p)
			got := runSpecWith(t, text, env, fuse.Options{Fuse: true, FuseExpr: true})["y"]
			plain := runSpec(t, text, env)["y"]
			for i := range a.Len() {
				x := a.Float64At(i)
				want := math.Pow(x, float64(p))
				if dt == tensor.Float32 {
					want = float64(float32(want))
				}
				for _, g := range []float64{got.Float64At(i), plain.Float64At(i)} {
					if math.Float64bits(g) != math.Float64bits(want) && !(math.IsNaN(g) && math.IsNaN(want)) {
						t.Fatalf("%v %s: element %d (%v) is %v, want %v", dt, text, i, x, g, want)
					}
				}
			}
		}
	}
}
