package lang

import (
	"marsfs/tensor/spec"
	"math"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// The creation functions of the spec language. Each takes chunks= (see
// chunksOf); the random generators take seed=.

func registerCreation(l *library) {
	for name, fill := range map[string]float64{"zeros": 0, "ones": 1, "empty": 0} {
		l.register(name, []string{"shape", "dtype", "chunks"}, func(c *call) (value, error) {
			shape, err := c.shape(0)
			if err != nil {
				return nil, err
			}
			dt, err := c.dtype(1, tensor.Float64)
			if err != nil {
				return nil, err
			}
			return c.full(shape, dt, syntax.PyFloat(fill), 2)
		})
		l.register(name+"_like", []string{"a", "dtype", "chunks"}, func(c *call) (value, error) {
			a, err := c.tensor(0)
			if err != nil {
				return nil, err
			}
			dt, err := c.dtype(1, a.DType)
			if err != nil {
				return nil, err
			}
			return c.full(a.Shape, dt, syntax.PyFloat(fill), 2)
		})
	}
	l.register("full", []string{"shape", "fill_value", "dtype", "chunks"}, func(c *call) (value, error) {
		shape, err := c.shape(0)
		if err != nil {
			return nil, err
		}
		return c.fullValue(shape, 1, 2, 3, 0)
	})
	l.register("full_like", []string{"a", "fill_value", "dtype", "chunks"}, func(c *call) (value, error) {
		a, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		return c.fullValue(a.Shape, 1, 2, 3, a.DType)
	})
	l.register("arange", []string{"start", "stop", "step", "dtype", "chunks"}, arange)
	l.register("linspace", []string{"start", "stop", "num", "endpoint", "dtype", "chunks"}, linspace)
	l.register("eye", []string{"N", "M", "k", "dtype", "chunks"}, eye)

	randOf := func(op string) func(c *call) (value, error) {
		return func(c *call) (value, error) {
			dims, _ := c.args[0].v.(seqValue)
			var shape []int
			var err error
			if len(dims.elts) == 1 {
				shape, err = shapeOf(dims.elts[0], dims.pos[0]) // rand((2, 3)) as well as rand(2, 3)
			} else if len(dims.elts) > 1 {
				shape, err = shapeOf(dims, dims.pos[0])
			}
			if err != nil {
				return nil, err
			}
			return c.random(&spec.Node{Op: op, Shape: shape, DType: tensor.Float64}, 1, 2)
		}
	}
	for _, name := range []string{"rand", "random.rand"} {
		l.register(name, []string{"*size", "chunks", "seed"}, randOf(tensor.OpRand))
	}
	for _, name := range []string{"randn", "random.randn"} {
		l.register(name, []string{"*size", "chunks", "seed"}, randOf(tensor.OpRandn))
	}
	sized := func(op string) func(c *call) (value, error) {
		return func(c *call) (value, error) {
			shape, err := c.size(0)
			if err != nil {
				return nil, err
			}
			return c.random(&spec.Node{Op: op, Shape: shape, DType: tensor.Float64}, 1, 2)
		}
	}
	for _, name := range []string{"random.random", "random.random_sample", "random_sample"} {
		l.register(name, []string{"size", "chunks", "seed"}, sized(tensor.OpRand))
	}
	l.register("random.standard_normal", []string{"size", "chunks", "seed"}, sized(tensor.OpRandn))
	for _, name := range []string{"randint", "random.randint"} {
		l.register(name, []string{"low", "high", "size", "dtype", "chunks", "seed"}, randint)
	}
	for _, name := range []string{"uniform", "random.uniform"} {
		l.register(name, []string{"low", "high", "size", "chunks", "seed"}, func(c *call) (value, error) {
			return twoParam(c, tensor.OpUniform, 0, 1)
		})
	}
	for _, name := range []string{"normal", "random.normal"} {
		l.register(name, []string{"loc", "scale", "size", "chunks", "seed"}, func(c *call) (value, error) {
			return twoParam(c, tensor.OpNormal, 0, 1)
		})
	}
}

// size returns a size= argument: None is a 0-d result.
func (c *call) size(i int) ([]int, error) {
	if !c.has(i) {
		return []int{}, nil
	}
	return c.shape(i)
}

// full makes an OpFull node of shape and dtype holding v; chunks= is
// argument ci.
func (c *call) full(shape []int, dt tensor.DType, v syntax.PyNum, ci int) (value, error) {
	chunks, err := c.chunks(ci, shape)
	if err != nil {
		return nil, err
	}
	n := &spec.Node{Op: tensor.OpFull, Shape: spec.CloneInts(shape), DType: dt, Chunks: chunks}
	if err := spec.SetFill(&n.Attrs, dt, v); err != nil {
		return nil, syntax.ErrAt(c.pos, err)
	}
	return c.b.AddAt(c.pos, n)
}

// fullValue implements full and full_like: the fill value's dtype is the
// default dtype unless def is given.
func (c *call) fullValue(shape []int, vi, di, ci int, def tensor.DType) (value, error) {
	if !c.args[vi].set {
		return nil, c.missing(vi)
	}
	v, ok := c.args[vi].v.(syntax.PyNum)
	if !ok {
		return nil, c.errorf(vi, "full(): fill_value must be a number, not a %s", typeName(c.args[vi].v))
	}
	if def == 0 {
		def = v.Dt
	}
	dt, err := c.dtype(di, def)
	if err != nil {
		return nil, err
	}
	return c.full(shape, dt, v, ci)
}

func arange(c *call) (value, error) {
	if !c.has(0) {
		return nil, c.missing(0)
	}
	start, err := c.num(0, syntax.PyInt(0))
	if err != nil {
		return nil, err
	}
	stop, step := start, syntax.PyInt(1)
	if c.has(1) {
		if stop, err = c.num(1, syntax.PyInt(0)); err != nil {
			return nil, err
		}
	} else {
		start = syntax.PyInt(0)
	}
	if step, err = c.num(2, syntax.PyInt(1)); err != nil {
		return nil, err
	}
	if step.Float() == 0 {
		return nil, c.errorf(2, "arange: step must not be zero")
	}
	def := tensor.Int64
	if start.IsFloat() || stop.IsFloat() || step.IsFloat() {
		def = tensor.Float64
	}
	dt, err := c.dtype(3, def)
	if err != nil {
		return nil, err
	}
	span := math.Ceil((stop.Float() - start.Float()) / step.Float())
	if math.IsNaN(span) || span > spec.MaxInt {
		return nil, syntax.Errorf(c.pos, "arange: the length %s is out of range", syntax.PyFloat(span))
	}
	n := max(int(span), 0)
	chunks, err := c.chunks(4, []int{n})
	if err != nil {
		return nil, err
	}
	return c.b.AddAt(c.pos, &spec.Node{Op: tensor.OpArange, Shape: []int{n}, DType: dt, Chunks: chunks,
		Attrs: spec.Attrs{Start: start.Float(), Step: step.Float()}})
}

func linspace(c *call) (value, error) {
	if !c.has(0) {
		return nil, c.missing(0)
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	start, err := c.float(0, 0)
	if err != nil {
		return nil, err
	}
	stop, err := c.float(1, 0)
	if err != nil {
		return nil, err
	}
	num, err := c.int(2, 50)
	if err != nil {
		return nil, err
	}
	if num < 0 {
		return nil, c.errorf(2, "Number of samples, %d, must be non-negative.", num)
	}
	endpoint, err := c.bool(3, true)
	if err != nil {
		return nil, err
	}
	dt, err := c.dtype(4, tensor.Float64)
	if err != nil {
		return nil, err
	}
	div := num
	if endpoint {
		div = num - 1
	}
	step := 0.0
	if div > 0 {
		step = (stop - start) / float64(div)
	}
	chunks, err := c.chunks(5, []int{num})
	if err != nil {
		return nil, err
	}
	return c.b.AddAt(c.pos, &spec.Node{Op: tensor.OpLinspace, Shape: []int{num}, DType: dt, Chunks: chunks,
		Attrs: spec.Attrs{Start: start, Step: step}})
}

func eye(c *call) (value, error) {
	if !c.has(0) {
		return nil, c.missing(0)
	}
	n, err := c.int(0, 0)
	if err != nil {
		return nil, err
	}
	m, err := c.int(1, n)
	if err != nil {
		return nil, err
	}
	if n < 0 || m < 0 {
		return nil, syntax.Errorf(c.pos, "negative dimensions are not allowed")
	}
	k, err := c.int(2, 0)
	if err != nil {
		return nil, err
	}
	dt, err := c.dtype(3, tensor.Float64)
	if err != nil {
		return nil, err
	}
	shape := []int{n, m}
	if _, err := shapeOf(seqValue{elts: []value{syntax.PyInt(int64(n)), syntax.PyInt(int64(m))}, pos: []syntax.SrcPos{c.pos, c.pos}}, c.pos); err != nil {
		return nil, err
	}
	chunks, err := c.chunks(4, shape)
	if err != nil {
		return nil, err
	}
	return c.b.AddAt(c.pos, &spec.Node{Op: tensor.OpEye, Shape: shape, DType: dt, Chunks: chunks, Attrs: spec.Attrs{K: k}})
}

// random finishes a generator node: chunks= is argument ci, seed= si.
func (c *call) random(n *spec.Node, ci, si int) (value, error) {
	var err error
	if n.Chunks, err = c.chunks(ci, n.Shape); err != nil {
		return nil, err
	}
	if n.Attrs.Seed, err = c.seed(si); err != nil {
		return nil, err
	}
	return c.b.AddAt(c.pos, n)
}

func randint(c *call) (value, error) {
	if !c.has(0) {
		return nil, c.missing(0)
	}
	low, err := c.int(0, 0)
	if err != nil {
		return nil, err
	}
	high := low
	if c.has(1) {
		if high, err = c.int(1, 0); err != nil {
			return nil, err
		}
	} else {
		low = 0
	}
	if low >= high {
		return nil, syntax.Errorf(c.pos, "low >= high")
	}
	shape, err := c.size(2)
	if err != nil {
		return nil, err
	}
	dt, err := c.dtype(3, tensor.Int64)
	if err != nil {
		return nil, err
	}
	if !dt.IsInteger() {
		return nil, c.errorf(3, "Unsupported dtype %s for randint", dt)
	}
	if lo, hi := dt.IntRange(); int64(low) < lo {
		return nil, c.errorf(0, "low is out of bounds for %s", dt)
	} else if int64(high-1) > hi {
		return nil, c.errorf(1, "high is out of bounds for %s", dt)
	}
	v, err := c.random(&spec.Node{Op: tensor.OpRandint, Shape: shape, DType: tensor.Int64, Attrs: spec.Attrs{Low: int64(low), High: int64(high)}}, 4, 5)
	if err != nil || dt == tensor.Int64 {
		return v, err
	}
	return c.b.Astype(c.pos, v.(*spec.Node), dt)
}

// twoParam implements uniform and normal: two float parameters with
// defaults d0 and d1, then size=, chunks= and seed=.
func twoParam(c *call, op string, d0, d1 float64) (value, error) {
	a, err := c.float(0, d0)
	if err != nil {
		return nil, err
	}
	b, err := c.float(1, d1)
	if err != nil {
		return nil, err
	}
	if op == tensor.OpNormal && b < 0 {
		return nil, c.errorf(1, "scale < 0")
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return nil, syntax.Errorf(c.pos, "%s: parameters must be finite", c.name)
	}
	shape, err := c.size(2)
	if err != nil {
		return nil, err
	}
	return c.random(&spec.Node{Op: op, Shape: shape, DType: tensor.Float64, Attrs: spec.Attrs{Start: a, Step: b}}, 3, 4)
}
