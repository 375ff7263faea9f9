package lang

import (
	"math"

	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// nanprod, nancumsum, nancumprod, nanargmin and nanargmax, as NumPy 1.24
// writes them: the NaNs of a float array are replaced by the operation's
// identity (1, 0, or +inf / -inf for the arg-reductions), which fuses
// with the input, and the plain reduction or scan follows. nanargmin and
// nanargmax fail the graph with NumPy's "All-NaN slice encountered" when a
// slice holds only NaNs (OpNonEmpty over a count that is 0 then).

func registerNanFuncs(l *library) {
	l.register("nanprod", reduceParams(tensor.OpProd), func(c *call) (value, error) {
		if err := nanFill(c, 1); err != nil {
			return nil, err
		}
		return reduce(c, tensor.OpProd)
	})
	for name, fill := range map[string]float64{"nancumsum": 0, "nancumprod": 1} {
		op := map[string]string{"nancumsum": tensor.OpCumsum, "nancumprod": tensor.OpCumprod}[name]
		l.register(name, []string{"a", "axis", "dtype", "out"}, func(c *call) (value, error) {
			if err := nanFill(c, fill); err != nil {
				return nil, err
			}
			return scan(c, op)
		})
	}
	for name, op := range map[string]string{"nanargmin": tensor.OpArgmin, "nanargmax": tensor.OpArgmax} {
		l.register(name, []string{"a", "axis", "out", "keepdims"}, func(c *call) (value, error) { return nanArg(c, op) })
	}
}

// nanFill replaces the NaNs of argument 0 by fill (floats only: integers
// and bools have none).
func nanFill(c *call, fill float64) error {
	x, err := c.tensor(0)
	if err != nil {
		return err
	}
	if !x.DType.IsFloat() {
		c.args[0].v = x
		return nil
	}
	nan, err := c.b.Node(c.pos, tensor.OpIsnan, spec.Attrs{}, x)
	if err != nil {
		return err
	}
	// A Python float yields to x's dtype, as NumPy's _replace_nan writes
	// into x's own array.
	w, err := c.b.Node(c.pos, tensor.OpWhere, spec.Attrs{}, nan, c.b.Scalar(syntax.PyFloat(fill)), x)
	if err != nil {
		return err
	}
	c.args[0].v = w
	return nil
}

// nanArg is nanargmin and nanargmax: the plain one of x with its NaNs made
// +inf (-inf), failing when a slice along axis (the whole array for None)
// holds only NaNs.
func nanArg(c *call, op string) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if !x.DType.IsFloat() {
		return reduce(c, op)
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	fill := math.Inf(1)
	if op == tensor.OpArgmax {
		fill = math.Inf(-1)
	}
	if err := nanFill(c, fill); err != nil {
		return nil, err
	}
	r, err := reduce(c, op)
	if err != nil {
		return nil, err
	}
	nan, err := b.Node(p, tensor.OpIsnan, spec.Attrs{}, x)
	if err != nil {
		return nil, err
	}
	var axes []int
	if ai := c.param("axis"); c.has(ai) {
		ax, err := toInt(c.args[ai].v, c.args[ai].pos)
		if err != nil {
			return nil, err
		}
		if ax, err = spec.NormAxis(ax, len(x.Shape), c.args[ai].pos); err != nil {
			return nil, err
		}
		axes = []int{ax}
	}
	// ok is 1 when no slice is all NaN: not any(all(isnan(x), axis)).
	all, err := b.ReduceNode(p, tensor.OpAll, nan, axes, false, 0)
	if err != nil {
		return nil, err
	}
	bad := all
	if len(all.Shape) > 0 {
		if bad, err = b.ReduceNode(p, tensor.OpAny, all, nil, false, 0); err != nil {
			return nil, err
		}
	}
	ok, err := b.Node(p, tensor.OpLogicalNot, spec.Attrs{}, bad)
	if err != nil {
		return nil, err
	}
	if ok, err = b.Astype(p, ok, tensor.Int64); err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpNonEmpty, spec.Attrs{Name: tensor.AllNaNSlice}, r.(*spec.Node), ok)
}
