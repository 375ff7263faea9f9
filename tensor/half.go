package tensor

import "math"

// Half is an IEEE 754 half-precision number (NumPy's float16), as its bits.
// Go has no float16: kernels compute halves in float32 and round each
// result back, as NumPy's float16 loops do.
type Half uint16

// Float32 returns h exactly.
func (h Half) Float32() float32 {
	sign := uint32(h>>15) << 31
	exp := int(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, nan
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0:
		// Zero or subnormal: frac × 2^-24, exact in float32.
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | frac<<13)
}

// HalfFromFloat64 rounds f to the nearest half, ties to even, as NumPy's
// npy_double_to_half does (directly: rounding through float32 first could
// round twice).
func HalfFromFloat64(f float64) Half {
	b := math.Float64bits(f)
	sign := Half(b>>48) & 0x8000
	exp := int(b>>52) & 0x7ff
	frac := b & (1<<52 - 1)
	switch {
	case exp == 0x7ff: // inf, nan (kept a nan)
		if frac == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | Half(frac>>42)
	case exp == 0 && frac == 0:
		return sign
	}
	e := exp - 1023 // unbiased
	if e >= 16 {
		return sign | 0x7c00 // overflow: inf
	}
	// The significand with its implicit bit, 53 bits.
	m := frac | 1<<52
	var shift int
	var bias int
	if e >= -14 {
		// Normal: keep 11 bits of m.
		shift = 42
		bias = e + 15
	} else {
		// Subnormal: the value is m × 2^(e-52); in units of 2^-24.
		shift = 42 + (-14 - e)
		bias = 0
		if shift > 63 {
			return sign // rounds to zero
		}
	}
	q := m >> uint(shift)
	rem := m & (1<<uint(shift) - 1)
	half := uint64(1) << uint(shift-1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	if bias == 0 {
		// Subnormal (q may have rounded up to the smallest normal,
		// 0x400, which the encoding below gives).
		return sign | Half(q)
	}
	if q == 1<<11 { // rounded up past the significand: next binade
		q >>= 1
		bias++
	}
	if bias >= 31 {
		return sign | 0x7c00
	}
	return sign | Half(bias)<<10 | Half(q&0x3ff)
}

// HalfFromFloat32 rounds f to the nearest half, ties to even (exact from
// float32 to float64, then one rounding).
func HalfFromFloat32(f float32) Half { return HalfFromFloat64(float64(f)) }
