package tensor

import (
	"fmt"
	"math"
)

// DType is the element type of a tensor. The zero value is invalid.
type DType uint8

// The dtypes marsfs supports, in NumPy's spelling. Their numbers are
// stored (chunk segment headers, the wire, gob): new ones go at the end.
const (
	Bool DType = iota + 1
	Int32
	Int64
	Float32
	Float64
	Int8
	Int16
	Uint8
	Uint16
	Uint32
	Uint64
	Float16
	maxDType = Float16
)

var dtypeNames = [...]string{Bool: "bool", Int32: "int32", Int64: "int64", Float32: "float32", Float64: "float64",
	Int8: "int8", Int16: "int16", Uint8: "uint8", Uint16: "uint16", Uint32: "uint32", Uint64: "uint64", Float16: "float16"}

// DTypes lists every dtype, in the order of their numbers.
var DTypes = []DType{Bool, Int32, Int64, Float32, Float64, Int8, Int16, Uint8, Uint16, Uint32, Uint64, Float16}

// String returns NumPy's name for d ("float64").
func (d DType) String() string {
	if d.Valid() {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Valid reports whether d is one of the supported dtypes.
func (d DType) Valid() bool { return d >= Bool && d <= maxDType }

// Size is the number of bytes of one element.
func (d DType) Size() int {
	switch d {
	case Bool, Int8, Uint8:
		return 1
	case Int16, Uint16, Float16:
		return 2
	case Int32, Uint32, Float32:
		return 4
	case Int64, Uint64, Float64:
		return 8
	}
	return 0
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float16 || d == Float32 || d == Float64 }

// IsInt reports whether d is a signed integer type.
func (d DType) IsInt() bool { return d == Int8 || d == Int16 || d == Int32 || d == Int64 }

// IsUint reports whether d is an unsigned integer type.
func (d DType) IsUint() bool { return d == Uint8 || d == Uint16 || d == Uint32 || d == Uint64 }

// IsInteger reports whether d is an integer type, signed or not.
func (d DType) IsInteger() bool { return d.IsInt() || d.IsUint() }

// ParseDType returns the dtype NumPy spells name ("float64", "f8", "int",
// "float", "bool", "uint8", "u1", "half").
func ParseDType(name string) (DType, error) {
	switch name {
	case "bool", "bool_", "?":
		return Bool, nil
	case "int8", "i1", "byte":
		return Int8, nil
	case "int16", "i2", "short":
		return Int16, nil
	case "int32", "i4", "intc":
		return Int32, nil
	case "int64", "i8", "int", "int_", "long", "longlong":
		return Int64, nil
	case "uint8", "u1", "ubyte":
		return Uint8, nil
	case "uint16", "u2", "ushort":
		return Uint16, nil
	case "uint32", "u4", "uintc":
		return Uint32, nil
	case "uint64", "u8", "uint", "ulonglong":
		return Uint64, nil
	case "float16", "f2", "half":
		return Float16, nil
	case "float32", "f4", "single":
		return Float32, nil
	case "float64", "f8", "float", "double", "float_":
		return Float64, nil
	}
	return 0, fmt.Errorf("unknown dtype %q", name)
}

// NPYDescr is the dtype's descr in a .npy header ("<f8", "|b1").
func (d DType) NPYDescr() string {
	switch d {
	case Bool:
		return "|b1"
	case Int8:
		return "|i1"
	case Uint8:
		return "|u1"
	}
	if !d.Valid() {
		return ""
	}
	kind := "i"
	switch {
	case d.IsUint():
		kind = "u"
	case d.IsFloat():
		kind = "f"
	}
	return fmt.Sprintf("<%s%d", kind, d.Size())
}

// Compute is the dtype a kernel that lacks d computes d in, exactly as
// NumPy does: integers narrower than 32 bits in int32 (their arithmetic
// wraps the same once narrowed back), uint32 in int64, float16 in float32
// (NumPy's float16 loops compute in float32 and round each result). The
// dtypes every kernel has give themselves, uint64 included.
func (d DType) Compute() DType {
	switch d {
	case Int8, Int16, Uint8, Uint16:
		return Int32
	case Uint32:
		return Int64
	case Float16:
		return Float32
	}
	return d
}

// Promote returns the dtype NumPy gives the result of a binary operation on
// arrays of dtypes a and b (numpy.result_type for two arrays).
func Promote(a, b DType) DType {
	switch {
	case a == b || b == Bool:
		return a
	case a == Bool:
		return b
	case a.IsFloat() && b.IsFloat():
		return widest(a, b)
	case a.IsFloat() || b.IsFloat():
		if b.IsFloat() {
			a, b = b, a
		}
		// A float that holds the integer b's every value.
		need := Float64
		switch b.Size() {
		case 1:
			need = Float16
		case 2:
			need = Float32
		}
		return widest(a, need)
	case a.IsInt() == b.IsInt(): // both signed, or both unsigned
		return widest(a, b)
	}
	if a.IsUint() {
		a, b = b, a
	}
	// a signed, b unsigned.
	switch {
	case b.Size() < a.Size():
		return a
	case b == Uint64:
		return Float64
	}
	return signedOfSize(2 * b.Size())
}

// widest is the larger of two dtypes of one kind.
func widest(a, b DType) DType {
	if b.Size() > a.Size() {
		return b
	}
	return a
}

func signedOfSize(n int) DType {
	switch n {
	case 1:
		return Int8
	case 2:
		return Int16
	case 4:
		return Int32
	}
	return Int64
}

// IntRange is the least and the greatest value of the integer dtype d
// that an int64 holds (uint64's greatest is beyond it: its range here
// stops at math.MaxInt64).
func (d DType) IntRange() (lo, hi int64) {
	switch d {
	case Bool:
		return 0, 1
	case Int8:
		return math.MinInt8, math.MaxInt8
	case Int16:
		return math.MinInt16, math.MaxInt16
	case Int32:
		return math.MinInt32, math.MaxInt32
	case Uint8:
		return 0, math.MaxUint8
	case Uint16:
		return 0, math.MaxUint16
	case Uint32:
		return 0, math.MaxUint32
	case Uint64:
		return 0, math.MaxInt64
	}
	return math.MinInt64, math.MaxInt64
}
