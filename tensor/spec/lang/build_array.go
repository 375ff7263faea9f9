package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// Literal arrays: array([[1, 2], [3, 4]]), asarray, and a list of numbers
// wherever a tensor is expected (x[[0, 2]], isin(x, [1, 2]), take(x, [3])).
// The literal's dtype is NumPy's for Python numbers (bool, int64 or
// float64), cast to dtype= when given; it becomes one OpArray node, cut
// into chunks like an upload.

func registerArrays(l *library) {
	for _, name := range []string{"array", "asarray", "asanyarray"} {
		l.register(name, []string{"object", "dtype", "copy", "order", "subok", "ndmin", "like", "chunks"}, arrayFn)
	}
}

func arrayFn(c *call) (value, error) {
	if !c.args[0].set {
		return nil, c.missing(0)
	}
	var x *spec.Node
	var err error
	switch v := c.args[0].v.(type) {
	case *spec.Node:
		x = v
	case syntax.PyNum:
		x, err = c.b.Constant(c.at(0), v, v.Dt)
	case seqValue:
		x, err = c.b.arrayLiteral(c.at(0), v, c.param("chunks"), c)
	default:
		return nil, c.errorf(0, "%s(): a %s is not an array", c.name, typeName(v))
	}
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"order", "subok", "like"} {
		if i := c.param(name); c.has(i) {
			return nil, c.errorf(i, "%s(): %s= is not supported", c.name, name)
		}
	}
	if i := c.param("ndmin"); c.has(i) {
		nd, err := c.int(i, 0)
		if err != nil {
			return nil, err
		}
		if nd > len(x.Shape) {
			shape := spec.CloneInts(x.Shape)
			for len(shape) < nd {
				shape = append([]int{1}, shape...)
			}
			if x, err = c.b.Reshape(c.pos, x, shape); err != nil {
				return nil, err
			}
		}
	}
	if i := c.param("dtype"); c.has(i) {
		dt, err := c.dtype(i, 0)
		if err != nil {
			return nil, err
		}
		return c.b.Astype(c.pos, x, dt)
	}
	return x, nil
}

// arrayLiteral makes the array of the nested list s of numbers; ci is the
// chunks= argument of c (-1 or c nil: the default chunks).
func (b *builder) arrayLiteral(p syntax.SrcPos, s seqValue, ci int, c *call) (*spec.Node, error) {
	var shape []int
	var nums []syntax.PyNum
	var walk func(v value, depth int, at syntax.SrcPos) error
	walk = func(v value, depth int, at syntax.SrcPos) error {
		switch v := v.(type) {
		case seqValue:
			if depth == len(shape) {
				if len(nums) > 0 {
					return syntax.Errorf(at, "setting an array element with a sequence. The requested array has an inhomogeneous shape after %d dimensions", depth)
				}
				shape = append(shape, len(v.elts))
			} else if depth > len(shape) || shape[depth] != len(v.elts) {
				return syntax.Errorf(at, "setting an array element with a sequence. The requested array has an inhomogeneous shape after %d dimensions", depth)
			}
			for i, e := range v.elts {
				if err := walk(e, depth+1, v.pos[i]); err != nil {
					return err
				}
			}
		case syntax.PyNum:
			if depth != len(shape) {
				return syntax.Errorf(at, "setting an array element with a sequence. The requested array has an inhomogeneous shape after %d dimensions", depth)
			}
			if len(nums) >= tensor.MaxArrayLiteral {
				return syntax.Errorf(at, "a literal array of more than %d elements: upload it, or make it with the creation functions", tensor.MaxArrayLiteral)
			}
			nums = append(nums, v)
		case *spec.Node:
			return syntax.Errorf(at, "an array of tensors: join them with stack or concatenate")
		default:
			return syntax.Errorf(at, "a %s in an array of numbers", typeName(v))
		}
		return nil
	}
	if err := walk(s, 0, p); err != nil {
		return nil, err
	}
	dt := tensor.Bool
	for _, n := range nums {
		switch {
		case n.IsFloat():
			dt = tensor.Float64
		case n.Dt != tensor.Bool && dt == tensor.Bool:
			dt = tensor.Int64
		}
	}
	if len(nums) == 0 {
		dt = tensor.Float64 // np.array([]) is float64
	}
	a := tensor.NewArray(dt, shape)
	for i, n := range nums {
		switch dt {
		case tensor.Float64:
			a.Float64s()[i] = n.Float()
		case tensor.Int64:
			a.Int64s()[i] = n.I
		default:
			a.Data[i] = byte(n.I)
		}
	}
	var chunks [][]int
	var err error
	if c != nil && ci >= 0 && c.has(ci) {
		chunks, err = c.chunks(ci, shape)
	} else {
		chunks, err = spec.DefaultChunksAt(shape, p)
	}
	if err != nil {
		return nil, err
	}
	return b.AddAt(p, &spec.Node{Op: tensor.OpArray, Shape: spec.CloneInts(shape), DType: dt, Chunks: chunks, Attrs: spec.Attrs{Data: a.Data}})
}
