package lang

import (
	"marsfs/tensor/spec"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Linear algebra lowers onto OpMatmul (2-D by 2-D) with reshapes and
// transposes around it, and linalg.norm onto elementwise ops and reductions.

func registerLinalg(l *library) {
	l.register("matmul", []string{"x1", "x2"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		return c.b.Matmul(c.pos, x, y)
	})
	dot := func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		return c.b.Dot(c.pos, x, y)
	}
	l.register("dot", []string{"a", "b"}, dot)
	l.registerMethod("dot", []string{"a", "b"}, dot)
	l.register("outer", []string{"a", "b"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		if x, err = c.b.Reshape(c.pos, x, []int{tensor.NumElements(x.Shape), 1}); err != nil {
			return nil, err
		}
		if y, err = c.b.Reshape(c.pos, y, []int{1, tensor.NumElements(y.Shape)}); err != nil {
			return nil, err
		}
		return c.b.Node(c.pos, tensor.OpMultiply, spec.Attrs{}, x, y)
	})
	l.register("tensordot", []string{"a", "b", "axes"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		var ax, ay []int
		if !c.args[2].set {
			ax, ay, err = spec.LastFirst(2, x, y, c.pos)
		} else if s, ok := c.args[2].v.(seqValue); ok {
			if len(s.elts) != 2 {
				return nil, c.errorf(2, "tensordot: axes must be an int or a pair of axis lists")
			}
			if ax, err = ints(s.elts[0], s.pos[0]); err == nil {
				ay, err = ints(s.elts[1], s.pos[1])
			}
		} else {
			var n int
			if n, err = toInt(c.args[2].v, c.args[2].pos); err == nil {
				ax, ay, err = spec.LastFirst(n, x, y, c.args[2].pos)
			}
		}
		if err != nil {
			return nil, err
		}
		return c.b.Tensordot(c.at(2), x, y, ax, ay)
	})
	l.register("linalg.norm", []string{"x", "ord", "axis", "keepdims"}, norm)
}

// pair returns the first two arguments as tensors.
func (c *call) pair() (*spec.Node, *spec.Node, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, nil, err
	}
	y, err := c.tensor(1)
	return x, y, err
}

// norm is numpy.linalg.norm for vectors and matrices; the matrix norms of
// singular values (2, -2, 'nuc') take them from linalg.svd.
func norm(c *call) (value, error) {
	b := c.b
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if !x.DType.IsFloat() {
		if x, err = b.Astype(c.pos, x, tensor.Float64); err != nil {
			return nil, err
		}
	}
	keepdims, err := c.bool(3, false)
	if err != nil {
		return nil, err
	}
	// ord: None, a string, or a number.
	ordStr, ordNum, ordNone := "", 0.0, !c.has(1)
	if !ordNone {
		switch v := c.args[1].v.(type) {
		case string:
			ordStr = v
		case syntax.PyNum:
			ordNum = v.Float()
		default:
			return nil, c.errorf(1, "Invalid norm order %s", typeName(v))
		}
	}
	nd := len(x.Shape)
	var axes []int
	if c.has(2) {
		raw, err := ints(c.args[2].v, c.args[2].pos)
		if err != nil {
			return nil, err
		}
		if axes, err = spec.NormAxesKeepOrder(raw, nd, c.args[2].pos); err != nil {
			if len(raw) == 2 && raw[0] == raw[1] {
				return nil, c.errorf(2, "Duplicate axes given.")
			}
			return nil, err
		}
	} else {
		for a := range nd {
			axes = append(axes, a)
		}
	}
	p := c.pos
	sumSq := func(x *spec.Node, axes []int, keep bool) (*spec.Node, error) {
		sq, err := b.Node(p, tensor.OpMultiply, spec.Attrs{}, x, x)
		if err != nil {
			return nil, err
		}
		var ax []int
		if axes != nil {
			ax = sortedAxes(axes, len(x.Shape))
		}
		s, err := b.Node(p, tensor.OpSum, spec.Attrs{Axes: ax, Keepdims: keep}, sq)
		if err != nil {
			return nil, err
		}
		return b.Node(p, tensor.OpSqrt, spec.Attrs{}, s)
	}
	abs := func(x *spec.Node) (*spec.Node, error) { return b.Node(p, tensor.OpAbs, spec.Attrs{}, x) }
	red := func(op string, x *spec.Node, axes []int, keep bool) (*spec.Node, error) {
		return b.Node(p, op, spec.Attrs{Axes: sortedAxes(axes, len(x.Shape)), Keepdims: keep}, x)
	}
	if !c.has(2) && (ordNone || nd == 2 && (ordStr == "fro" || ordStr == "f") || nd == 1 && ordStr == "" && ordNum == 2) {
		// The 2-norm of the flattened array, whatever its dimensions.
		r, err := sumSq(x, nil, false)
		if err != nil || !keepdims {
			return r, err
		}
		ones := make([]int, nd)
		for i := range ones {
			ones[i] = 1
		}
		return b.Reshape(p, r, ones)
	}
	switch len(axes) {
	case 1:
		if ordStr != "" {
			return nil, c.errorf(1, "Invalid norm order '%s' for vectors", ordStr)
		}
		switch {
		case ordNone || ordNum == 2:
			return sumSq(x, axes, keepdims)
		case math.IsInf(ordNum, 0):
			a, err := abs(x)
			if err != nil {
				return nil, err
			}
			op := tensor.OpMax
			if ordNum < 0 {
				op = tensor.OpMin
			}
			return red(op, a, axes, keepdims)
		case ordNum == 0:
			zero := b.Scalar(syntax.PyInt(0))
			nz, err := b.Node(p, tensor.OpNotEqual, spec.Attrs{}, x, zero)
			if err != nil {
				return nil, err
			}
			if nz, err = b.Astype(p, nz, x.DType); err != nil {
				return nil, err
			}
			return red(tensor.OpSum, nz, axes, keepdims)
		case ordNum == 1:
			a, err := abs(x)
			if err != nil {
				return nil, err
			}
			return red(tensor.OpSum, a, axes, keepdims)
		}
		a, err := abs(x)
		if err != nil {
			return nil, err
		}
		pw, err := b.Node(p, tensor.OpPower, spec.Attrs{}, a, b.Scalar(syntax.PyFloat(ordNum)))
		if err != nil {
			return nil, err
		}
		s, err := red(tensor.OpSum, pw, axes, keepdims)
		if err != nil {
			return nil, err
		}
		// NumPy raises to 1/ord in place, keeping the sum's dtype.
		inv, err := b.AddAt(p, &spec.Node{Op: tensor.OpScalar, Shape: []int{}, DType: s.DType, Chunks: [][]int{},
			Attrs: spec.Attrs{Value: float64(castFloat(1/ordNum, s.DType))}})
		if err != nil {
			return nil, err
		}
		return b.Node(p, tensor.OpPower, spec.Attrs{}, s, inv)
	case 2:
		row, col := axes[0], axes[1]
		var r *spec.Node
		switch {
		case ordNone || ordStr == "fro" || ordStr == "f":
			if r, err = sumSq(x, axes, false); err != nil {
				return nil, err
			}
		case ordStr == "nuc" || !ordNone && ordStr == "" && (ordNum == 2 || ordNum == -2):
			if nd != 2 {
				return nil, c.errorf(1, "linalg.norm of a stack of matrices with ord=%s is not supported yet", c.ordString())
			}
			// The largest, smallest or sum of the singular values; a
			// transposed matrix has the same ones.
			sv, err := b.Node(p, tensor.OpSVDS, spec.Attrs{}, x)
			if err != nil {
				return nil, err
			}
			op := map[float64]string{2: tensor.OpMax, -2: tensor.OpMin}[ordNum]
			if ordStr == "nuc" {
				op = tensor.OpSum
			}
			if r, err = red(op, sv, []int{0}, false); err != nil {
				return nil, err
			}
		case ordStr == "" && (ordNum == 1 || ordNum == -1 || math.IsInf(ordNum, 0)):
			a, err := abs(x)
			if err != nil {
				return nil, err
			}
			sumAx, redAx := row, col
			if math.IsInf(ordNum, 0) {
				sumAx, redAx = col, row
			}
			if redAx > sumAx {
				redAx--
			}
			s, err := red(tensor.OpSum, a, []int{sumAx}, false)
			if err != nil {
				return nil, err
			}
			op := tensor.OpMax
			if ordNum < 0 {
				op = tensor.OpMin
			}
			if r, err = red(op, s, []int{redAx}, false); err != nil {
				return nil, err
			}
		default:
			return nil, c.errorf(1, "Invalid norm order for matrices.")
		}
		if keepdims {
			shape := spec.CloneInts(x.Shape)
			shape[row], shape[col] = 1, 1
			return b.Reshape(p, r, shape)
		}
		return r, nil
	}
	return nil, syntax.Errorf(c.pos, "Improper number of dimensions to norm.")
}

// castFloat rounds v to dt's precision.
func castFloat(v float64, dt tensor.DType) float64 {
	if dt == tensor.Float32 {
		return float64(float32(v))
	}
	return v
}

func (c *call) ordString() string {
	switch v := c.args[1].v.(type) {
	case string:
		return "'" + v + "'"
	case syntax.PyNum:
		return v.String()
	}
	return "?"
}

// sortedAxes sorts reduction axes; all the axes of an array is nil.
func sortedAxes(axes []int, nd int) []int {
	if len(axes) == nd {
		return nil
	}
	s := spec.CloneInts(axes)
	slices.Sort(s)
	return s
}
