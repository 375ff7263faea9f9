package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// A library is the spec language's functions by name (without np.) and
// the methods of tensors.
type library struct {
	functions map[string]*builtin
	methods   map[string]*builtin
}

// lib is the library, built once as the package is initialized, each
// family of functions by its file's register function (they loop over
// their tables of ops). A builder reaches it through its own field, never
// through lib: the builtins evaluate their arguments through the builder,
// and the builder's looking lib up would make lib's initializer refer to
// itself, which Go refuses.
var lib = newLibrary()

func newLibrary() *library {
	l := &library{functions: map[string]*builtin{}, methods: map[string]*builtin{}}
	registerCatalogue(l)
	registerCreation(l)
	registerElementwise(l)
	registerFiles(l)
	registerGroupBy(l)
	registerLinalg(l)
	registerMath(l)
	registerReductions(l)
	registerShape(l)
	return l
}

func (l *library) register(name string, params []string, fn func(c *call) (value, error)) {
	l.functions[name] = &builtin{params: params, fn: fn}
}

func (l *library) registerMethod(name string, params []string, fn func(c *call) (value, error)) {
	l.methods[name] = &builtin{params: params, fn: fn}
}

// unaryFuncs maps elementwise functions of one tensor to their ops.
var unaryFuncs = map[string]string{
	"abs": tensor.OpAbs, "absolute": tensor.OpAbs, "sqrt": tensor.OpSqrt, "exp": tensor.OpExp, "log": tensor.OpLog,
	"log1p": tensor.OpLog1p, "sin": tensor.OpSin, "cos": tensor.OpCos, "tan": tensor.OpTan, "tanh": tensor.OpTanh,
	"floor": tensor.OpFloor, "ceil": tensor.OpCeil, "sign": tensor.OpSign, "negative": tensor.OpNegative,
	"logical_not": tensor.OpLogicalNot, "invert": tensor.OpInvert, "bitwise_not": tensor.OpInvert,
}

// binaryFuncs maps elementwise functions of two tensors to their ops.
var binaryFuncs = map[string]string{
	"add": tensor.OpAdd, "subtract": tensor.OpSubtract, "multiply": tensor.OpMultiply, "divide": tensor.OpDivide,
	"true_divide": tensor.OpDivide, "floor_divide": tensor.OpFloorDiv, "mod": tensor.OpMod, "remainder": tensor.OpMod,
	"power": tensor.OpPower, "maximum": tensor.OpMaximum, "minimum": tensor.OpMinimum, "equal": tensor.OpEqual,
	"not_equal": tensor.OpNotEqual, "less": tensor.OpLess, "less_equal": tensor.OpLessEq, "greater": tensor.OpGreater,
	"greater_equal": tensor.OpGreaterEq, "logical_and": tensor.OpLogicalAnd, "logical_or": tensor.OpLogicalOr,
	"bitwise_and": tensor.OpBitAnd, "bitwise_or": tensor.OpBitOr, "bitwise_xor": tensor.OpBitXor,
}

func registerElementwise(l *library) {
	for name, op := range unaryFuncs {
		l.register(name, []string{"x"}, func(c *call) (value, error) {
			x, err := c.tensor(0)
			if err != nil {
				return nil, err
			}
			return c.b.Node(c.pos, op, spec.Attrs{}, x)
		})
	}
	l.register("positive", []string{"x"}, func(c *call) (value, error) { return c.tensor(0) })
	// logical_xor is the truths compared: x != 0 differs from y != 0.
	l.register("logical_xor", []string{"x1", "x2"}, func(c *call) (value, error) {
		var t [2]*spec.Node
		for i := range t {
			x, err := c.tensor(i)
			if err != nil {
				return nil, err
			}
			if t[i], err = c.b.Truth(c.pos, x); err != nil {
				return nil, err
			}
		}
		return c.b.Node(c.pos, tensor.OpNotEqual, spec.Attrs{}, t[0], t[1])
	})
	l.register("square", []string{"x"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		return c.b.Node(c.pos, tensor.OpMultiply, spec.Attrs{}, x, x)
	})
	for name, op := range binaryFuncs {
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
	roundFn := func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		d, err := c.int(1, 0)
		if err != nil {
			return nil, err
		}
		return c.b.Node(c.pos, tensor.OpRound, spec.Attrs{Decimals: d}, x)
	}
	for _, name := range []string{"round", "around", "round_"} {
		l.register(name, []string{"a", "decimals"}, roundFn)
	}
	l.registerMethod("round", []string{"a", "decimals"}, roundFn)
	l.register("where", []string{"condition", "x", "y"}, func(c *call) (value, error) {
		if !c.args[1].set && !c.args[2].set {
			x, err := c.tensor(0) // where(condition) is nonzero(condition)
			if err != nil {
				return nil, err
			}
			return c.b.nonzero(c.pos, x)
		}
		var in [3]*spec.Node
		for i := range in {
			var err error
			if in[i], err = c.tensor(i); err != nil {
				return nil, err
			}
		}
		return c.b.Node(c.pos, tensor.OpWhere, spec.Attrs{}, in[:]...)
	})
	clipFn := func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) && !c.has(2) {
			return nil, syntax.Errorf(c.pos, "One of max or min must be given")
		}
		// clip(x, lo, hi) is minimum(maximum(x, lo), hi), as NumPy defines it.
		for i, op := range []string{tensor.OpMaximum, tensor.OpMinimum} {
			if !c.has(1 + i) {
				continue
			}
			bound, err := c.tensor(1 + i)
			if err != nil {
				return nil, err
			}
			if x, err = c.b.Node(c.pos, op, spec.Attrs{}, x, bound); err != nil {
				return nil, err
			}
		}
		return x, nil
	}
	l.register("clip", []string{"a", "a_min", "a_max"}, clipFn)
	l.registerMethod("clip", []string{"a", "min", "max"}, clipFn)
	l.registerMethod("astype", []string{"a", "dtype"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) {
			return nil, c.missing(1)
		}
		dt, err := c.dtype(1, 0)
		if err != nil {
			return nil, err
		}
		return c.b.Astype(c.pos, x, dt)
	})
}

// attr evaluates x.name without a call: .T, .shape, .ndim, .size, .dtype,
// or a module's constant (np.pi, np.float32, np.newaxis).
func (b *builder) attr(e *syntax.AttrExpr) (value, error) {
	if name, ok := b.moduleName(e); ok {
		if v, ok := constants[name]; ok {
			return v, nil
		}
		if _, ok := b.lib.functions[name]; ok {
			return nil, syntax.Errorf(rootPos(e), "%s is a function: call it, %s(...)", dotted(e), dotted(e))
		}
		return nil, syntax.Errorf(rootPos(e), "unknown name %s", dotted(e))
	}
	x, err := b.eval(e.X)
	if err != nil {
		return nil, err
	}
	t, ok := x.(*spec.Node)
	if !ok {
		return nil, syntax.Errorf(e.Pos, "'%s' object has no attribute '%s'", typeName(x), e.Name)
	}
	switch e.Name {
	case "T":
		perm := make([]int, len(t.Shape))
		for i := range perm {
			perm[i] = len(perm) - 1 - i
		}
		return b.Transpose(e.Pos, t, perm)
	case "shape", "size":
		if tensor.HasUnknown(t.Shape) {
			return nil, syntax.Errorf(e.Pos, ".%s of an array of shape %s: its length depends on the data, which the spec cannot read", e.Name, spec.ShapeString(t.Shape))
		}
	}
	switch e.Name {
	case "shape":
		s := seqValue{}
		for _, d := range t.Shape {
			s.elts = append(s.elts, syntax.PyInt(int64(d)))
			s.pos = append(s.pos, e.Pos)
		}
		return s, nil
	case "ndim":
		return syntax.PyInt(int64(len(t.Shape))), nil
	case "size":
		return syntax.PyInt(int64(tensor.NumElements(t.Shape))), nil
	case "dtype":
		return dtypeValue(t.DType), nil
	}
	if _, ok := b.lib.methods[e.Name]; ok {
		return nil, syntax.Errorf(e.Pos, "%s is a method: call it, .%s(...)", e.Name, e.Name)
	}
	return nil, syntax.Errorf(e.Pos, "tensors have no attribute %s", e.Name)
}

// tensors converts a sequence of tensors (concatenate's and stack's first
// argument).
func (c *call) tensors(i int) ([]*spec.Node, error) {
	if !c.args[i].set {
		return nil, c.missing(i)
	}
	s, ok := c.args[i].v.(seqValue)
	if !ok {
		return nil, c.errorf(i, "%s() takes a tuple or list of tensors, not a %s", c.name, typeName(c.args[i].v))
	}
	if len(s.elts) == 0 {
		return nil, c.errorf(i, "need at least one array to %s", c.name)
	}
	out := make([]*spec.Node, len(s.elts))
	for j, v := range s.elts {
		t, err := c.b.tensor(v, s.pos[j])
		if err != nil {
			return nil, err
		}
		out[j] = t
	}
	return out, nil
}
