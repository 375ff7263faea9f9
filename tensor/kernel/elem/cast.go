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
// with unsafe casting on x86-64: floats truncate toward zero; NaN and
// out-of-range floats become what the processor's conversion gives (the
// minimum of int32 and int64, that value's low bits for narrower integers,
// 2^63 for uint64); integers wrap to narrower ones; bool is "nonzero";
// float16 rounds to nearest, ties to even.
func CastInto(dst, src *tensor.Array) {
	if src.DType == tensor.Float16 {
		// Halves widen to float32 exactly, then cast like it.
		wide := tensor.NewArray(tensor.Float32, []int{len(src.Data) / 2})
		HalvesToFloat32(wide.Float32s(), src.Halves())
		src = wide
	}
	switch dst.DType {
	case tensor.Bool:
		castToBool(dst.Data, src)
	case tensor.Int8:
		castTo(dst.Int8s(), src, func(f float64) int8 { return int8(floatToInt32(f)) })
	case tensor.Int16:
		castTo(dst.Int16s(), src, func(f float64) int16 { return int16(floatToInt32(f)) })
	case tensor.Int32:
		castTo(dst.Int32s(), src, floatToInt32)
	case tensor.Int64:
		castTo(dst.Int64s(), src, floatToInt64)
	case tensor.Uint8:
		castTo(dst.Uint8s(), src, func(f float64) uint8 { return uint8(floatToInt32(f)) })
	case tensor.Uint16:
		castTo(dst.Uint16s(), src, func(f float64) uint16 { return uint16(floatToInt32(f)) })
	case tensor.Uint32:
		castTo(dst.Uint32s(), src, func(f float64) uint32 { return uint32(floatToInt64(f)) })
	case tensor.Uint64:
		castTo(dst.Uint64s(), src, floatToUint64)
	case tensor.Float16:
		h := dst.Halves()
		if src.DType == tensor.Float32 {
			Float32ToHalves(h, src.Float32s())
			return
		}
		wide := make([]float64, len(h))
		castTo(wide, src, func(f float64) float64 { return f })
		for i, v := range wide {
			h[i] = tensor.HalfFromFloat64(v)
		}
	case tensor.Float32:
		castTo(dst.Float32s(), src, func(f float64) float32 { return float32(f) })
	case tensor.Float64:
		if src.DType == tensor.Float32 {
			WidenFloat32(dst.Float64s(), src.Float32s())
			break
		}
		castTo(dst.Float64s(), src, func(f float64) float64 { return f })
	}
}

// HalvesToFloat32 widens halves to float32, exactly.
func HalvesToFloat32(dst []float32, src []tensor.Half) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = h.Float32()
	}
}

// Float32ToHalves rounds float32 values to halves.
func Float32ToHalves(dst []tensor.Half, src []float32) {
	src = src[:len(dst)]
	for i, f := range src {
		dst[i] = tensor.HalfFromFloat32(f)
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

// floatToUint64 is x86-64's conversion as compilers emit it for a double
// to uint64: values of 2^63 and up through a subtraction, negative ones
// through int64 (so they wrap), NaN and out-of-range ones 2^63.
func floatToUint64(f float64) uint64 {
	switch {
	case f >= 9223372036854775808.0 && f < 18446744073709551616.0:
		return uint64(f-9223372036854775808.0) | 1<<63
	case f > -9223372036854775808.0-1025 && f < 9223372036854775808.0:
		return uint64(int64(f))
	}
	return 1 << 63
}

// ElemType is every Go type a dtype's elements are (bool as uint8 0 or 1;
// float16 has its own, tensor.Half, which kernels widen to float32).
type ElemType interface {
	~uint8 | ~int8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

func castSlice[D, S ElemType](dst []D, src []S) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = D(v)
	}
}

// castTo converts src (of no float16) into dst; fromFloat converts a
// float64 source value (used for float sources, where Go's conversion is
// not NumPy's).
func castTo[D ElemType](dst []D, src *tensor.Array, fromFloat func(float64) D) {
	switch src.DType {
	case tensor.Bool, tensor.Uint8:
		castSlice(dst, src.Data)
	case tensor.Int8:
		castSlice(dst, src.Int8s())
	case tensor.Int16:
		castSlice(dst, src.Int16s())
	case tensor.Uint16:
		castSlice(dst, src.Uint16s())
	case tensor.Int32:
		castSlice(dst, src.Int32s())
	case tensor.Uint32:
		castSlice(dst, src.Uint32s())
	case tensor.Int64:
		castSlice(dst, src.Int64s())
	case tensor.Uint64:
		castSlice(dst, src.Uint64s())
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
	case tensor.Bool, tensor.Uint8:
		nonzeroSlice(dst, src.Data)
	case tensor.Int8:
		nonzeroSlice(dst, src.Int8s())
	case tensor.Int16:
		nonzeroSlice(dst, src.Int16s())
	case tensor.Uint16:
		nonzeroSlice(dst, src.Uint16s())
	case tensor.Int32:
		nonzeroSlice(dst, src.Int32s())
	case tensor.Uint32:
		nonzeroSlice(dst, src.Uint32s())
	case tensor.Int64:
		nonzeroSlice(dst, src.Int64s())
	case tensor.Uint64:
		nonzeroSlice(dst, src.Uint64s())
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
