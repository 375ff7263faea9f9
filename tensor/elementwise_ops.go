package tensor

import (
	"fmt"
	"math"
)

// The typed loops of the elementwise kernels. Each works on equal-length
// slices (dst first) and is instantiated per element type; bool data is
// handled as uint8 0/1 bytes.

type intType interface{ ~int32 | ~int64 }

type floatType interface{ ~float32 | ~float64 }

// elemFunc returns the row function of op kind computing in ct and writing
// out, or an error when the op does not apply to the dtype.
func elemFunc(kind string, ct, out DType, decimals, nin int) (rowFn, error) {
	want := 2
	switch {
	case kind == OpWhere:
		want = 3
	case isUnaryElem(kind):
		want = 1
	}
	if nin != want {
		return nil, fmt.Errorf("%s takes %d inputs, got %d", kind, want, nin)
	}
	if !ct.Valid() || !out.Valid() {
		return nil, fmt.Errorf("invalid dtypes %v -> %v", ct, out)
	}
	var f rowFn
	switch {
	case kind == OpAstype:
		f = func(dst []byte, in [][]byte) error {
			castInto(&Array{DType: out, Data: dst}, &Array{DType: ct, Data: in[0]})
			return nil
		}
	case isComparison(kind):
		f = byDType(ct, cmpT[uint8], cmpT[int32], cmpT[int64], cmpT[float32], cmpT[float64])(kind, 0)
	case kind == OpLogicalNot:
		f = byDType(ct, notT[uint8], notT[int32], notT[int64], notT[float32], notT[float64])(kind, 0)
	case kind == OpLogicalAnd || kind == OpLogicalOr:
		if ct == Bool {
			f = boolOp(kind)
		}
	case kind == OpWhere:
		f = byDType(ct, whereT[uint8], whereT[int32], whereT[int64], whereT[float32], whereT[float64])(kind, 0)
	case ct == Bool:
		f = boolOp(kind)
	default:
		f = byDType(ct, nil, numT[int32], numT[int64], numT[float32], numT[float64])(kind, decimals)
		if f == nil {
			f = byDType(ct, nil, intT[int32], intT[int64], floatT[float32], floatT[float64])(kind, decimals)
		}
	}
	if f == nil {
		return nil, fmt.Errorf("%s is not defined for %v", kind, ct)
	}
	writesBool := isComparison(kind) || kind == OpLogicalNot || kind == OpLogicalAnd || kind == OpLogicalOr
	switch {
	case writesBool && out != Bool:
		return nil, fmt.Errorf("%s writes bool, not %v", kind, out)
	case !writesBool && kind != OpAstype && ct != out:
		return nil, fmt.Errorf("%s computes in %v but writes %v", kind, ct, out)
	}
	return f, nil
}

func isUnaryElem(kind string) bool {
	for _, op := range elemUnaryOps {
		if op == kind {
			return true
		}
	}
	return false
}

type elemFamily func(kind string, decimals int) rowFn

// byDType picks the family member for ct; a nil member yields a nil rowFn.
func byDType(ct DType, u8, i32, i64, f32, f64 elemFamily) elemFamily {
	var f elemFamily
	switch ct {
	case Bool:
		f = u8
	case Int32:
		f = i32
	case Int64:
		f = i64
	case Float32:
		f = f32
	case Float64:
		f = f64
	}
	if f == nil {
		return func(string, int) rowFn { return nil }
	}
	return f
}

func unRow[T, O elemType](loop func(d []O, a []T)) rowFn {
	return func(dst []byte, in [][]byte) error {
		loop(view[O](dst), view[T](in[0]))
		return nil
	}
}

func binRow[T, O elemType](loop func(d []O, a, b []T)) rowFn {
	return func(dst []byte, in [][]byte) error {
		loop(view[O](dst), view[T](in[0]), view[T](in[1]))
		return nil
	}
}

// numT holds the ops defined alike for every numeric type.
func numT[T elemType](kind string, _ int) rowFn {
	switch kind {
	case OpAdd:
		return binRow(addLoop[T])
	case OpSubtract:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] - b[i]
			}
		})
	case OpMultiply:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] * b[i]
			}
		})
	case OpMaximum:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = max(a[i], b[i])
			}
		})
	case OpMinimum:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = min(a[i], b[i])
			}
		})
	case OpNegative:
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = -a[i]
			}
		})
	}
	return nil
}

// addLoop sets d[i] = a[i] + b[i]; a and b hold at least len(d) elements.
func addLoop[T elemType](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d[i] = a[i] + b[i]
		d[i+1] = a[i+1] + b[i+1]
		d[i+2] = a[i+2] + b[i+2]
		d[i+3] = a[i+3] + b[i+3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] + b[i]
	}
}

func cmpT[T elemType](kind string, _ int) rowFn {
	var loop func(d []uint8, a, b []T)
	switch kind {
	case OpEqual:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] == b[i])
			}
		}
	case OpNotEqual:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] != b[i])
			}
		}
	case OpLess:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] < b[i])
			}
		}
	case OpLessEq:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] <= b[i])
			}
		}
	case OpGreater:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] > b[i])
			}
		}
	case OpGreaterEq:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = b2u(a[i] >= b[i])
			}
		}
	default:
		return nil
	}
	return binRow(loop)
}

func notT[T elemType](string, int) rowFn {
	return unRow(func(d []uint8, a []T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = b2u(a[i] == 0)
		}
	})
}

func whereT[T elemType](string, int) rowFn {
	return func(dst []byte, in [][]byte) error {
		d, c, x, y := view[T](dst), in[0], view[T](in[1]), view[T](in[2])
		c, x, y = c[:len(d)], x[:len(d)], y[:len(d)]
		for i := range d {
			if c[i] != 0 {
				d[i] = x[i]
			} else {
				d[i] = y[i]
			}
		}
		return nil
	}
}

// boolOp holds the ops on bools, stored as 0/1 bytes: + is or, * is and.
func boolOp(kind string) rowFn {
	var loop func(d, a, b []uint8)
	switch kind {
	case OpAdd, OpMaximum, OpLogicalOr, OpBitOr:
		loop = func(d, a, b []uint8) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] | b[i]
			}
		}
	case OpMultiply, OpMinimum, OpLogicalAnd, OpBitAnd:
		loop = func(d, a, b []uint8) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] & b[i]
			}
		}
	case OpInvert:
		return unRow(func(d, a []uint8) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] ^ 1
			}
		})
	case OpAbs, OpFloor, OpCeil, OpRound:
		return unRow(func(d, a []uint8) { copy(d, a) })
	default:
		return nil
	}
	return binRow(loop)
}

// intT holds the ops whose integer form differs from the float one.
func intT[T intType](kind string, decimals int) rowFn {
	switch kind {
	case OpFloorDiv:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = floorDivInt(a[i], b[i])
			}
		})
	case OpMod:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = modInt(a[i], b[i])
			}
		})
	case OpPower:
		return func(dst []byte, in [][]byte) error {
			d, a, b := view[T](dst), view[T](in[0]), view[T](in[1])
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				if b[i] < 0 {
					return fmt.Errorf("integers to negative intType powers are not allowed")
				}
				d[i] = powInt(a[i], b[i])
			}
			return nil
		}
	case OpBitAnd:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] & b[i]
			}
		})
	case OpBitOr:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] | b[i]
			}
		})
	case OpInvert:
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = ^a[i]
			}
		})
	case OpAbs:
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i]
				if a[i] < 0 {
					d[i] = -a[i]
				}
			}
		})
	case OpSign:
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(b2u(a[i] > 0)) - T(b2u(a[i] < 0))
			}
		})
	case OpFloor, OpCeil:
		return unRow(func(d, a []T) { copy(d, a) })
	case OpRound:
		if decimals >= 0 {
			return unRow(func(d, a []T) { copy(d, a) })
		}
		f := T(1)
		for range -decimals {
			if f10 := f * 10; f10/10 == f {
				f = f10
				continue
			}
			// 10**-decimals exceeds T: every value rounds to 0.
			return unRow(func(d, a []T) { clear(d) })
		}
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = roundInt(a[i], f)
			}
		})
	}
	return nil
}

// floorDivInt is Python's a // b; division by zero gives 0 as in NumPy.
func floorDivInt[T intType](a, b T) T {
	if b == 0 {
		return 0
	}
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// modInt is Python's a % b (the sign of b); modulo zero gives 0 as in NumPy.
func modInt[T intType](a, b T) T {
	if b == 0 {
		return 0
	}
	r := a % b
	if r != 0 && ((r < 0) != (b < 0)) {
		r += b
	}
	return r
}

// powInt raises a to e >= 0 by squaring, wrapping on overflow as NumPy does.
func powInt[T intType](a, e T) T {
	r := T(1)
	for e > 0 {
		if e&1 != 0 {
			r *= a
		}
		a *= a
		e >>= 1
	}
	return r
}

// roundInt rounds a to a multiple of f, halves to the even multiple.
func roundInt[T intType](a, f T) T {
	r := modInt(a, f)
	q := a - r
	switch {
	case 2*r > f || (2*r == f && (q/f)%2 != 0):
		return q + f
	}
	return q
}

// floatT holds the float forms of the ops; math functions run in float64.
func floatT[T floatType](kind string, decimals int) rowFn {
	math1 := func(fn func(float64) float64) rowFn {
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(fn(float64(a[i])))
			}
		})
	}
	switch kind {
	case OpDivide:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] / b[i]
			}
		})
	case OpFloorDiv:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(floorDivFloat(float64(a[i]), float64(b[i])))
			}
		})
	case OpMod:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(modFloat(float64(a[i]), float64(b[i])))
			}
		})
	case OpPower:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(math.Pow(float64(a[i]), float64(b[i])))
			}
		})
	case OpAbs:
		return math1(math.Abs)
	case OpSqrt:
		return math1(math.Sqrt)
	case OpExp:
		return math1(math.Exp)
	case OpLog:
		return math1(math.Log)
	case OpLog1p:
		return math1(math.Log1p)
	case OpSin:
		return math1(math.Sin)
	case OpCos:
		return math1(math.Cos)
	case OpTan:
		return math1(math.Tan)
	case OpTanh:
		return math1(math.Tanh)
	case OpFloor:
		return math1(math.Floor)
	case OpCeil:
		return math1(math.Ceil)
	case OpSign:
		return math1(func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			case x == 0:
				return 0
			}
			return x // NaN
		})
	case OpRound:
		// As NumPy: scale by a power of ten in T, round half to even,
		// scale back.
		if decimals >= 0 {
			f := T(math.Pow(10, float64(decimals)))
			return unRow(func(d, a []T) {
				a = a[:len(d)]
				for i := range d {
					d[i] = T(math.RoundToEven(float64(a[i]*f))) / f
				}
			})
		}
		f := T(math.Pow(10, float64(-decimals)))
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(math.RoundToEven(float64(a[i]/f))) * f
			}
		})
	}
	return nil
}

// floorDivFloat is NumPy's float floor_divide: floor of the true quotient,
// computed from fmod so that a == b*q + mod(a, b) holds as closely as it can.
func floorDivFloat(a, b float64) float64 {
	if b == 0 {
		return a / b
	}
	m := math.Mod(a, b)
	div := (a - m) / b
	if m != 0 && (b < 0) != (m < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	fl := math.Floor(div)
	if div-fl > 0.5 {
		fl++
	}
	return fl
}

// modFloat is NumPy's float remainder: the result has the sign of b.
func modFloat(a, b float64) float64 {
	if b == 0 {
		return math.Mod(a, b)
	}
	m := math.Mod(a, b)
	if m != 0 {
		if (b < 0) != (m < 0) {
			m += b
		}
		return m
	}
	return math.Copysign(0, b)
}
