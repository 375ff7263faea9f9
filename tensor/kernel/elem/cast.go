package elem

import (
	"math"

	"marsfs/tensor"
)

// Casting between dtypes, as NumPy's astype with unsafe casting. The
// elementwise kernels cast their inputs to the compute dtype with these, and
// the reductions and scans cast to their accumulator dtype.

// CastArray returns a converted to dt (a itself when it already is dt).
func CastArray(a *tensor.Array, dt tensor.DType) *tensor.Array {
	if a.DType == dt {
		return a
	}
	out := tensor.NewArray(dt, a.Shape)
	CastInto(out, a)
	return out
}

// CastInto converts src's elements into dst (same length), as NumPy's astype
// with unsafe casting: floats truncate toward zero, NaN and out-of-range
// values become the integer type's minimum (as on x86), bool is "nonzero".
func CastInto(dst, src *tensor.Array) {
	switch dst.DType {
	case tensor.Bool:
		castToBool(dst.Data, src)
	case tensor.Int32:
		castTo(dst.Int32s(), src, floatToInt32)
	case tensor.Int64:
		castTo(dst.Int64s(), src, floatToInt64)
	case tensor.Float32:
		castTo(dst.Float32s(), src, func(f float64) float32 { return float32(f) })
	case tensor.Float64:
		castTo(dst.Float64s(), src, func(f float64) float64 { return f })
	}
}

func floatToInt64(f float64) int64 {
	if !(f > -9223372036854775808.0-1025 && f < 9223372036854775808.0) {
		return math.MinInt64
	}
	return int64(f)
}

func floatToInt32(f float64) int32 {
	if !(f > math.MinInt32-1 && f < math.MaxInt32+1) {
		return math.MinInt32
	}
	return int32(f)
}

type ElemType interface {
	~uint8 | ~int32 | ~int64 | ~float32 | ~float64
}

func castSlice[D, S ElemType](dst []D, src []S) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = D(v)
	}
}

// castTo converts src into dst; fromFloat converts a float64 source value
// (used for float sources, where Go's conversion is not NumPy's).
func castTo[D int32 | int64 | float32 | float64](dst []D, src *tensor.Array, fromFloat func(float64) D) {
	switch src.DType {
	case tensor.Bool:
		castSlice(dst, tensor.View[uint8](src.Data))
	case tensor.Int32:
		castSlice(dst, src.Int32s())
	case tensor.Int64:
		castSlice(dst, src.Int64s())
	case tensor.Float32:
		s := src.Float32s()[:len(dst)]
		for i, v := range s {
			dst[i] = fromFloat(float64(v))
		}
	case tensor.Float64:
		s := src.Float64s()[:len(dst)]
		for i, v := range s {
			dst[i] = fromFloat(v)
		}
	}
}

func nonzeroSlice[T ElemType](dst []uint8, src []T) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = B2u(v != 0)
	}
}

func castToBool(dst []byte, src *tensor.Array) {
	switch src.DType {
	case tensor.Bool:
		copy(dst, src.Data)
	case tensor.Int32:
		nonzeroSlice(dst, src.Int32s())
	case tensor.Int64:
		nonzeroSlice(dst, src.Int64s())
	case tensor.Float32:
		nonzeroSlice(dst, src.Float32s())
	case tensor.Float64:
		nonzeroSlice(dst, src.Float64s())
	}
}

// B2u is 1 for true, 0 for false; the compiler makes it a SETcc.
func B2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
