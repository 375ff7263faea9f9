package spec

import (
	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// LastFirst returns the axes tensordot(x, y, n) sums over: x's last n and
// y's first n.
func LastFirst(n int, x, y *Node, p syntax.SrcPos) ([]int, []int, error) {
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

// Matmul is x @ y for 1-D and 2-D operands, with NumPy's rules for 1-D ones:
// a vector on the left is a row, on the right a column, and the added axis
// is removed from the result.
func (b *Builder) Matmul(p syntax.SrcPos, x, y *Node) (*Node, error) {
	for i, n := range []*Node{x, y} {
		if len(n.Shape) == 0 {
			return nil, syntax.Errorf(p, "matmul: Input operand %d does not have enough dimensions (has 0, gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)", i)
		}
	}
	if len(x.Shape) > 2 || len(y.Shape) > 2 {
		return b.matmulND(p, x, y)
	}
	xs, ys := x.Shape, y.Shape
	if a, b := xs[len(xs)-1], ys[max(len(ys)-2, 0)]; a != b && a != tensor.Unknown && b != tensor.Unknown {
		// Lengths the data decides are checked when they are known.
		return nil, syntax.ErrAt(p, notAligned(xs, ys))
	}
	var out []int
	var err error
	if len(xs) == 1 {
		if x, err = b.Reshape(p, x, []int{1, xs[0]}); err != nil {
			return nil, err
		}
	} else {
		out = append(out, xs[0])
	}
	if len(ys) == 1 {
		if y, err = b.Reshape(p, y, []int{ys[0], 1}); err != nil {
			return nil, err
		}
	} else {
		out = append(out, ys[1])
	}
	r, err := b.Node(p, tensor.OpMatmul, Attrs{}, x, y)
	if err != nil {
		return nil, err
	}
	return b.Reshape(p, r, CloneInts(out))
}

// Dot is numpy.dot: a product with a 0-d operand, matmul for 1-D and 2-D
// operands, and otherwise a sum over x's last axis and y's second to last.
func (b *Builder) Dot(p syntax.SrcPos, x, y *Node) (*Node, error) {
	if len(x.Shape) == 0 || len(y.Shape) == 0 {
		return b.Node(p, tensor.OpMultiply, Attrs{}, x, y)
	}
	if len(x.Shape) <= 2 && len(y.Shape) <= 2 {
		return b.Matmul(p, x, y)
	}
	ay := max(len(y.Shape)-2, 0)
	if x.Shape[len(x.Shape)-1] != y.Shape[ay] {
		return nil, syntax.ErrAt(p, notAligned(x.Shape, y.Shape))
	}
	return b.Tensordot(p, x, y, []int{len(x.Shape) - 1}, []int{ay})
}

// Tensordot sums the products of x and y over axes ax of x and ay of y:
// transpose each so that the summed axes meet, flatten to 2-D, matmul, and
// reshape to x's free axes followed by y's.
func (b *Builder) Tensordot(p syntax.SrcPos, x, y *Node, ax, ay []int) (*Node, error) {
	if len(ax) != len(ay) {
		return nil, syntax.Errorf(p, "shape-mismatch for sum")
	}
	var err error
	if ax, err = NormAxesKeepOrder(ax, len(x.Shape), p); err != nil {
		return nil, err
	}
	if ay, err = NormAxesKeepOrder(ay, len(y.Shape), p); err != nil {
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
	if x, err = b.Transpose(p, x, append(freeX, ax...)); err != nil {
		return nil, err
	}
	if x, err = b.Reshape(p, x, []int{m, k}); err != nil {
		return nil, err
	}
	if y, err = b.Transpose(p, y, append(append([]int{}, ay...), freeY...)); err != nil {
		return nil, err
	}
	if y, err = b.Reshape(p, y, []int{k, n}); err != nil {
		return nil, err
	}
	r, err := b.Node(p, tensor.OpMatmul, Attrs{}, x, y)
	if err != nil {
		return nil, err
	}
	return b.Reshape(p, r, CloneInts(out))
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

// NormAxesKeepOrder resolves negative axes and rejects repeats, keeping the
// given order.
func NormAxesKeepOrder(axes []int, nd int, p syntax.SrcPos) ([]int, error) {
	out := make([]int, len(axes))
	for i, a := range axes {
		ax, err := NormAxis(a, nd, p)
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
