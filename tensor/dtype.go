package tensor

import (
	"fmt"
)

// DType is the element type of a tensor. The zero value is invalid.
type DType uint8

// The dtypes marsfs supports, in NumPy's spelling.
const (
	Bool DType = iota + 1
	Int32
	Int64
	Float32
	Float64
)

var dtypeNames = [...]string{Bool: "bool", Int32: "int32", Int64: "int64", Float32: "float32", Float64: "float64"}

// String returns NumPy's name for d ("float64").
func (d DType) String() string {
	if d.Valid() {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Valid reports whether d is one of the supported dtypes.
func (d DType) Valid() bool { return d >= Bool && d <= Float64 }

// Size is the number of bytes of one element.
func (d DType) Size() int {
	switch d {
	case Bool:
		return 1
	case Int32, Float32:
		return 4
	case Int64, Float64:
		return 8
	}
	return 0
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

// IsInt reports whether d is a (signed) integer type.
func (d DType) IsInt() bool { return d == Int32 || d == Int64 }

// ParseDType returns the dtype NumPy spells name ("float64", "f8", "int", "float", "bool").
func ParseDType(name string) (DType, error) {
	switch name {
	case "bool", "bool_", "?":
		return Bool, nil
	case "int32", "i4":
		return Int32, nil
	case "int64", "i8", "int":
		return Int64, nil
	case "float32", "f4":
		return Float32, nil
	case "float64", "f8", "float", "double":
		return Float64, nil
	}
	return 0, fmt.Errorf("unknown dtype %q", name)
}

// NPYDescr is the dtype's descr in a .npy header ("<f8", "|b1").
func (d DType) NPYDescr() string {
	switch d {
	case Bool:
		return "|b1"
	case Int32:
		return "<i4"
	case Int64:
		return "<i8"
	case Float32:
		return "<f4"
	case Float64:
		return "<f8"
	}
	return ""
}

// Promote returns the dtype NumPy gives the result of a binary operation on
// arrays of dtypes a and b (numpy.result_type for two arrays).
func Promote(a, b DType) DType {
	if a == b {
		return a
	}
	if a > b {
		a, b = b, a
	}
	// Now a < b in the order Bool, Int32, Int64, Float32, Float64.
	// Neither int32 nor int64 fits exactly in float32.
	if a.IsInt() && b == Float32 {
		return Float64
	}
	return b
}
