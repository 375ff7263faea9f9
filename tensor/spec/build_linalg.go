package spec

import (
	"math"

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
		return c.b.matmul(c.pos, x, y)
	})
	dot := func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		return c.b.dot(c.pos, x, y)
	}
	l.register("dot", []string{"a", "b"}, dot)
	l.registerMethod("dot", []string{"a", "b"}, dot)
	l.register("outer", []string{"a", "b"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		if x, err = c.b.reshape(c.pos, x, []int{tensor.NumElements(x.Shape), 1}); err != nil {
			return nil, err
		}
		if y, err = c.b.reshape(c.pos, y, []int{1, tensor.NumElements(y.Shape)}); err != nil {
			return nil, err
		}
		return c.b.node(c.pos, tensor.OpMultiply, Attrs{}, x, y)
	})
	l.register("tensordot", []string{"a", "b", "axes"}, func(c *call) (value, error) {
		x, y, err := c.pair()
		if err != nil {
			return nil, err
		}
		var ax, ay []int
		if !c.args[2].set {
			ax, ay, err = lastFirst(2, x, y, c.pos)
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
				ax, ay, err = lastFirst(n, x, y, c.args[2].pos)
			}
		}
		if err != nil {
			return nil, err
		}
		return c.b.tensordot(c.at(2), x, y, ax, ay)
	})
	l.register("linalg.norm", []string{"x", "ord", "axis", "keepdims"}, norm)
}

// pair returns the first two arguments as tensors.
func (c *call) pair() (*Node, *Node, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, nil, err
	}
	y, err := c.tensor(1)
	return x, y, err
}

// lastFirst returns the axes tensordot(x, y, n) sums over: x's last n and
// y's first n.
func lastFirst(n int, x, y *Node, p syntax.SrcPos) ([]int, []int, error) {
	if n < 0 || n > len(x.Shape) || n > len(y.Shape) {
		return nil, nil, syntax.Errorf(p, "tensordot: %d axes for arrays of dimension %d and %d", n, len(x.Shape), len(y.Shape))
	}
	ax, ay := make([]int, n), make([]int, n)
	for i := range n {
		ax[i] = len(x.Shape) - n + i
		ay[i] = i
	}
	return ax, ay, nil
}

// matmul is x @ y for 1-D and 2-D operands, with NumPy's rules for 1-D ones:
// a vector on the left is a row, on the right a column, and the added axis
// is removed from the result.
func (b *builder) matmul(p syntax.SrcPos, x, y *Node) (*Node, error) {
	for i, n := range []*Node{x, y} {
		if len(n.Shape) == 0 {
			return nil, syntax.Errorf(p, "matmul: Input operand %d does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)", i)
		}
		if len(n.Shape) > 2 {
			return nil, syntax.Errorf(p, "matmul of arrays with more than 2 dimensions is not supported yet")
		}
	}
	xs, ys := x.Shape, y.Shape
	if a, b := xs[len(xs)-1], ys[max(len(ys)-2, 0)]; a != b && a != tensor.Unknown && b != tensor.Unknown {
		// Lengths the data decides are checked when they are known.
		return nil, syntax.ErrAt(p, notAligned(xs, ys))
	}
	var out []int
	var err error
	if len(xs) == 1 {
		if x, err = b.reshape(p, x, []int{1, xs[0]}); err != nil {
			return nil, err
		}
	} else {
		out = append(out, xs[0])
	}
	if len(ys) == 1 {
		if y, err = b.reshape(p, y, []int{ys[0], 1}); err != nil {
			return nil, err
		}
	} else {
		out = append(out, ys[1])
	}
	r, err := b.node(p, tensor.OpMatmul, Attrs{}, x, y)
	if err != nil {
		return nil, err
	}
	return b.reshape(p, r, cloneInts(out))
}

// dot is numpy.dot: a product with a 0-d operand, matmul for 1-D and 2-D
// operands, and otherwise a sum over x's last axis and y's second to last.
func (b *builder) dot(p syntax.SrcPos, x, y *Node) (*Node, error) {
	if len(x.Shape) == 0 || len(y.Shape) == 0 {
		return b.node(p, tensor.OpMultiply, Attrs{}, x, y)
	}
	if len(x.Shape) <= 2 && len(y.Shape) <= 2 {
		return b.matmul(p, x, y)
	}
	ay := max(len(y.Shape)-2, 0)
	if x.Shape[len(x.Shape)-1] != y.Shape[ay] {
		return nil, syntax.ErrAt(p, notAligned(x.Shape, y.Shape))
	}
	return b.tensordot(p, x, y, []int{len(x.Shape) - 1}, []int{ay})
}

// tensordot sums the products of x and y over axes ax of x and ay of y:
// transpose each so that the summed axes meet, flatten to 2-D, matmul, and
// reshape to x's free axes followed by y's.
func (b *builder) tensordot(p syntax.SrcPos, x, y *Node, ax, ay []int) (*Node, error) {
	if len(ax) != len(ay) {
		return nil, syntax.Errorf(p, "shape-mismatch for sum")
	}
	var err error
	if ax, err = normAxesKeepOrder(ax, len(x.Shape), p); err != nil {
		return nil, err
	}
	if ay, err = normAxesKeepOrder(ay, len(y.Shape), p); err != nil {
		return nil, err
	}
	k := 1
	for i := range ax {
		if x.Shape[ax[i]] != y.Shape[ay[i]] {
			return nil, syntax.Errorf(p, "shape-mismatch for sum")
		}
		k *= x.Shape[ax[i]]
	}
	freeX, freeY := freeAxes(len(x.Shape), ax), freeAxes(len(y.Shape), ay)
	var out []int
	m, n := 1, 1
	for _, a := range freeX {
		out = append(out, x.Shape[a])
		m *= x.Shape[a]
	}
	for _, a := range freeY {
		out = append(out, y.Shape[a])
		n *= y.Shape[a]
	}
	if x, err = b.transpose(p, x, append(freeX, ax...)); err != nil {
		return nil, err
	}
	if x, err = b.reshape(p, x, []int{m, k}); err != nil {
		return nil, err
	}
	if y, err = b.transpose(p, y, append(append([]int{}, ay...), freeY...)); err != nil {
		return nil, err
	}
	if y, err = b.reshape(p, y, []int{k, n}); err != nil {
		return nil, err
	}
	r, err := b.node(p, tensor.OpMatmul, Attrs{}, x, y)
	if err != nil {
		return nil, err
	}
	return b.reshape(p, r, cloneInts(out))
}

// normAxesKeepOrder resolves negative axes and rejects repeats, keeping the
// given order.
func normAxesKeepOrder(axes []int, nd int, p syntax.SrcPos) ([]int, error) {
	out := make([]int, len(axes))
	for i, a := range axes {
		ax, err := normAxis(a, nd, p)
		if err != nil {
			return nil, err
		}
		for _, o := range out[:i] {
			if o == ax {
				return nil, syntax.Errorf(p, "repeated axis in tensordot")
			}
		}
		out[i] = ax
	}
	return out, nil
}

func freeAxes(nd int, used []int) []int {
	var out []int
	for a := range nd {
		if !containsInt(used, a) {
			out = append(out, a)
		}
	}
	return out
}

func containsInt(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
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
		if x, err = b.astype(c.pos, x, tensor.Float64); err != nil {
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
		if axes, err = normAxesKeepOrder(raw, nd, c.args[2].pos); err != nil {
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
	sumSq := func(x *Node, axes []int, keep bool) (*Node, error) {
		sq, err := b.node(p, tensor.OpMultiply, Attrs{}, x, x)
		if err != nil {
			return nil, err
		}
		var ax []int
		if axes != nil {
			ax = sortedAxes(axes, len(x.Shape))
		}
		s, err := b.node(p, tensor.OpSum, Attrs{Axes: ax, Keepdims: keep}, sq)
		if err != nil {
			return nil, err
		}
		return b.node(p, tensor.OpSqrt, Attrs{}, s)
	}
	abs := func(x *Node) (*Node, error) { return b.node(p, tensor.OpAbs, Attrs{}, x) }
	red := func(op string, x *Node, axes []int, keep bool) (*Node, error) {
		return b.node(p, op, Attrs{Axes: sortedAxes(axes, len(x.Shape)), Keepdims: keep}, x)
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
		return b.reshape(p, r, ones)
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
			zero := b.scalar(syntax.PyInt(0))
			nz, err := b.node(p, tensor.OpNotEqual, Attrs{}, x, zero)
			if err != nil {
				return nil, err
			}
			if nz, err = b.astype(p, nz, x.DType); err != nil {
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
		pw, err := b.node(p, tensor.OpPower, Attrs{}, a, b.scalar(syntax.PyFloat(ordNum)))
		if err != nil {
			return nil, err
		}
		s, err := red(tensor.OpSum, pw, axes, keepdims)
		if err != nil {
			return nil, err
		}
		// NumPy raises to 1/ord in place, keeping the sum's dtype.
		inv, err := b.addAt(p, &Node{Op: tensor.OpScalar, Shape: []int{}, DType: s.DType, Chunks: [][]int{},
			Attrs: Attrs{Value: float64(castFloat(1/ordNum, s.DType))}})
		if err != nil {
			return nil, err
		}
		return b.node(p, tensor.OpPower, Attrs{}, s, inv)
	case 2:
		row, col := axes[0], axes[1]
		var r *Node
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
			sv, err := b.node(p, tensor.OpSVDS, Attrs{}, x)
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
			shape := cloneInts(x.Shape)
			shape[row], shape[col] = 1, 1
			return b.reshape(p, r, shape)
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
	s := cloneInts(axes)
	sortInts(s)
	return s
}
