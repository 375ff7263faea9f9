package elem

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"marsfs/tensor"
)

func FillSlice[T any](d []T, v T) {
	for i := range d {
		d[i] = v
	}
}

// Float64Bytes views vals as bytes.
func Float64Bytes(vals []float64) []byte {
	if len(vals) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals)*8)
}

// A RowFn applies an op to one row: dst and every input hold the same number
// of elements.
type RowFn func(dst []byte, in [][]byte) error

// FillRepeat fills dst with copies of the element elem.
func FillRepeat(dst, elem []byte) {
	if len(dst) == 0 {
		return
	}
	n := copy(dst, elem)
	for n < len(dst) {
		n += copy(dst[n:], dst[:n])
	}
}

// The typed loops of the elementwise kernels. Each works on equal-length
// slices (dst first) and is instantiated per element type; bool data is
// handled as uint8 0/1 bytes.

type intType interface{ ~int32 | ~int64 | ~uint64 }

type FloatType interface{ ~float32 | ~float64 }

// ElemFunc returns the row function of op kind computing in ct and writing
// out, or an error when the op does not apply to the dtype.
func ElemFunc(kind string, ct, out tensor.DType, decimals, nin int) (RowFn, error) {
	want := 2
	switch {
	case kind == tensor.OpWhere:
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
	var f RowFn
	switch {
	case kind == tensor.OpAstype:
		f = func(dst []byte, in [][]byte) error {
			CastInto(&tensor.Array{DType: out, Data: dst}, &tensor.Array{DType: ct, Data: in[0]})
			return nil
		}
	case tensor.IsComparison(kind):
		f = byDType(ct, cmpT[uint8], cmpT[int32], cmpT[int64], cmpT[uint64], cmpT[float32], cmpT[float64])(kind, 0)
	case tensor.IsClassify(kind):
		f = byDType(ct, classifyT[uint8], classifyT[int32], classifyT[int64], classifyT[uint64], classifyT[float32], classifyT[float64])(kind, 0)
	case kind == tensor.OpLogicalNot:
		f = byDType(ct, notT[uint8], notT[int32], notT[int64], notT[uint64], notT[float32], notT[float64])(kind, 0)
	case kind == tensor.OpLogicalAnd || kind == tensor.OpLogicalOr:
		if ct == tensor.Bool {
			f = boolOp(kind)
		}
	case kind == tensor.OpWhere:
		f = byDType(ct, whereT[uint8], whereT[int32], whereT[int64], whereT[uint64], whereT[float32], whereT[float64])(kind, 0)
	case ct == tensor.Bool:
		f = boolOp(kind)
	default:
		f = byDType(ct, nil, mathI[int32], mathI[int64], mathI[uint64], mathF[float32], mathF[float64])(kind, 0)
		if f == nil {
			f = byDType(ct, nil, numT[int32], numT[int64], numT[uint64], numT[float32], numT[float64])(kind, decimals)
		}
		if f == nil {
			f = byDType(ct, nil, intT[int32], intT[int64], intT[uint64], floatT[float32], floatT[float64])(kind, decimals)
		}
	}
	if f == nil {
		return nil, fmt.Errorf("%s is not defined for %v", kind, ct)
	}
	writesBool := tensor.IsComparison(kind) || tensor.IsClassify(kind) || kind == tensor.OpLogicalNot || kind == tensor.OpLogicalAnd || kind == tensor.OpLogicalOr
	switch {
	case writesBool && out != tensor.Bool:
		return nil, fmt.Errorf("%s writes bool, not %v", kind, out)
	case !writesBool && kind != tensor.OpAstype && ct != out:
		return nil, fmt.Errorf("%s computes in %v but writes %v", kind, ct, out)
	}
	return f, nil
}

func isUnaryElem(kind string) bool {
	for _, op := range tensor.ElemUnaryOps {
		if op == kind {
			return true
		}
	}
	return false
}

type elemFamily func(kind string, decimals int) RowFn

// byDType picks the family member for ct (bool, or one of the dtypes
// kernels compute in; see tensor.DType.Compute); a nil member yields a nil
// rowFn.
func byDType(ct tensor.DType, u8, i32, i64, u64, f32, f64 elemFamily) elemFamily {
	var f elemFamily
	switch ct {
	case tensor.Bool:
		f = u8
	case tensor.Int32:
		f = i32
	case tensor.Int64:
		f = i64
	case tensor.Uint64:
		f = u64
	case tensor.Float32:
		f = f32
	case tensor.Float64:
		f = f64
	}
	if f == nil {
		return func(string, int) RowFn { return nil }
	}
	return f
}

func unRow[T, O ElemType](loop func(d []O, a []T)) RowFn {
	return func(dst []byte, in [][]byte) error {
		loop(tensor.View[O](dst), tensor.View[T](in[0]))
		return nil
	}
}

func binRow[T, O ElemType](loop func(d []O, a, b []T)) RowFn {
	return func(dst []byte, in [][]byte) error {
		loop(tensor.View[O](dst), tensor.View[T](in[0]), tensor.View[T](in[1]))
		return nil
	}
}

// numT holds the ops defined alike for every numeric type.
func numT[T ElemType](kind string, _ int) RowFn {
	switch kind {
	case tensor.OpAdd:
		return binRow(AddLoop[T])
	case tensor.OpSubtract:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] - b[i]
			}
		})
	case tensor.OpMultiply:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] * b[i]
			}
		})
	case tensor.OpMaximum:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = max(a[i], b[i])
			}
		})
	case tensor.OpMinimum:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = min(a[i], b[i])
			}
		})
	case tensor.OpNegative:
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = -a[i]
			}
		})
	}
	return nil
}

// AddLoop sets d[i] = a[i] + b[i]; a and b hold at least len(d) elements.
func AddLoop[T ElemType](d, a, b []T) {
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

func cmpT[T ElemType](kind string, _ int) RowFn {
	var loop func(d []uint8, a, b []T)
	switch kind {
	case tensor.OpEqual:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = B2u(a[i] == b[i])
			}
		}
	case tensor.OpNotEqual:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = B2u(a[i] != b[i])
			}
		}
	case tensor.OpLess:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = B2u(a[i] < b[i])
			}
		}
	case tensor.OpLessEq:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = B2u(a[i] <= b[i])
			}
		}
	case tensor.OpGreater:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = B2u(a[i] > b[i])
			}
		}
	case tensor.OpGreaterEq:
		loop = func(d []uint8, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = B2u(a[i] >= b[i])
			}
		}
	default:
		return nil
	}
	return binRow(loop)
}

func notT[T ElemType](string, int) RowFn {
	return unRow(func(d []uint8, a []T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = B2u(a[i] == 0)
		}
	})
}

func whereT[T ElemType](string, int) RowFn {
	var zero T
	switch unsafe.Sizeof(zero) {
	case 1:
		return whereRow[uint8]
	case 4:
		return whereRow[uint32]
	}
	return whereRow[uint64]
}

// whereRow picks by the bits alone, the same for every dtype of U's width,
// and without a branch: a condition drawn at random (a mask of random data)
// would mispredict half of them, which made where cost ten times the draw
// of the data it selects.
func whereRow[U uint8 | uint32 | uint64](dst []byte, in [][]byte) error {
	d, c, x, y := tensor.View[U](dst), in[0], tensor.View[U](in[1]), tensor.View[U](in[2])
	c, x, y = c[:len(d)], x[:len(d)], y[:len(d)]
	n := whereWide(int(unsafe.Sizeof(U(0))), dst, c, in[1], in[2])
	for i := n; i < len(d); i++ {
		m := U(0) - U(Truth(c[i])) // all ones or zero
		d[i] = x[i]&m | y[i]&^m
	}
	return nil
}

// Truth is 1 for a nonzero byte (a true bool, whatever its bits) and 0
// for zero, without a branch: c|-c has its top bit set exactly when
// c != 0. A branch on random data mispredicts half the time.
func Truth(c byte) int { return int((c | -c) >> 7) }

// boolOp holds the ops on bools, stored as 0/1 bytes: + is or, * is and.
func boolOp(kind string) RowFn {
	var loop func(d, a, b []uint8)
	switch kind {
	case tensor.OpAdd, tensor.OpMaximum, tensor.OpFmax, tensor.OpLogicalOr, tensor.OpBitOr:
		loop = func(d, a, b []uint8) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] | b[i]
			}
		}
	case tensor.OpMultiply, tensor.OpMinimum, tensor.OpFmin, tensor.OpLogicalAnd, tensor.OpBitAnd:
		loop = func(d, a, b []uint8) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] & b[i]
			}
		}
	case tensor.OpBitXor:
		loop = func(d, a, b []uint8) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] ^ b[i]
			}
		}
	case tensor.OpInvert:
		return unRow(func(d, a []uint8) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] ^ 1
			}
		})
	case tensor.OpAbs, tensor.OpFloor, tensor.OpCeil, tensor.OpRound:
		return unRow(func(d, a []uint8) { copy(d, a) })
	default:
		return nil
	}
	return binRow(loop)
}

// intT holds the ops whose integer form differs from the float one.
func intT[T intType](kind string, decimals int) RowFn {
	switch kind {
	case tensor.OpFloorDiv:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = floorDivInt(a[i], b[i])
			}
		})
	case tensor.OpMod:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = modInt(a[i], b[i])
			}
		})
	case tensor.OpPower:
		return func(dst []byte, in [][]byte) error {
			d, a, b := tensor.View[T](dst), tensor.View[T](in[0]), tensor.View[T](in[1])
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				if b[i] < 0 {
					return errNegativePower
				}
				d[i] = powInt(a[i], b[i])
			}
			return nil
		}
	case tensor.OpBitAnd:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] & b[i]
			}
		})
	case tensor.OpBitOr:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] | b[i]
			}
		})
	case tensor.OpInvert:
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = ^a[i]
			}
		})
	case tensor.OpAbs:
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i]
				if a[i] < 0 {
					d[i] = -a[i]
				}
			}
		})
	case tensor.OpSign:
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(B2u(a[i] > 0)) - T(B2u(a[i] < 0))
			}
		})
	case tensor.OpFloor, tensor.OpCeil:
		return unRow(func(d, a []T) { copy(d, a) })
	case tensor.OpRound:
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

// errWeightsZero is NumPy's refusal of average's weights summing to zero
// (a ZeroDivisionError).
var errWeightsZero = errors.New("Weights sum to zero, can't be normalized")

// errNegativePower is NumPy's refusal of an integer raised to a negative
// integer power.
var errNegativePower = errors.New("Integers to negative integer powers are not allowed.")

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
func floatT[T FloatType](kind string, decimals int) RowFn {
	math1 := func(fn func(float64) float64) RowFn {
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(fn(float64(a[i])))
			}
		})
	}
	switch kind {
	case tensor.OpDivide:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] / b[i]
			}
		})
	case tensor.OpFloorDiv:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(floorDivFloat(float64(a[i]), float64(b[i])))
			}
		})
	case tensor.OpMod:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(modFloat(float64(a[i]), float64(b[i])))
			}
		})
	case tensor.OpPower:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(math.Pow(float64(a[i]), float64(b[i])))
			}
		})
	case tensor.OpNormalize:
		return func(dst []byte, in [][]byte) error {
			d, a, b := tensor.View[T](dst), tensor.View[T](in[0]), tensor.View[T](in[1])
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				if b[i] == 0 {
					return errWeightsZero
				}
				d[i] = a[i] / b[i]
			}
			return nil
		}
	case tensor.OpAbs:
		return math1(math.Abs)
	case tensor.OpSqrt:
		return math1(math.Sqrt)
	case tensor.OpExp:
		return math1(math.Exp)
	case tensor.OpLog:
		return math1(math.Log)
	case tensor.OpLog1p:
		return math1(math.Log1p)
	case tensor.OpSin:
		return math1(math.Sin)
	case tensor.OpCos:
		return math1(math.Cos)
	case tensor.OpTan:
		return math1(math.Tan)
	case tensor.OpTanh:
		return math1(math.Tanh)
	case tensor.OpFloor:
		return math1(math.Floor)
	case tensor.OpCeil:
		return math1(math.Ceil)
	case tensor.OpSign:
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
	case tensor.OpRound:
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
