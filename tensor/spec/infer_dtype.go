package spec

import (
	"fmt"
	"math"

	"marsfs/tensor"
)

// Dtype promotion with NumPy 1.24's value-based casting for Python scalars.
//
// A Python literal (a Weak OpScalar) that meets arrays of at least one
// dimension and is of no higher kind (bool < integer < float) than they are
// takes part in promotion as the smallest type that holds its value, so
// int32 array + 1 stays int32 but int32 array + 2**40 is int64, and float32
// array + 70000 is float64 (70000 needs uint32, which float32 cannot hold).
// Otherwise every operand counts by its dtype, literals as int64, float64 or
// bool. 0-d tensors computed by the graph (a reduction's result, say) count
// by their dtype too: NumPy would look at their values, which are not known
// when a spec is parsed.

// kind orders dtypes as NumPy's value-based casting does.
func kind(d tensor.DType) int {
	switch {
	case d == tensor.Bool:
		return 0
	case d.IsInteger():
		return 1
	}
	return 2
}

// xtype is a NumPy dtype beyond the ones marsfs stores: the smallest type of
// a scalar literal may be uint8, int16, float16, ... Kinds: 0 bool,
// 1 unsigned, 2 signed, 3 float.
//
// small marks an unsigned type whose value also fits the signed type of its
// size: NumPy then promotes it with signed integers as that signed type
// (int32 array + 2**31-1 stays int32).
type xtype struct {
	kind, bits int
	small      bool
}

func xtypeOf(d tensor.DType) xtype {
	k := 3
	switch {
	case d == tensor.Bool:
		k = 0
	case d.IsUint():
		k = 1
	case d.IsInt():
		k = 2
	}
	return xtype{kind: k, bits: 8 * d.Size()}
}

// dtype maps x back to a stored dtype. Every NumPy type a promotion can
// give is one.
func (x xtype) dtype() (tensor.DType, bool) {
	for _, d := range tensor.DTypes {
		if xtypeOf(d) == (xtype{kind: x.kind, bits: x.bits}) {
			return d, true
		}
	}
	return 0, false
}

func promoteX(a, b xtype) xtype {
	if a.kind > b.kind {
		a, b = b, a
	}
	if a.kind == 1 && a.small && b.kind == 2 {
		a = xtype{kind: 2, bits: a.bits}
	}
	a.small, b.small = false, false
	switch {
	case a.kind == 0:
		return b
	case a.kind == b.kind:
		return xtype{kind: a.kind, bits: max(a.bits, b.bits)}
	case b.kind == 3: // a float and an integer
		need := 64
		switch a.bits {
		case 8:
			need = 16
		case 16:
			need = 32
		}
		return xtype{kind: 3, bits: max(b.bits, need)}
	default: // unsigned a, signed b
		if a.bits < b.bits {
			return b
		}
		if a.bits == 64 {
			return xtype{kind: 3, bits: 64}
		}
		return xtype{kind: 2, bits: 2 * a.bits}
	}
}

// minScalarType is numpy.min_scalar_type of a literal's value.
func minScalarType(n *Node) xtype {
	switch n.DType {
	case tensor.Bool:
		return xtype{kind: 0, bits: 8}
	case tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Uint64:
		v := n.Attrs.IntValue
		if v >= 0 {
			switch {
			case v <= math.MaxUint8:
				return xtype{1, 8, v <= math.MaxInt8}
			case v <= math.MaxUint16:
				return xtype{1, 16, v <= math.MaxInt16}
			case v <= math.MaxUint32:
				return xtype{1, 32, v <= math.MaxInt32}
			}
			return xtype{kind: 2, bits: 64}
		}
		switch {
		case v >= math.MinInt8:
			return xtype{kind: 2, bits: 8}
		case v >= math.MinInt16:
			return xtype{kind: 2, bits: 16}
		case v >= math.MinInt32:
			return xtype{kind: 2, bits: 32}
		}
		return xtype{kind: 2, bits: 64}
	}
	v := math.Abs(n.Attrs.Value)
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v) || v <= 65504:
		return xtype{kind: 3, bits: 16}
	case v <= math.MaxFloat32:
		return xtype{kind: 3, bits: 32}
	}
	return xtype{kind: 3, bits: 64}
}

// ResultType is numpy.result_type of the operands of an elementwise op.
func ResultType(ops ...*Node) (tensor.DType, error) {
	arrayKind, scalarKind := -1, -1
	for _, n := range ops {
		if n.Weak || len(n.Shape) == 0 {
			scalarKind = max(scalarKind, kind(n.DType))
		} else {
			arrayKind = max(arrayKind, kind(n.DType))
		}
	}
	valueBased := arrayKind >= 0 && scalarKind >= 0 && scalarKind <= arrayKind
	var r xtype
	for i, n := range ops {
		x := xtypeOf(n.DType)
		if valueBased && n.Weak {
			x = minScalarType(n)
		}
		if i == 0 {
			r = x
		} else {
			r = promoteX(r, x)
		}
	}
	d, ok := r.dtype()
	if !ok {
		return 0, fmt.Errorf("operands promote to a dtype marsfs does not support")
	}
	return d, nil
}

// unaryFloatOps are the ufuncs that compute in floating point: bool and
// integers give the smallest float that holds them (bool, int8 and uint8
// float16; int16 and uint16 float32; the others float64).
var unaryFloatOps = map[string]bool{
	tensor.OpSqrt: true, tensor.OpExp: true, tensor.OpLog: true, tensor.OpLog1p: true, tensor.OpSin: true,
	tensor.OpCos: true, tensor.OpTan: true, tensor.OpTanh: true, tensor.OpFloor: true, tensor.OpCeil: true,
	tensor.OpCbrt: true, tensor.OpLog2: true, tensor.OpLog10: true, tensor.OpExp2: true, tensor.OpArcsin: true,
	tensor.OpArccos: true, tensor.OpArctan: true, tensor.OpExpm1: true, tensor.OpSinh: true, tensor.OpCosh: true,
	tensor.OpArcsinh: true, tensor.OpArccosh: true, tensor.OpArctanh: true, tensor.OpDeg2rad: true, tensor.OpRad2deg: true,
}

// unaryType is the dtype of a one-input elementwise op on x.
func unaryType(op string, x tensor.DType) (tensor.DType, error) {
	switch {
	case unaryFloatOps[op]:
		if !x.IsFloat() {
			return tensor.Promote(x, tensor.Float16), nil
		}
		return x, nil
	case op == tensor.OpRound || op == tensor.OpSign:
		if x == tensor.Bool {
			if op == tensor.OpSign {
				return 0, fmt.Errorf("ufunc 'sign' does not support bool arrays")
			}
			return tensor.Float16, nil
		}
		return x, nil
	case op == tensor.OpNegative:
		if x == tensor.Bool {
			return 0, fmt.Errorf("the numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead")
		}
		return x, nil
	case op == tensor.OpAbs:
		return x, nil
	case op == tensor.OpLogicalNot || tensor.IsClassify(op):
		return tensor.Bool, nil
	case op == tensor.OpInvert:
		if x.IsFloat() {
			return 0, fmt.Errorf("ufunc 'invert' not supported for %s", x)
		}
		return x, nil
	}
	return 0, fmt.Errorf("%s is not a one-input elementwise op", op)
}

// binaryType is the dtype of a two-input elementwise op on x and y.
func binaryType(op string, x, y *Node) (tensor.DType, error) {
	r, err := ResultType(x, y)
	if err != nil {
		return 0, err
	}
	switch op {
	case tensor.OpEqual, tensor.OpNotEqual, tensor.OpLess, tensor.OpLessEq, tensor.OpGreater, tensor.OpGreaterEq, tensor.OpLogicalAnd, tensor.OpLogicalOr:
		return tensor.Bool, nil
	case tensor.OpAdd, tensor.OpMultiply, tensor.OpMaximum, tensor.OpMinimum, tensor.OpFmax, tensor.OpFmin:
		return r, nil
	case tensor.OpArctan2, tensor.OpHypot, tensor.OpLogaddexp, tensor.OpLogaddexp2, tensor.OpCopysign:
		if !r.IsFloat() {
			return tensor.Promote(r, tensor.Float16), nil
		}
		return r, nil
	case tensor.OpSubtract:
		if r == tensor.Bool {
			return 0, fmt.Errorf("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead")
		}
		return r, nil
	case tensor.OpDivide, tensor.OpNormalize:
		if !r.IsFloat() {
			return tensor.Float64, nil
		}
		return r, nil
	case tensor.OpLdexp:
		// NumPy's loops take the mantissa's float and an integer exponent.
		if !y.DType.IsInteger() && y.DType != tensor.Bool {
			return 0, fmt.Errorf("ufunc 'ldexp' not supported for the input types %s and %s", x.DType, y.DType)
		}
		if !x.DType.IsFloat() {
			return tensor.Promote(x.DType, tensor.Float16), nil
		}
		return x.DType, nil
	case tensor.OpFloorDiv, tensor.OpMod, tensor.OpPower, tensor.OpFmod:
		if r == tensor.Bool {
			return tensor.Int8, nil // NumPy's loops for two bools
		}
		if op == tensor.OpPower && r.IsInteger() && y.Op == tensor.OpScalar && y.DType.IsInteger() && y.Attrs.IntValue < 0 {
			return 0, fmt.Errorf("Integers to negative integer powers are not allowed.")
		}
		return r, nil
	case tensor.OpBitAnd, tensor.OpBitOr, tensor.OpBitXor:
		if r.IsFloat() {
			return 0, fmt.Errorf("ufunc '%s' not supported for the input types %s and %s", op, x.DType, y.DType)
		}
		return r, nil
	}
	return 0, fmt.Errorf("%s is not a two-input elementwise op", op)
}

// ReduceType is the dtype of a reduction of an x array.
func ReduceType(op string, x tensor.DType) tensor.DType {
	switch op {
	case tensor.OpSum, tensor.OpProd, tensor.OpNansum, tensor.OpCumsum, tensor.OpCumprod:
		// Integers accumulate in the platform's integers, unsigned ones
		// unsigned.
		if x.IsUint() {
			return tensor.Uint64
		}
		if !x.IsFloat() {
			return tensor.Int64
		}
	case tensor.OpMean, tensor.OpVar, tensor.OpStd, tensor.OpNanmean:
		if !x.IsFloat() {
			return tensor.Float64
		}
	case tensor.OpArgmin, tensor.OpArgmax, tensor.OpCountNonzero:
		return tensor.Int64
	case tensor.OpAny, tensor.OpAll:
		return tensor.Bool
	}
	return x
}
