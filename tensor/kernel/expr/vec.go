package expr

import (
	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// A vecSet is one implementation of the packed loops.
type vecSet struct {
	Name               string
	Add, Sub, Mul, Div func(d, a, b []float64)
	Sum8               func(x []float64, r *[8]float64)
}

// vecRow returns a packed loop for the float64 arithmetic of an expr
// program, or nil when kind has none; ops on other dtypes, and other ops,
// run the elementwise kernels' loops.
func vecRow(kind string, ct, out tensor.DType) elem.RowFn {
	if ct == tensor.Float64 && out == tensor.Bool {
		return cmpRow(kind)
	}
	if ct != tensor.Float64 || out != tensor.Float64 {
		return nil
	}
	var loop func(d, a, b []float64)
	switch kind {
	case tensor.OpAdd:
		loop = addF64
	case tensor.OpSubtract:
		loop = subF64
	case tensor.OpMultiply:
		loop = mulF64
	case tensor.OpDivide:
		loop = divF64
	default:
		return nil
	}
	return func(dst []byte, in [][]byte) error {
		d := tensor.View[float64](dst)
		// Slicing checks the lengths the loops rely on.
		loop(d, tensor.View[float64](in[0])[:len(d)], tensor.View[float64](in[1])[:len(d)])
		return nil
	}
}

// cmpRow returns the packed loop for float64 comparison kind, or nil;
// the elements past the last multiple of 8 are compared one by one.
func cmpRow(kind string) elem.RowFn {
	loop, swap := cmpWide(kind)
	if loop == nil {
		return nil
	}
	var f func(a, b float64) bool
	switch kind {
	case tensor.OpLess, tensor.OpGreater:
		f = func(a, b float64) bool { return a < b }
	case tensor.OpLessEq, tensor.OpGreaterEq:
		f = func(a, b float64) bool { return a <= b }
	case tensor.OpEqual:
		f = func(a, b float64) bool { return a == b }
	case tensor.OpNotEqual:
		f = func(a, b float64) bool { return a != b }
	}
	return func(dst []byte, in [][]byte) error {
		a, b := tensor.View[float64](in[0])[:len(dst)], tensor.View[float64](in[1])[:len(dst)]
		if swap {
			a, b = b, a
		}
		loop(dst, a, b)
		for i := len(dst) &^ 7; i < len(dst); i++ {
			dst[i] = elem.B2u(f(a[i], b[i]))
		}
		return nil
	}
}

// pairwiseSumF64 is pairwiseSum[float64] with the running sums of its
// leaves kept in packed registers: the same additions in the same order,
// so the same result.
func pairwiseSumF64(x []float64) float64 {
	n := len(x)
	if n < 8 {
		var s float64
		for _, v := range x {
			s += v
		}
		return s
	}
	if n <= 128 {
		var r [8]float64
		m := n &^ 7
		sum8F64(x[:m], &r)
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for _, v := range x[m:] {
			s += v
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSumF64(x[:n2]) + pairwiseSumF64(x[n2:])
}

// A sumCascade adds a stream of partial sums pairwise, as a binary
// counter: the sum of 2^k pushed values is formed as the sum of two sums
// of 2^(k-1), so that rounding error grows with the log of their number.
type sumCascade struct {
	level [64]float64 // level l holds a sum of 2^l values when bit l of full is set
	full  uint64
}

func (c *sumCascade) push(v float64) {
	l := 0
	for ; c.full&(1<<l) != 0; l++ {
		v = c.level[l] + v // earlier values on the left
		c.full &^= 1 << l
	}
	c.level[l] = v
	c.full |= 1 << l
}

// total is the sum of the pushed values (0 for none).
func (c *sumCascade) total() float64 {
	var s float64
	for l := range c.level {
		if c.full&(1<<l) != 0 {
			s = c.level[l] + s
		}
	}
	return s
}

// x ** 2, the two-pass variance's ((x - m) ** 2), is x * x, as NumPy
// computes it (its power takes a scalar exponent of 2 as a square):
// math.Pow, element by element, was a quarter of the workers' CPU in
// VAR2's profile. The product is the power's value: for float32, the
// float64 product of two float32 values is exact, and rounds once to the
// float32 square; for float64, Pow's result is the rounded product too.

// constOf returns the value a program's instructions code leave in
// register r, when the last one writing it is a constant (through casts
// between numeric dtypes).
func constOf(code []chunk.ExprInstr, r int) (float64, bool) {
	for i := len(code) - 1; i >= 0; i-- {
		ins := &code[i]
		if ins.Dst != r {
			continue
		}
		switch ins.Op {
		case chunk.ExprConst:
			switch {
			case ins.DType.IsFloat():
				return ins.Gen.Value, true
			case ins.DType.IsInt():
				return float64(ins.Gen.IntValue), true
			}
		case chunk.ExprCast:
			if len(ins.Src) == 1 {
				return constOf(code[:i], ins.Src[0])
			}
		}
		return 0, false
	}
	return 0, false
}

// squareRow returns the row function of x ** 2 in dt, or nil.
func squareRow(dt tensor.DType) elem.RowFn {
	switch dt {
	case tensor.Float64:
		return func(dst []byte, in [][]byte) error {
			d := tensor.View[float64](dst)
			a := tensor.View[float64](in[0])[:len(d)]
			mulF64(d, a, a)
			return nil
		}
	case tensor.Float32:
		return func(dst []byte, in [][]byte) error {
			d := tensor.View[float32](dst)
			a := tensor.View[float32](in[0])[:len(d)]
			for i, v := range a {
				d[i] = v * v
			}
			return nil
		}
	}
	return nil
}
