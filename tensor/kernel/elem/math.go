package elem

import (
	"math"

	"marsfs/tensor"
)

// The row functions of the ops of tensor/ops_math.go.

// mathFloat returns the float form of a math op of ops_math.go, or nil.
// Every function runs in float64, as floatT's do; float32 results are the
// float64 ones rounded, within an ulp of NumPy's float32 loops.
func mathFloat[T FloatType](kind string) RowFn {
	un := func(fn func(float64) float64) RowFn {
		return unRow(func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(fn(float64(a[i])))
			}
		})
	}
	bin := func(fn func(x, y float64) float64) RowFn {
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = T(fn(float64(a[i]), float64(b[i])))
			}
		})
	}
	switch kind {
	case tensor.OpCbrt:
		return un(math.Cbrt)
	case tensor.OpLog2:
		return un(math.Log2)
	case tensor.OpLog10:
		return un(math.Log10)
	case tensor.OpExp2:
		return un(math.Exp2)
	case tensor.OpArcsin:
		return un(math.Asin)
	case tensor.OpArccos:
		return un(math.Acos)
	case tensor.OpArctan:
		return un(math.Atan)
	case tensor.OpExpm1:
		return un(math.Expm1)
	case tensor.OpSinh:
		return un(math.Sinh)
	case tensor.OpCosh:
		return un(math.Cosh)
	case tensor.OpArcsinh:
		return un(math.Asinh)
	case tensor.OpArccosh:
		return un(math.Acosh)
	case tensor.OpArctanh:
		return un(math.Atanh)
	case tensor.OpDeg2rad:
		return un(func(x float64) float64 { return x * (math.Pi / 180) })
	case tensor.OpRad2deg:
		return un(func(x float64) float64 { return x * (180 / math.Pi) })
	case tensor.OpLogaddexp:
		return bin(logaddexp)
	case tensor.OpLogaddexp2:
		return bin(logaddexp2)
	case tensor.OpCopysign:
		return bin(math.Copysign)
	case tensor.OpFmod:
		return bin(math.Mod)
	case tensor.OpLdexp:
		return bin(func(x, e float64) float64 {
			// Past ±2100 every float overflows or underflows alike.
			return math.Ldexp(x, int(max(min(e, 2100), -2100)))
		})
	case tensor.OpArctan2:
		return bin(math.Atan2)
	case tensor.OpHypot:
		return bin(math.Hypot)
	case tensor.OpFmax:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				// NaN only when both are: a NaN operand gives the other.
				switch x, y := a[i], b[i]; {
				case x != x:
					d[i] = y
				case y != y || x >= y:
					d[i] = x
				default:
					d[i] = y
				}
			}
		})
	case tensor.OpFmin:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				switch x, y := a[i], b[i]; {
				case x != x:
					d[i] = y
				case y != y || x <= y:
					d[i] = x
				default:
					d[i] = y
				}
			}
		})
	}
	return nil
}

// logaddexp is NumPy's npy_logaddexp: log(exp(x) + exp(y)) from the larger
// of the two, so that neither overflows; equal infinities give themselves.
func logaddexp(x, y float64) float64 {
	if x == y {
		return x + math.Ln2
	}
	switch d := x - y; {
	case d > 0:
		return x + math.Log1p(math.Exp(-d))
	case d <= 0:
		return y + math.Log1p(math.Exp(d))
	default:
		return d // NaN
	}
}

// logaddexp2 is logaddexp in base 2 (NumPy's npy_logaddexp2).
func logaddexp2(x, y float64) float64 {
	if x == y {
		return x + 1
	}
	switch d := x - y; {
	case d > 0:
		return x + math.Log1p(math.Exp2(-d))*math.Log2E
	case d <= 0:
		return y + math.Log1p(math.Exp2(d))*math.Log2E
	default:
		return d
	}
}

// mathInt returns the integer form of fmax and fmin (max and min: integers
// have no NaN), fmod and ^, or nil.
func mathInt[T intType](kind string) RowFn {
	switch kind {
	case tensor.OpFmod:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				// Go's % truncates as C's does; by 0 NumPy gives 0.
				if b[i] == 0 {
					d[i] = 0
					continue
				}
				d[i] = a[i] % b[i]
			}
		})
	case tensor.OpBitXor:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] ^ b[i]
			}
		})
	case tensor.OpFmax:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = max(a[i], b[i])
			}
		})
	case tensor.OpFmin:
		return binRow(func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = min(a[i], b[i])
			}
		})
	}
	return nil
}

// classifyT is isnan, isinf or isfinite of a T row, written as bool bytes.
func classifyT[T ElemType](kind string, _ int) RowFn {
	var test func(float64) bool
	switch kind {
	case tensor.OpIsnan:
		test = math.IsNaN
	case tensor.OpIsinf:
		test = func(x float64) bool { return math.IsInf(x, 0) }
	case tensor.OpIsfinite:
		test = func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	case tensor.OpSignbit:
		test = math.Signbit
	default:
		return nil
	}
	return unRow(func(d []uint8, a []T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = B2u(test(float64(a[i])))
		}
	})
}

func mathF[T FloatType](kind string, _ int) RowFn { return mathFloat[T](kind) }

func mathI[T intType](kind string, _ int) RowFn { return mathInt[T](kind) }
