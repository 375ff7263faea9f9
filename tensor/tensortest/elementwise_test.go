package tensortest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/spec"
)

var (
	nanV = math.NaN()
	infV = math.Inf(1)
)

// binCase is a binary op on a (3,1) and a (4,) operand, broadcast to (3,4);
// the expected values come from NumPy 1.24.
type binCase struct {
	op   string
	dt   tensor.DType // result dtype
	want []float64
}

func runBinary(t *testing.T, a, b *tensor.Array, cases []binCase, chunkings [][2][][]int) {
	t.Helper()
	for _, c := range cases {
		for _, cs := range chunkings {
			g := newGraph(t)
			x := g.input(a, cs[0])
			y := g.input(b, cs[1])
			got := g.compute(g.op(c.op, c.dt, []int{3, 4}, spec.Attrs{}, x, y))[0]
			checkArray(t, c.op+" "+a.DType.String(), got, c.dt, []int{3, 4}, c.want, 1e-15)
		}
	}
}

func TestBinaryInt(t *testing.T) {
	chunkings := [][2][][]int{
		{{{3}, {1}}, {{4}}},
		{{{2, 1}, {1}}, {{1, 3}}},
		{{{1, 1, 1}, {1}}, {{1, 1, 1, 1}}},
	}
	cases := []binCase{
		{tensor.OpAdd, tensor.Int64, []float64{-5, -10, -7, -3, 2, -3, 0, 4, 7, 2, 5, 9}},
		{tensor.OpSubtract, tensor.Int64, []float64{-9, -4, -7, -11, -2, 3, 0, -4, 3, 8, 5, 1}},
		{tensor.OpMultiply, tensor.Int64, []float64{-14, 21, 0, -28, 0, 0, 0, 0, 10, -15, 0, 20}},
		{tensor.OpFloorDiv, tensor.Int64, []float64{-4, 2, 0, -2, 0, 0, 0, 0, 2, -2, 0, 1}},
		{tensor.OpMod, tensor.Int64, []float64{1, -1, 0, 1, 0, 0, 0, 0, 1, -1, 0, 1}},
		{tensor.OpMaximum, tensor.Int64, []float64{2, -3, 0, 4, 2, 0, 0, 4, 5, 5, 5, 5}},
		{tensor.OpMinimum, tensor.Int64, []float64{-7, -7, -7, -7, 0, -3, 0, 0, 2, -3, 0, 4}},
		{tensor.OpEqual, tensor.Bool, []float64{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}},
		{tensor.OpLess, tensor.Bool, []float64{1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0}},
		{tensor.OpGreaterEq, tensor.Bool, []float64{0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1}},
		{tensor.OpBitAnd, tensor.Int64, []float64{0, -7, 0, 0, 0, 0, 0, 0, 0, 5, 0, 4}},
		{tensor.OpBitOr, tensor.Int64, []float64{-5, -3, -7, -3, 2, -3, 0, 4, 7, -3, 5, 5}},
		{tensor.OpLogicalAnd, tensor.Bool, []float64{1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1}},
		{tensor.OpLogicalOr, tensor.Bool, []float64{1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1}},
		{tensor.OpDivide, tensor.Float64, []float64{-3.5, 2.3333333333333335, math.Inf(-1), -1.75, 0.0, 0, nanV, 0.0, 2.5, -1.6666666666666667, infV, 1.25}},
	}
	for _, dt := range []tensor.DType{tensor.Int64, tensor.Int32} {
		a := arrayOf(dt, []int{3, 1}, -7, 0, 5)
		b := arrayOf(dt, []int{4}, 2, -3, 0, 4)
		var cs []binCase
		for _, c := range cases {
			if c.dt == tensor.Int64 {
				c.dt = dt
			}
			cs = append(cs, c)
		}
		runBinary(t, a, b, cs, chunkings)
	}
	a := arrayOf(tensor.Int64, []int{3, 1}, -7, 0, 5)
	b := arrayOf(tensor.Int64, []int{4}, 2, 3, 0, 4)
	runBinary(t, a, b, []binCase{{tensor.OpPower, tensor.Int64, []float64{49, -343, 1, 2401, 0, 0, 1, 0, 25, 125, 1, 625}}}, chunkings[:1])
}

func TestBinaryFloat(t *testing.T) {
	chunkings := [][2][][]int{
		{{{3}, {1}}, {{4}}},
		{{{1, 2}, {1}}, {{3, 1}}},
	}
	cases := []binCase{
		{tensor.OpAdd, tensor.Float64, []float64{-5.5, -10.5, -7.5, infV, 2.0, -3.0, 0.0, infV, nanV, nanV, nanV, nanV}},
		{tensor.OpSubtract, tensor.Float64, []float64{-9.5, -4.5, -7.5, -infV, -2.0, 3.0, 0.0, -infV, nanV, nanV, nanV, nanV}},
		{tensor.OpMultiply, tensor.Float64, []float64{-15.0, 22.5, -0.0, -infV, 0.0, -0.0, 0.0, nanV, nanV, nanV, nanV, nanV}},
		{tensor.OpDivide, tensor.Float64, []float64{-3.75, 2.5, -infV, -0.0, 0.0, -0.0, nanV, 0.0, nanV, nanV, nanV, nanV}},
		{tensor.OpFloorDiv, tensor.Float64, []float64{-4.0, 2.0, -infV, -1.0, 0.0, -0.0, nanV, 0.0, nanV, nanV, nanV, nanV}},
		{tensor.OpMod, tensor.Float64, []float64{0.5, -1.5, nanV, infV, 0.0, -0.0, nanV, 0.0, nanV, nanV, nanV, nanV}},
		{tensor.OpPower, tensor.Float64, []float64{56.25, -0.0023703703703703703, 1.0, infV, 0.0, infV, 1.0, 0.0, nanV, nanV, 1.0, nanV}},
		{tensor.OpMaximum, tensor.Float64, []float64{2.0, -3.0, 0.0, infV, 2.0, 0.0, 0.0, infV, nanV, nanV, nanV, nanV}},
		{tensor.OpMinimum, tensor.Float64, []float64{-7.5, -7.5, -7.5, -7.5, 0.0, -3.0, 0.0, 0.0, nanV, nanV, nanV, nanV}},
		{tensor.OpEqual, tensor.Bool, []float64{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}},
		{tensor.OpNotEqual, tensor.Bool, []float64{1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1}},
		{tensor.OpLess, tensor.Bool, []float64{1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0}},
		{tensor.OpLessEq, tensor.Bool, []float64{1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0}},
		{tensor.OpGreater, tensor.Bool, []float64{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}},
	}
	a := arrayOf(tensor.Float64, []int{3, 1}, -7.5, 0, nanV)
	b := arrayOf(tensor.Float64, []int{4}, 2, -3, 0, infV)
	runBinary(t, a, b, cases, chunkings)
	// float32 computes in float32: the same values, all representable.
	var cs32 []binCase
	for _, c := range cases {
		if c.op == tensor.OpPower {
			c.want = append([]float64(nil), c.want...)
			c.want[1] = float64(float32(c.want[1]))
		}
		if c.dt == tensor.Float64 {
			c.dt = tensor.Float32
		}
		cs32 = append(cs32, c)
	}
	runBinary(t, elem.CastArray(a, tensor.Float32), elem.CastArray(b, tensor.Float32), cs32, chunkings[:1])
}

func TestBinaryBool(t *testing.T) {
	a := arrayOf(tensor.Bool, []int{3, 1}, 1, 0, 1)
	b := arrayOf(tensor.Bool, []int{4}, 1, 0, 0, 1)
	cs := [][2][][]int{{{{2, 1}, {1}}, {{2, 2}}}}
	runBinary(t, a, b, []binCase{
		{tensor.OpAdd, tensor.Bool, []float64{1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1}},
		{tensor.OpMultiply, tensor.Bool, []float64{1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1}},
		{tensor.OpBitOr, tensor.Bool, []float64{1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1}},
		{tensor.OpBitAnd, tensor.Bool, []float64{1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1}},
		{tensor.OpEqual, tensor.Bool, []float64{1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1}},
		{tensor.OpLess, tensor.Bool, []float64{0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0}},
	}, cs)
}

// TestBinaryMixed checks casting to the result dtype and comparisons in the
// promoted dtype, including a weak Python scalar.
func TestBinaryMixed(t *testing.T) {
	g := newGraph(t)
	i32 := g.input(arrayOf(tensor.Int32, []int{4}, 1, 2, 3, -4), [][]int{{3, 1}})
	f32 := g.input(arrayOf(tensor.Float32, []int{4}, 0.1, 0.5, 2.5, 1), [][]int{{1, 3}})
	sum := g.op(tensor.OpAdd, tensor.Float64, []int{4}, spec.Attrs{}, i32, f32)
	// float32 array == 0.1 compares in float32 (NumPy's value-based casting).
	eqWeak := g.op(tensor.OpEqual, tensor.Bool, []int{4}, spec.Attrs{}, f32, g.scalar(tensor.Float64, 0.1, true))
	// The same scalar as a float64 array compares in float64.
	strong := g.scalar(tensor.Float64, 0.1, false)
	eqStrong := g.op(tensor.OpEqual, tensor.Bool, []int{4}, spec.Attrs{}, f32, strong)
	// int array < 2.5 compares in float64.
	lt := g.op(tensor.OpLess, tensor.Bool, []int{4}, spec.Attrs{}, i32, g.scalar(tensor.Float64, 2.5, true))
	// int32 * 3 (weak) stays int32.
	mul := g.op(tensor.OpMultiply, tensor.Int32, []int{4}, spec.Attrs{}, i32, g.scalar(tensor.Int64, 3, true))
	// int32 == 2**40 (weak) compares in int64, never wrapping the scalar.
	big := g.scalar(tensor.Int64, 1<<40, true)
	eqBig := g.op(tensor.OpEqual, tensor.Bool, []int{4}, spec.Attrs{}, i32, big)
	out := g.compute(sum, eqWeak, eqStrong, lt, mul, eqBig)
	checkArray(t, "int32+float32", out[0], tensor.Float64, []int{4}, []float64{1 + float64(float32(0.1)), 2.5, 5.5, -3}, 1e-15)
	checkArray(t, "f32==weak 0.1", out[1], tensor.Bool, []int{4}, []float64{1, 0, 0, 0}, 0)
	checkArray(t, "f32==f64 0.1", out[2], tensor.Bool, []int{4}, []float64{0, 0, 0, 0}, 0)
	checkArray(t, "i32<2.5", out[3], tensor.Bool, []int{4}, []float64{1, 1, 0, 1}, 0)
	checkArray(t, "i32*3", out[4], tensor.Int32, []int{4}, []float64{3, 6, 9, -12}, 0)
	checkArray(t, "i32==2**40", out[5], tensor.Bool, []int{4}, []float64{0, 0, 0, 0}, 0)
}

// TestBroadcastShapes exercises broadcasting of 0-d, size-1 and missing
// axes on 3-D results with ragged chunks, against a direct computation.
func TestBroadcastShapes(t *testing.T) {
	cases := []struct{ a, b, out []int }{
		{[]int{2, 3, 4}, []int{}, []int{2, 3, 4}},
		{[]int{}, []int{2, 3, 4}, []int{2, 3, 4}},
		{[]int{2, 1, 4}, []int{3, 1}, []int{2, 3, 4}},
		{[]int{1, 3, 1}, []int{2, 1, 5}, []int{2, 3, 5}},
		{[]int{4}, []int{3, 1, 1}, []int{3, 5, 4}},
		{[]int{5, 1}, []int{1, 1}, []int{5, 1}},
		{[]int{0, 3}, []int{3}, []int{0, 3}},
	}
	for _, c := range cases {
		out := c.out
		a := arrayOf(tensor.Float64, c.a, seqValues(1, tensor.NumElements(c.a))...)
		b := arrayOf(tensor.Float64, c.b, seqValues(100, tensor.NumElements(c.b))...)
		want := make([]float64, tensor.NumElements(out))
		for k := range want {
			idx := tensor.Unravel(k, out)
			want[k] = a.Float64At(bcastIndex(idx, c.a)) - 2*b.Float64At(bcastIndex(idx, c.b))
		}
		for _, size := range []int{1, 2, 3} {
			g := newGraph(t)
			x := g.input(a, splitChunks(c.a, size))
			y := g.input(b, splitChunks(c.b, size+1))
			two := g.scalar(tensor.Float64, 2, true)
			got := g.compute(g.op(tensor.OpSubtract, tensor.Float64, out, spec.Attrs{}, x, g.op(tensor.OpMultiply, tensor.Float64, c.b, spec.Attrs{}, y, two)))[0]
			checkArray(t, "broadcast", got, tensor.Float64, out, want, 0)
		}
	}
}

// bcastIndex is the flat index in an array of shape of the element that
// output index idx reads.
func bcastIndex(idx, shape []int) int {
	off := len(idx) - len(shape)
	k := 0
	for ax, s := range shape {
		i := idx[ax+off]
		if s == 1 {
			i = 0
		}
		k = k*s + i
	}
	return k
}

func TestUnaryFloat(t *testing.T) {
	x := []float64{-2.5, -0.5, 0., 0.5, 1.5, 2.5, nanV, infV, 1.25, -1.75}
	cases := []struct {
		op       string
		dt       tensor.DType
		decimals int
		want     []float64
	}{
		{tensor.OpNegative, tensor.Float64, 0, []float64{2.5, 0.5, -0.0, -0.5, -1.5, -2.5, nanV, -infV, -1.25, 1.75}},
		{tensor.OpAbs, tensor.Float64, 0, []float64{2.5, 0.5, 0.0, 0.5, 1.5, 2.5, nanV, infV, 1.25, 1.75}},
		{tensor.OpSqrt, tensor.Float64, 0, []float64{nanV, nanV, 0.0, 0.7071067811865476, 1.224744871391589, 1.5811388300841898, nanV, infV, 1.118033988749895, nanV}},
		{tensor.OpExp, tensor.Float64, 0, []float64{0.0820849986238988, 0.6065306597126334, 1.0, 1.6487212707001282, 4.4816890703380645, 12.182493960703473, nanV, infV, 3.4903429574618414, 0.17377394345044514}},
		{tensor.OpLog, tensor.Float64, 0, []float64{nanV, nanV, -infV, -0.6931471805599453, 0.4054651081081644, 0.9162907318741551, nanV, infV, 0.22314355131420976, nanV}},
		{tensor.OpLog1p, tensor.Float64, 0, []float64{nanV, -0.6931471805599453, 0.0, 0.4054651081081644, 0.9162907318741551, 1.252762968495368, nanV, infV, 0.8109302162163288, nanV}},
		{tensor.OpSin, tensor.Float64, 0, []float64{-0.5984721441039565, -0.479425538604203, 0.0, 0.479425538604203, 0.9974949866040544, 0.5984721441039565, nanV, nanV, 0.9489846193555862, -0.9839859468739369}},
		{tensor.OpCos, tensor.Float64, 0, []float64{-0.8011436155469337, 0.8775825618903728, 1.0, 0.8775825618903728, 0.0707372016677029, -0.8011436155469337, nanV, nanV, 0.3153223623952687, -0.17824605564949209}},
		{tensor.OpTan, tensor.Float64, 0, []float64{0.7470222972386603, -0.5463024898437905, 0.0, 0.5463024898437905, 14.101419947171719, -0.7470222972386603, nanV, nanV, 3.0095696738628313, 5.52037992250933}},
		{tensor.OpTanh, tensor.Float64, 0, []float64{-0.9866142981514303, -0.46211715726000974, 0.0, 0.46211715726000974, 0.9051482536448665, 0.9866142981514303, nanV, 1.0, 0.8482836399575129, -0.9413755384972874}},
		{tensor.OpFloor, tensor.Float64, 0, []float64{-3.0, -1.0, 0.0, 0.0, 1.0, 2.0, nanV, infV, 1.0, -2.0}},
		{tensor.OpCeil, tensor.Float64, 0, []float64{-2.0, -0.0, 0.0, 1.0, 2.0, 3.0, nanV, infV, 2.0, -1.0}},
		{tensor.OpSign, tensor.Float64, 0, []float64{-1.0, -1.0, 0.0, 1.0, 1.0, 1.0, nanV, 1.0, 1.0, -1.0}},
		{tensor.OpLogicalNot, tensor.Bool, 0, []float64{0, 0, 1, 0, 0, 0, 0, 0, 0, 0}},
		{tensor.OpRound, tensor.Float64, 0, []float64{-2.0, -0.0, 0.0, 0.0, 2.0, 2.0, nanV, infV, 1.0, -2.0}},
		{tensor.OpRound, tensor.Float64, 1, []float64{-2.5, -0.5, 0.0, 0.5, 1.5, 2.5, nanV, infV, 1.2, -1.8}},
		{tensor.OpAstype, tensor.Int64, 0, []float64{-2, 0, 0, 0, 1, 2, math.MinInt64, math.MinInt64, 1, -1}},
		{tensor.OpAstype, tensor.Int32, 0, []float64{-2, 0, 0, 0, 1, 2, math.MinInt32, math.MinInt32, 1, -1}},
		{tensor.OpAstype, tensor.Bool, 0, []float64{1, 1, 0, 1, 1, 1, 1, 1, 1, 1}},
	}
	for _, c := range cases {
		g := newGraph(t)
		in := g.input(arrayOf(tensor.Float64, []int{10}, x...), [][]int{{3, 3, 3, 1}})
		got := g.compute(g.op(c.op, c.dt, []int{10}, spec.Attrs{Decimals: c.decimals}, in))[0]
		checkArray(t, c.op, got, c.dt, []int{10}, c.want, 1e-15)
	}
	// float32 rounds in float32, as NumPy.
	g := newGraph(t)
	in := g.input(arrayOf(tensor.Float32, []int{10}, x...), [][]int{{10}})
	got := g.compute(g.op(tensor.OpRound, tensor.Float32, []int{10}, spec.Attrs{Decimals: 1}, in), g.op(tensor.OpSqrt, tensor.Float32, []int{10}, spec.Attrs{}, in))
	checkArray(t, "round f32", got[0], tensor.Float32, []int{10}, []float64{-2.5, -0.5, 0.0, 0.5, 1.5, 2.5, nanV, infV, 1.2000000476837158, -1.7999999523162842}, 0)
	checkArray(t, "sqrt f32", got[1], tensor.Float32, []int{10}, []float64{nanV, nanV, 0.0, 0.7071067690849304, 1.2247449159622192, 1.5811388492584229, nanV, infV, 1.1180340051651, nanV}, 0)
	g = newGraph(t)
	in = g.input(arrayOf(tensor.Float64, []int{4}, 15, 25, -35, 4.9), [][]int{{4}})
	checkArray(t, "round -1", g.compute(g.op(tensor.OpRound, tensor.Float64, []int{4}, spec.Attrs{Decimals: -1}, in))[0], tensor.Float64, []int{4}, []float64{20, 20, -40, 0}, 0)
}

func TestUnaryInt(t *testing.T) {
	x := arrayOf(tensor.Int32, []int{4}, -7, 0, 5, math.MinInt32)
	cases := []struct {
		op   string
		dt   tensor.DType
		want []float64
	}{
		{tensor.OpNegative, tensor.Int32, []float64{7, 0, -5, math.MinInt32}},
		{tensor.OpAbs, tensor.Int32, []float64{7, 0, 5, math.MinInt32}},
		{tensor.OpSign, tensor.Int32, []float64{-1, 0, 1, -1}},
		{tensor.OpInvert, tensor.Int32, []float64{6, -1, -6, math.MaxInt32}},
		{tensor.OpLogicalNot, tensor.Bool, []float64{0, 1, 0, 0}},
		{tensor.OpAstype, tensor.Float32, []float64{-7, 0, 5, math.MinInt32}},
		{tensor.OpAstype, tensor.Bool, []float64{1, 0, 1, 1}},
		{tensor.OpFloor, tensor.Int32, []float64{-7, 0, 5, math.MinInt32}},
	}
	for _, c := range cases {
		g := newGraph(t)
		in := g.input(x, [][]int{{1, 3}})
		checkArray(t, c.op, g.compute(g.op(c.op, c.dt, []int{4}, spec.Attrs{}, in))[0], c.dt, []int{4}, c.want, 0)
	}
	for _, dt := range []tensor.DType{tensor.Int32, tensor.Int64} {
		g := newGraph(t)
		in := g.input(arrayOf(dt, []int{6}, 15, 25, -15, -25, 1234, 7), [][]int{{2, 4}})
		checkArray(t, "round -1", g.compute(g.op(tensor.OpRound, dt, []int{6}, spec.Attrs{Decimals: -1}, in))[0], dt, []int{6}, []float64{20, 20, -20, -20, 1230, 10}, 0)
	}
	g := newGraph(t)
	in := g.input(arrayOf(tensor.Int64, []int{2}, 1<<40+1, -5), [][]int{{2}})
	checkArray(t, "int64->int32", g.compute(g.op(tensor.OpAstype, tensor.Int32, []int{2}, spec.Attrs{}, in))[0], tensor.Int32, []int{2}, []float64{1, -5}, 0)
	g = newGraph(t)
	in = g.input(arrayOf(tensor.Bool, []int{2}, 1, 0), [][]int{{1, 1}})
	out := g.compute(g.op(tensor.OpInvert, tensor.Bool, []int{2}, spec.Attrs{}, in), g.op(tensor.OpAstype, tensor.Float64, []int{2}, spec.Attrs{}, in))
	checkArray(t, "~bool", out[0], tensor.Bool, []int{2}, []float64{0, 1}, 0)
	checkArray(t, "bool->f64", out[1], tensor.Float64, []int{2}, []float64{1, 0}, 0)
}

func TestWhere(t *testing.T) {
	g := newGraph(t)
	cond := g.input(arrayOf(tensor.Float64, []int{3, 1}, 1, 0, nanV), [][]int{{2, 1}, {1}})
	x := g.input(arrayOf(tensor.Int32, []int{4}, 1, 2, 3, 4), [][]int{{1, 3}})
	y := g.scalar(tensor.Float64, -0.5, false)
	got := g.compute(g.op(tensor.OpWhere, tensor.Float64, []int{3, 4}, spec.Attrs{}, cond, x, y))[0]
	checkArray(t, "where", got, tensor.Float64, []int{3, 4}, []float64{1, 2, 3, 4, -0.5, -0.5, -0.5, -0.5, 1, 2, 3, 4}, 0)
}

// TestElementwiseErrors checks that kernels refuse bad ops with an error.
func TestElementwiseErrors(t *testing.T) {
	ctx := context.Background()
	f := arrayOf(tensor.Float64, []int{2}, 1, 2)
	i := arrayOf(tensor.Int64, []int{2}, 2, -1)
	cases := []struct {
		name string
		op   *chunk.Op
		in   []*tensor.Array
	}{
		{"bad args", &chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0, 1}, Shape: []int{2}, DType: tensor.Float64, Args: chunk.GenArgs{}}, []*tensor.Array{f, f}},
		{"arity", &chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0}, Shape: []int{2}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}}, []*tensor.Array{f}},
		{"shape", &chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0, 1}, Shape: []int{3}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}}, []*tensor.Array{f, f}},
		{"invert float", &chunk.Op{Kind: tensor.OpInvert, Inputs: []int{0}, Shape: []int{2}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}}, []*tensor.Array{f}},
		{"sqrt int", &chunk.Op{Kind: tensor.OpSqrt, Inputs: []int{0}, Shape: []int{2}, DType: tensor.Int64, Args: chunk.ElemArgs{Compute: tensor.Int64}}, []*tensor.Array{i}},
		{"negative power", &chunk.Op{Kind: tensor.OpPower, Inputs: []int{0, 1}, Shape: []int{2}, DType: tensor.Int64, Args: chunk.ElemArgs{Compute: tensor.Int64}}, []*tensor.Array{i, i}},
		{"short data", &chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0, 1}, Shape: []int{2}, DType: tensor.Float64, Args: chunk.ElemArgs{Compute: tensor.Float64}}, []*tensor.Array{f, {DType: tensor.Float64, Shape: []int{2}, Data: make([]byte, 3)}}},
		{"mixed out", &chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0, 1}, Shape: []int{2}, DType: tensor.Int64, Args: chunk.ElemArgs{Compute: tensor.Float64}}, []*tensor.Array{f, f}},
	}
	for _, c := range cases {
		if _, err := kernel.Run(ctx, c.op, c.in); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestBlockedCast checks the blocked fast path, where inputs of another
// dtype are cast block by block, over several blocks and a ragged last one.
func TestBlockedCast(t *testing.T) {
	n := 2*kernel.ElemBlock + 123
	a := tensor.NewArray(tensor.Int32, []int{n})
	b := tensor.NewArray(tensor.Float64, []int{n})
	for i := range n {
		a.Int32s()[i] = int32(i - n/2)
		b.Float64s()[i] = float64(i) * 0.25
	}
	g := newGraph(t)
	x := g.input(a, [][]int{{n}})
	y := g.input(b, [][]int{{n - 7, 7}})
	out := g.compute(g.op(tensor.OpAdd, tensor.Float64, []int{n}, spec.Attrs{}, x, y), g.op(tensor.OpLess, tensor.Bool, []int{n}, spec.Attrs{}, x, y))
	for i := range n {
		w := float64(i-n/2) + float64(i)*0.25
		if got := out[0].Float64s()[i]; got != w {
			t.Fatalf("add element %d = %v, want %v", i, got, w)
		}
		if got, w := out[1].Data[i], elem.B2u(float64(i-n/2) < float64(i)*0.25); got != w {
			t.Fatalf("less element %d = %v, want %v", i, got, w)
		}
	}
}

// TestElementwiseRandom checks tiling and broadcasting on random shapes and
// chunkings: the result must equal the same op on inputs broadcast by hand,
// each in one chunk.
func TestElementwiseRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ops := []struct {
		op  string
		in  []tensor.DType
		out tensor.DType
	}{
		{tensor.OpAdd, []tensor.DType{tensor.Float64, tensor.Int32}, tensor.Float64},
		{tensor.OpMultiply, []tensor.DType{tensor.Int64, tensor.Int64}, tensor.Int64},
		{tensor.OpFloorDiv, []tensor.DType{tensor.Int32, tensor.Int32}, tensor.Int32},
		{tensor.OpMaximum, []tensor.DType{tensor.Float32, tensor.Float32}, tensor.Float32},
		{tensor.OpLess, []tensor.DType{tensor.Int64, tensor.Float64}, tensor.Bool},
		{tensor.OpWhere, []tensor.DType{tensor.Bool, tensor.Float64, tensor.Int64}, tensor.Float64},
		{tensor.OpSqrt, []tensor.DType{tensor.Float64}, tensor.Float64},
	}
	for trial := 0; trial < 300; trial++ {
		o := ops[r.IntN(len(ops))]
		nd := r.IntN(4)
		out := make([]int, nd)
		for ax := range out {
			out[ax] = 1 + r.IntN(5)
		}
		g := newGraph(t)
		ref := newGraph(t)
		var ins, refIns []*spec.Node
		for i, dt := range o.in {
			drop := r.IntN(nd + 1)
			shape := append([]int(nil), out[drop:]...)
			for ax := range shape {
				if r.IntN(3) == 0 {
					shape[ax] = 1
				}
			}
			vals := make([]float64, tensor.NumElements(shape))
			for k := range vals {
				vals[k] = float64(r.IntN(19) - 9 + 10*i)
			}
			a := arrayOf(dt, shape, vals...)
			chunks := make([][]int, len(shape))
			for ax, s := range shape {
				for left := s; left > 0; {
					c := 1 + r.IntN(left)
					chunks[ax] = append(chunks[ax], c)
					left -= c
				}
			}
			ins = append(ins, g.input(a, chunks))
			full := tensor.NewArray(dt, out)
			es := dt.Size()
			for k := 0; k < full.Len(); k++ {
				src := bcastIndex(tensor.Unravel(k, out), shape)
				copy(full.Data[k*es:(k+1)*es], a.Data[src*es:(src+1)*es])
			}
			refIns = append(refIns, ref.input(full, splitChunks(out, 1<<30)))
		}
		got := g.compute(g.op(o.op, o.out, out, spec.Attrs{}, ins...))[0]
		want := ref.compute(ref.op(o.op, o.out, out, spec.Attrs{}, refIns...))[0]
		checkArray(t, fmt.Sprintf("trial %d %s %v", trial, o.op, out), got, o.out, out, kernValues(want), 0)
	}
}
