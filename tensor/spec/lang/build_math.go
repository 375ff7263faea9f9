package lang

import (
	"marsfs/tensor/spec"
	"math"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// The elementwise math a NumPy user reaches for beyond the basic ufuncs.
// The ufuncs (cbrt, arctan2, isnan, fmax, ...) are ops of their own, so
// they tile, fuse and run like add; nan_to_num, isclose and allclose lower
// onto them and where, exactly as NumPy 1.24 composes them, so that a
// chain of them fuses into one expression program.

// mathUnary and mathBinary map the new ufuncs to their ops.
var (
	mathUnary = map[string]string{
		"cbrt": tensor.OpCbrt, "log2": tensor.OpLog2, "log10": tensor.OpLog10, "exp2": tensor.OpExp2,
		"arcsin": tensor.OpArcsin, "arccos": tensor.OpArccos, "arctan": tensor.OpArctan,
		"isnan": tensor.OpIsnan, "isinf": tensor.OpIsinf, "isfinite": tensor.OpIsfinite,
		"expm1": tensor.OpExpm1, "sinh": tensor.OpSinh, "cosh": tensor.OpCosh, "arcsinh": tensor.OpArcsinh,
		"arccosh": tensor.OpArccosh, "arctanh": tensor.OpArctanh, "deg2rad": tensor.OpDeg2rad, "radians": tensor.OpDeg2rad,
		"rad2deg": tensor.OpRad2deg, "degrees": tensor.OpRad2deg, "signbit": tensor.OpSignbit,
	}
	mathBinary = map[string]string{
		"arctan2": tensor.OpArctan2, "hypot": tensor.OpHypot, "fmax": tensor.OpFmax, "fmin": tensor.OpFmin,
		"logaddexp": tensor.OpLogaddexp, "logaddexp2": tensor.OpLogaddexp2, "copysign": tensor.OpCopysign,
		"fmod": tensor.OpFmod, "ldexp": tensor.OpLdexp,
	}
)

func registerMath(l *library) {
	for name, op := range mathUnary {
		l.register(name, []string{"x"}, func(c *call) (value, error) {
			x, err := c.tensor(0)
			if err != nil {
				return nil, err
			}
			return c.b.Node(c.pos, op, spec.Attrs{}, x)
		})
	}
	for name, op := range mathBinary {
		l.register(name, []string{"x1", "x2"}, func(c *call) (value, error) {
			x, err := c.tensor(0)
			if err != nil {
				return nil, err
			}
			y, err := c.tensor(1)
			if err != nil {
				return nil, err
			}
			return c.b.Node(c.pos, op, spec.Attrs{}, x, y)
		})
	}
	l.register("nan_to_num", []string{"x", "copy", "nan", "posinf", "neginf"}, nanToNum)
	l.register("isclose", []string{"a", "b", "rtol", "atol", "equal_nan"}, isclose)
	l.register("allclose", []string{"a", "b", "rtol", "atol", "equal_nan"}, func(c *call) (value, error) {
		v, err := isclose(c)
		if err != nil {
			return nil, err
		}
		return c.b.Node(c.pos, tensor.OpAll, spec.Attrs{}, v.(*spec.Node))
	})
	registerStats(l)
	registerLayout(l)
	registerMasks(l)
	registerEinsum(l)
	registerEighLstsq(l)
	registerTake(l)
	registerLookups(l)
	registerArrays(l)
	registerHistogram(l)
	registerShapeMore(l)
	registerInsertDelete(l)
	registerNanFuncs(l)
	registerProducts(l)
	registerMore(l)
	registerPartition(l)
}

// floatMax is the largest finite value of the float dtype dt.
func floatMax(dt tensor.DType) float64 {
	switch dt {
	case tensor.Float16:
		return 65504
	case tensor.Float32:
		return math.MaxFloat32
	}
	return math.MaxFloat64
}

// nanToNum is NumPy's nan_to_num: NaN to nan= (0), +inf to posinf= (the
// dtype's largest value), -inf to neginf= (its most negative); integers
// and bools are returned as they are.
func nanToNum(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if cp, err := c.bool(1, true); err != nil {
		return nil, err
	} else if !cp {
		return nil, c.errorf(1, "nan_to_num(): copy=False changes x in place, which specs cannot do")
	}
	repl := []struct {
		i   int
		def float64
	}{{2, 0}, {3, floatMax(x.DType)}, {4, -floatMax(x.DType)}}
	vals := make([]float64, 3)
	for k, r := range repl {
		if vals[k], err = c.float(r.i, r.def); err != nil {
			return nil, err
		}
	}
	if !x.DType.IsFloat() {
		return x, nil
	}
	conds := make([]*spec.Node, 3)
	if conds[0], err = c.b.Node(c.pos, tensor.OpIsnan, spec.Attrs{}, x); err != nil {
		return nil, err
	}
	for k, inf := range []float64{math.Inf(1), math.Inf(-1)} {
		if conds[k+1], err = c.b.Node(c.pos, tensor.OpEqual, spec.Attrs{}, x, c.b.Scalar(syntax.PyFloat(inf))); err != nil {
			return nil, err
		}
	}
	r := x
	for k, cond := range conds {
		v, err := c.b.Constant(c.pos, syntax.PyFloat(vals[k]), x.DType)
		if err != nil {
			return nil, err
		}
		if r, err = c.b.Node(c.pos, tensor.OpWhere, spec.Attrs{}, cond, v, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// isclose is NumPy 1.24's: b is made a float array first; finite pairs
// are close when |a - b| <= atol + rtol * |b|, the others when equal (an
// infinity only to itself), and with equal_nan two NaNs are close.
func isclose(c *call) (value, error) {
	a, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	y, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	rtol, err := c.float(2, 1e-5)
	if err != nil {
		return nil, err
	}
	atol, err := c.float(3, 1e-8)
	if err != nil {
		return nil, err
	}
	equalNaN, err := c.bool(4, false)
	if err != nil {
		return nil, err
	}
	b := c.b
	p := c.pos
	// dt = result_type(y, 1.): float64 for bools and integers.
	if !y.DType.IsFloat() {
		if y, err = b.Astype(p, y, tensor.Float64); err != nil {
			return nil, err
		}
	}
	diff, err := b.Node(p, tensor.OpSubtract, spec.Attrs{}, a, y)
	if err != nil {
		return nil, err
	}
	if diff, err = b.Node(p, tensor.OpAbs, spec.Attrs{}, diff); err != nil {
		return nil, err
	}
	ay, err := b.Node(p, tensor.OpAbs, spec.Attrs{}, y)
	if err != nil {
		return nil, err
	}
	tol, err := b.Node(p, tensor.OpMultiply, spec.Attrs{}, b.Scalar(syntax.PyFloat(rtol)), ay)
	if err != nil {
		return nil, err
	}
	if tol, err = b.Node(p, tensor.OpAdd, spec.Attrs{}, b.Scalar(syntax.PyFloat(atol)), tol); err != nil {
		return nil, err
	}
	within, err := b.Node(p, tensor.OpLessEq, spec.Attrs{}, diff, tol)
	if err != nil {
		return nil, err
	}
	fa, err := b.Node(p, tensor.OpIsfinite, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	fy, err := b.Node(p, tensor.OpIsfinite, spec.Attrs{}, y)
	if err != nil {
		return nil, err
	}
	fin, err := b.Node(p, tensor.OpLogicalAnd, spec.Attrs{}, fa, fy)
	if err != nil {
		return nil, err
	}
	eq, err := b.Node(p, tensor.OpEqual, spec.Attrs{}, a, y)
	if err != nil {
		return nil, err
	}
	r, err := b.Node(p, tensor.OpWhere, spec.Attrs{}, fin, within, eq)
	if err != nil || !equalNaN {
		return r, err
	}
	na, err := b.Node(p, tensor.OpIsnan, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	ny, err := b.Node(p, tensor.OpIsnan, spec.Attrs{}, y)
	if err != nil {
		return nil, err
	}
	both, err := b.Node(p, tensor.OpLogicalAnd, spec.Attrs{}, na, ny)
	if err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpLogicalOr, spec.Attrs{}, r, both)
}

// known refuses a tensor whose shape the data decides, which the lowerings
// of this file need to know.
func (c *call) known(x *spec.Node) error {
	if tensor.HasUnknown(x.Shape) {
		return syntax.Errorf(c.pos, "%s() of an array of shape %s: its length depends on the data; fetch it first", c.name, spec.ShapeString(x.Shape))
	}
	return nil
}
