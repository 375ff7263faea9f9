package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// The reductions and scans, as functions and as methods.

// reduceFuncs maps reduction names to their ops.
var reduceFuncs = map[string]string{
	"sum": tensor.OpSum, "prod": tensor.OpProd, "mean": tensor.OpMean, "var": tensor.OpVar, "std": tensor.OpStd,
	"min": tensor.OpMin, "max": tensor.OpMax, "amin": tensor.OpMin, "amax": tensor.OpMax, "argmin": tensor.OpArgmin,
	"argmax": tensor.OpArgmax, "any": tensor.OpAny, "all": tensor.OpAll, "count_nonzero": tensor.OpCountNonzero,
	"nansum": tensor.OpNansum, "nanmean": tensor.OpNanmean, "nanmax": tensor.OpNanmax, "nanmin": tensor.OpNanmin,
}

// reduceParams gives each reduction's parameters in NumPy's order.
func reduceParams(op string) []string {
	switch op {
	case tensor.OpSum, tensor.OpProd, tensor.OpMean, tensor.OpNansum, tensor.OpNanmean:
		return []string{"a", "axis", "dtype", "out", "keepdims"}
	case tensor.OpVar, tensor.OpStd:
		return []string{"a", "axis", "dtype", "out", "ddof", "keepdims"}
	case tensor.OpCountNonzero:
		return []string{"a", "axis", "keepdims"}
	}
	return []string{"a", "axis", "out", "keepdims"}
}

func registerReductions(l *library) {
	methodNames := map[string]bool{"sum": true, "prod": true, "mean": true, "var": true, "std": true,
		"min": true, "max": true, "argmin": true, "argmax": true, "any": true, "all": true}
	for name, op := range reduceFuncs {
		params := reduceParams(op)
		fn := func(c *call) (value, error) { return reduce(c, op) }
		l.register(name, params, fn)
		if methodNames[name] {
			l.registerMethod(name, params, fn)
		}
	}
	for name, op := range map[string]string{"cumsum": tensor.OpCumsum, "cumprod": tensor.OpCumprod} {
		fn := func(c *call) (value, error) { return scan(c, op) }
		l.register(name, []string{"a", "axis", "dtype", "out"}, fn)
		l.registerMethod(name, []string{"a", "axis", "dtype", "out"}, fn)
	}
}

// param returns the index of the named parameter of c's function, or -1.
func (c *call) param(name string) int {
	for i, p := range c.f.params {
		if p == name {
			return i
		}
	}
	return -1
}

func (c *call) noOut() error {
	if i := c.param("out"); i >= 0 && c.has(i) {
		return c.errorf(i, "%s(): out= is not supported", c.name)
	}
	return nil
}

func reduce(c *call, op string) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	var attrs spec.Attrs
	ai := c.param("axis")
	if op == tensor.OpArgmin || op == tensor.OpArgmax {
		if c.has(ai) {
			ax, err := toInt(c.args[ai].v, c.args[ai].pos)
			if err != nil {
				return nil, err
			}
			if ax, err = spec.NormAxis(ax, len(x.Shape), c.args[ai].pos); err != nil {
				return nil, err
			}
			attrs.Axes = []int{ax}
		}
	} else if attrs.Axes, err = c.axes(ai, len(x.Shape)); err != nil {
		return nil, err
	}
	if len(attrs.Axes) == len(x.Shape) && len(attrs.Axes) > 0 {
		attrs.Axes = nil // every axis: one form for the tile rules
	}
	if attrs.Keepdims, err = c.bool(c.param("keepdims"), false); err != nil {
		return nil, err
	}
	if i := c.param("ddof"); i >= 0 {
		if attrs.Ddof, err = c.int(i, 0); err != nil {
			return nil, err
		}
		if attrs.Ddof < 0 {
			return nil, c.errorf(i, "ddof must not be negative")
		}
	}
	if i := c.param("dtype"); i >= 0 && c.has(i) {
		dt, err := c.dtype(i, 0)
		if err != nil {
			return nil, err
		}
		// NumPy computes in the given dtype and returns it.
		if x, err = c.b.Astype(c.pos, x, dt); err != nil {
			return nil, err
		}
		r, err := reduceOver(c, op, x, attrs)
		if err != nil {
			return nil, err
		}
		return c.b.Astype(c.pos, r, dt)
	}
	return reduceOver(c, op, x, attrs)
}

// reduceOver makes the reduction node. Reducing over no axes (axis=())
// reduces nothing: the result is x in the reduction's dtype.
func reduceOver(c *call, op string, x *spec.Node, attrs spec.Attrs) (*spec.Node, error) {
	if r, ok, err := c.b.ReduceMask(c.pos, op, x, attrs); ok {
		return r, err // a reduction of a mask, in one pass (spec.Builder.ReduceMask)
	}
	if attrs.Axes != nil && len(attrs.Axes) == 0 {
		switch op {
		case tensor.OpVar, tensor.OpStd:
			return nil, syntax.Errorf(c.pos, "%s over no axes (axis=()) is not supported", c.name)
		case tensor.OpAny, tensor.OpAll:
			return c.b.Astype(c.pos, x, tensor.Bool)
		case tensor.OpCountNonzero:
			nz, err := c.b.Astype(c.pos, x, tensor.Bool)
			if err != nil {
				return nil, err
			}
			return c.b.Astype(c.pos, nz, tensor.Int64)
		}
		return c.b.Astype(c.pos, x, spec.ReduceType(op, x.DType))
	}
	return c.b.Node(c.pos, op, attrs, x)
}

// scan implements cumsum and cumprod; axis=None scans the raveled array.
func scan(c *call, op string) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	ax := 0
	if c.has(1) {
		a, err := toInt(c.args[1].v, c.args[1].pos)
		if err != nil {
			return nil, err
		}
		if ax, err = spec.NormAxis(a, len(x.Shape), c.args[1].pos); err != nil {
			return nil, err
		}
	} else if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
		return nil, err
	}
	if c.has(2) {
		dt, err := c.dtype(2, 0)
		if err != nil {
			return nil, err
		}
		if x, err = c.b.Astype(c.pos, x, dt); err != nil {
			return nil, err
		}
		r, err := c.b.Node(c.pos, op, spec.Attrs{Axes: []int{ax}}, x)
		if err != nil {
			return nil, err
		}
		return c.b.Astype(c.pos, r, dt)
	}
	return c.b.Node(c.pos, op, spec.Attrs{Axes: []int{ax}}, x)
}
