package lang

import (
	"maps"
	"marsfs/tensor/spec"
	"math"
	"slices"
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// A builtin is a function of the spec language: its parameters, in Python's
// order, and its body. A parameter spelled "*name" collects the remaining
// positional arguments into a tuple (rand(2, 3), a.reshape(2, 3)).
type builtin struct {
	params []string
	fn     func(c *call) (value, error)
}

// A call is a builtin's arguments bound to its parameters.
type call struct {
	b    *builder
	name string        // as the spec wrote it, for messages
	pos  syntax.SrcPos // the function's name
	f    *builtin
	args []arg // one a parameter
}

type arg struct {
	v   value
	pos syntax.SrcPos
	set bool
}

// notYet lists NumPy functions this release does not implement (the
// "Not yet" of docs/marsfs.4.md, OPERATIONS), so that a spec calling one
// is told so by name rather than that the function is unknown.
var notYet = map[string]bool{
	"frexp": true, "convolve": true,
}

// modules are the prefixes a function name may carry; np. and numpy. are
// dropped, random. and linalg. are part of the name.
var modules = map[string]bool{"np": true, "numpy": true, "random": true, "linalg": true}

// dotted returns the name a.b.c of an attribute chain on a name, or "".
func dotted(e syntax.Expr) string {
	switch e := e.(type) {
	case *syntax.NameExpr:
		return e.Name
	case *syntax.AttrExpr:
		if s := dotted(e.X); s != "" {
			return s + "." + e.Name
		}
	}
	return ""
}

// rootName is the name an attribute chain starts from.
func rootName(e syntax.Expr) string {
	for {
		switch x := e.(type) {
		case *syntax.NameExpr:
			return x.Name
		case *syntax.AttrExpr:
			e = x.X
		default:
			return ""
		}
	}
}

// rootPos is the position of the name an attribute chain starts from.
func rootPos(e syntax.Expr) syntax.SrcPos {
	for {
		a, ok := e.(*syntax.AttrExpr)
		if !ok {
			return e.At()
		}
		e = a.X
	}
}

// moduleName returns the function name a dotted expression names when it
// starts with a module the spec has not shadowed: np.random.rand is
// random.rand.
func (b *builder) moduleName(e syntax.Expr) (string, bool) {
	root := rootName(e)
	if !modules[root] {
		return "", false
	}
	if _, shadowed := b.vars[root]; shadowed {
		return "", false
	}
	name := dotted(e)
	for _, p := range []string{"np.", "numpy."} {
		name = strings.TrimPrefix(name, p)
	}
	return name, true
}

func (b *builder) call(e *syntax.CallExpr) (value, error) {
	var self *arg
	var name string
	var f *builtin
	pos := e.Fn.At()
	switch fn := e.Fn.(type) {
	case *syntax.NameExpr:
		if v, ok := b.vars[fn.Name]; ok {
			return nil, syntax.Errorf(fn.Pos, "'%s' object is not callable", typeName(v))
		}
		name = fn.Name
		f = b.lib.functions[name]
		if f == nil && notYet[name] {
			return nil, syntax.Errorf(fn.Pos, "%s is not supported yet", name)
		}
		if f == nil {
			if _, ok := b.lookupEnv(fn.Name); ok {
				return nil, syntax.Errorf(fn.Pos, "%s is a tensor, not a function", fn.Name)
			}
			return nil, syntax.Errorf(fn.Pos, "unknown function %s%s", fn.Name, syntax.DidYouMean(fn.Name, maps.Keys(b.lib.functions)))
		}
	case *syntax.AttrExpr:
		if mod, ok := b.moduleName(fn); ok {
			name = mod
			pos = rootPos(fn)
			f = b.lib.functions[name]
			if f == nil && notYet[name] {
				return nil, syntax.Errorf(rootPos(fn), "%s is not supported yet", name)
			}
			if f == nil {
				return nil, syntax.Errorf(rootPos(fn), "unknown function %s%s", dotted(fn), syntax.DidYouMean(name, maps.Keys(b.lib.functions)))
			}
			break
		}
		x, err := b.eval(fn.X)
		if err != nil {
			return nil, err
		}
		if g, ok := x.(groupbyValue); ok {
			name = fn.Name
			if f, err = groupbyMethod(fn.Pos, name); err != nil {
				return nil, err
			}
			self = &arg{v: g, pos: fn.X.At(), set: true}
			break
		}
		t, ok := x.(*spec.Node)
		if !ok {
			return nil, syntax.Errorf(fn.Pos, "'%s' object has no method %s", typeName(x), fn.Name)
		}
		name = fn.Name
		f = b.lib.methods[name]
		if f == nil && notYet[name] {
			return nil, syntax.Errorf(fn.Pos, "%s is not supported yet", name)
		}
		if f == nil {
			return nil, syntax.Errorf(fn.Pos, "tensors have no method %s", fn.Name)
		}
		self = &arg{v: t, pos: fn.X.At(), set: true}
	default:
		return nil, syntax.Errorf(e.Pos, "%s is not callable", syntax.DescribeExpr(e.Fn))
	}
	c, err := b.bind(name, pos, f, self, e)
	if err != nil {
		return nil, err
	}
	return f.fn(c)
}

// lookupEnv reports whether name is a session tensor.
func (b *builder) lookupEnv(name string) (*tensor.TiledTensor, bool) {
	if b.env == nil {
		return nil, false
	}
	return b.env.Lookup(name)
}

// bind evaluates a call's arguments and binds them to f's parameters.
func (b *builder) bind(name string, pos syntax.SrcPos, f *builtin, self *arg, e *syntax.CallExpr) (*call, error) {
	c := &call{b: b, name: name, pos: pos, f: f, args: make([]arg, len(f.params))}
	next := 0
	if self != nil {
		c.args[0] = *self
		next = 1
	}
	var rest seqValue
	restAt := -1
	for _, x := range e.Args {
		v, err := b.eval(x)
		if err != nil {
			return nil, err
		}
		if next < len(f.params) && strings.HasPrefix(f.params[next], "*") {
			restAt = next
			rest.elts = append(rest.elts, v)
			rest.pos = append(rest.pos, x.At())
			continue
		}
		if next >= len(f.params) {
			return nil, syntax.Errorf(x.At(), "%s() takes %d positional arguments but %d were given", name, next, len(e.Args)+spec.BoolInt(self != nil))
		}
		c.args[next] = arg{v: v, pos: x.At(), set: true}
		next++
	}
	if restAt >= 0 {
		c.args[restAt] = arg{v: rest, pos: rest.pos[0], set: true}
	}
	for _, kw := range e.Kwargs {
		i := -1
		for j, p := range f.params {
			if p == kw.Name {
				i = j
			}
		}
		if i < 0 || i == 0 && self != nil {
			return nil, syntax.Errorf(kw.Pos, "%s() got an unexpected keyword argument '%s'", name, kw.Name)
		}
		if c.args[i].set {
			return nil, syntax.Errorf(kw.Pos, "%s() got multiple values for argument '%s'", name, kw.Name)
		}
		v, err := b.eval(kw.Val)
		if err != nil {
			return nil, err
		}
		c.args[i] = arg{v: v, pos: kw.Val.At(), set: true}
	}
	return c, nil
}

// has reports whether parameter i was given and is not None.
func (c *call) has(i int) bool {
	if !c.args[i].set {
		return false
	}
	_, none := c.args[i].v.(noneValue)
	return !none
}

// at is the position of argument i, or of the call when it was not given.
func (c *call) at(i int) syntax.SrcPos {
	if c.args[i].set {
		return c.args[i].pos
	}
	return c.pos
}

func (c *call) errorf(i int, format string, args ...any) error {
	return syntax.Errorf(c.at(i), format, args...)
}

func (c *call) missing(i int) error {
	return syntax.Errorf(c.pos, "%s() missing required argument '%s'", c.name, strings.TrimPrefix(c.f.params[i], "*"))
}

// tensor returns argument i as a tensor; it is required.
func (c *call) tensor(i int) (*spec.Node, error) {
	if !c.args[i].set {
		return nil, c.missing(i)
	}
	return c.b.tensor(c.args[i].v, c.args[i].pos)
}

// num returns argument i as a Python number (def when absent or None).
func (c *call) num(i int, def syntax.PyNum) (syntax.PyNum, error) {
	if !c.has(i) {
		return def, nil
	}
	n, ok := c.args[i].v.(syntax.PyNum)
	if !ok {
		return syntax.PyNum{}, c.errorf(i, "%s(): %s must be a number, not a %s", c.name, strings.TrimPrefix(c.f.params[i], "*"), typeName(c.args[i].v))
	}
	return n, nil
}

func (c *call) float(i int, def float64) (float64, error) {
	n, err := c.num(i, syntax.PyFloat(def))
	return n.Float(), err
}

func (c *call) int(i int, def int) (int, error) {
	if !c.has(i) {
		return def, nil
	}
	return toInt(c.args[i].v, c.args[i].pos)
}

func (c *call) bool(i int, def bool) (bool, error) {
	if !c.has(i) {
		return def, nil
	}
	n, ok := c.args[i].v.(syntax.PyNum)
	if !ok || n.IsFloat() {
		return false, c.errorf(i, "%s(): %s must be True or False", c.name, c.f.params[i])
	}
	return n.I != 0, nil
}

// str returns argument i as a string, or "" when absent or None.
func (c *call) str(i int) (string, error) {
	if !c.has(i) {
		return "", nil
	}
	s, ok := c.args[i].v.(string)
	if !ok {
		return "", c.errorf(i, "%s(): %s must be a string", c.name, c.f.params[i])
	}
	return s, nil
}

// toInt converts an integral number (an int, a bool, or a float that is an
// exact integer, as 1e8 in shapes) to an int.
func toInt(v value, p syntax.SrcPos) (int, error) {
	n, ok := v.(syntax.PyNum)
	if !ok {
		return 0, syntax.Errorf(p, "'%s' object cannot be interpreted as an integer", typeName(v))
	}
	if n.IsFloat() {
		if n.F != math.Trunc(n.F) || math.IsInf(n.F, 0) {
			return 0, syntax.Errorf(p, "%s is not an integer", n)
		}
		if math.Abs(n.F) > spec.MaxInt {
			return 0, syntax.Errorf(p, "%s is too large", n)
		}
		return int(n.F), nil
	}
	if n.I > spec.MaxInt || n.I < -spec.MaxInt {
		return 0, syntax.Errorf(p, "%d is too large", n.I)
	}
	return int(n.I), nil
}

// ints converts an int or a tuple or list of ints.
func ints(v value, p syntax.SrcPos) ([]int, error) {
	if s, ok := v.(seqValue); ok {
		out := make([]int, len(s.elts))
		for i, x := range s.elts {
			n, err := toInt(x, s.pos[i])
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	n, err := toInt(v, p)
	if err != nil {
		return nil, err
	}
	return []int{n}, nil
}

// shapeOf converts a shape argument: an int or a tuple or list of ints.
func shapeOf(v value, p syntax.SrcPos) ([]int, error) {
	shape, err := ints(v, p)
	if err != nil {
		return nil, err
	}
	total := 1
	for _, d := range shape {
		if d < 0 {
			return nil, syntax.Errorf(p, "negative dimensions are not allowed")
		}
		if d > 0 && total > spec.MaxInt/d {
			return nil, syntax.Errorf(p, "shape %s is too large", spec.ShapeString(shape))
		}
		total *= d
	}
	return shape, nil
}

// shape returns argument i as a shape; it is required.
func (c *call) shape(i int) ([]int, error) {
	if !c.has(i) {
		return nil, c.missing(i)
	}
	return shapeOf(c.args[i].v, c.args[i].pos)
}

// dtype returns argument i as a dtype: a dtype name, a string, or a Python
// type (float, int, bool); def when absent or None.
func (c *call) dtype(i int, def tensor.DType) (tensor.DType, error) {
	if !c.has(i) {
		return def, nil
	}
	return dtypeOf(c.args[i].v, c.args[i].pos)
}

func dtypeOf(v value, p syntax.SrcPos) (tensor.DType, error) {
	switch v := v.(type) {
	case dtypeValue:
		return tensor.DType(v), nil
	case string:
		d, err := tensor.ParseDType(v)
		if err != nil {
			return 0, syntax.Errorf(p, "data type %q not understood (marsfs has bool, int8 to int64, uint8 to uint64, float16 to float64)", v)
		}
		return d, nil
	}
	return 0, syntax.Errorf(p, "a %s is not a dtype", typeName(v))
}

// axes returns argument i as reduction axes for an array of ndim
// dimensions: nil for None (all axes), else sorted and distinct.
func (c *call) axes(i, ndim int) ([]int, error) {
	if !c.has(i) {
		return nil, nil
	}
	raw, err := ints(c.args[i].v, c.args[i].pos)
	if err != nil {
		return nil, err
	}
	return normAxes(raw, ndim, c.args[i].pos)
}

// normAxes resolves negative axes, checks the range and duplicates, and
// sorts.
func normAxes(raw []int, ndim int, p syntax.SrcPos) ([]int, error) {
	out := make([]int, 0, len(raw))
	for _, ax := range raw {
		a, err := spec.NormAxis(ax, ndim, p)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o == a {
				return nil, syntax.Errorf(p, "duplicate value in 'axis'")
			}
		}
		out = append(out, a)
	}
	slices.Sort(out)
	return out, nil
}

// seed returns the seed= argument i. Without one a generator gets a fresh
// random seed, as NumPy's do: two unseeded rand calls differ.
func (c *call) seed(i int) (uint64, error) {
	if !c.has(i) {
		return freshSeed(), nil
	}
	n, err := toInt(c.args[i].v, c.args[i].pos)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, c.errorf(i, "seed must be non-negative, got %d", n)
	}
	return uint64(n), nil
}

// chunks returns the chunks= argument i for shape: the default chunking when
// absent, None or "auto".
func (c *call) chunks(i int, shape []int) ([][]int, error) {
	if !c.has(i) {
		return spec.DefaultChunksAt(shape, c.pos)
	}
	return chunksOf(c.args[i].v, c.args[i].pos, shape, c.b.maxChunks)
}
