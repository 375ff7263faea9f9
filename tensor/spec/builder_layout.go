package spec

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Flip reverses x along axes.
func (b *Builder) Flip(p syntax.SrcPos, x *Node, axes []int) (*Node, error) {
	sl := make([]tensor.Slice, len(x.Shape))
	identity := true
	for ax, d := range x.Shape {
		sl[ax] = tensor.Slice{Start: 0, Step: 1, Len: d}
		if slices.Contains(axes, ax) && d > 1 {
			sl[ax] = tensor.Slice{Start: d - 1, Step: -1, Len: d}
			identity = false
		}
	}
	if identity {
		return x, nil
	}
	return b.AddAt(p, &Node{Op: tensor.OpSlice, Inputs: []*Node{x}, Attrs: Attrs{Slices: sl}})
}

// RollAxis rolls x along ax by shift, as np.roll does on one axis.
func (b *Builder) RollAxis(p syntax.SrcPos, x *Node, ax, shift int) (*Node, error) {
	n := x.Shape[ax]
	if n == 0 {
		return x, nil
	}
	s := ((shift % n) + n) % n
	if s == 0 {
		return x, nil
	}
	tail, err := b.SliceAxis(p, x, ax, tensor.Slice{Start: n - s, Step: 1, Len: s})
	if err != nil {
		return nil, err
	}
	head, err := b.SliceAxis(p, x, ax, tensor.Slice{Start: 0, Step: 1, Len: n - s})
	if err != nil {
		return nil, err
	}
	return b.Concat(p, []*Node{tail, head}, ax)
}

// IndexGrid returns the row and column indices of an n x m matrix as an
// (n, 1) and a (1, m) int64 arange, which fuse into their reader as
// generators.
func (b *Builder) IndexGrid(p syntax.SrcPos, n, m int) (*Node, *Node, error) {
	mk := func(l int, shape []int) (*Node, error) {
		chunks, err := DefaultChunksAt([]int{l}, p)
		if err != nil {
			return nil, err
		}
		a, err := b.AddAt(p, &Node{Op: tensor.OpArange, Shape: []int{l}, DType: tensor.Int64, Chunks: chunks, Attrs: Attrs{Start: 0, Step: 1}})
		if err != nil {
			return nil, err
		}
		return b.Reshape(p, a, shape)
	}
	i, err := mk(n, []int{n, 1})
	if err != nil {
		return nil, nil, err
	}
	j, err := mk(m, []int{1, m})
	return i, j, err
}

// OffsetMask is the bool (n, m) matrix of j - i <op> k.
func (b *Builder) OffsetMask(p syntax.SrcPos, n, m int, op string, k int) (*Node, error) {
	i, j, err := b.IndexGrid(p, n, m)
	if err != nil {
		return nil, err
	}
	d, err := b.Node(p, tensor.OpSubtract, Attrs{}, j, i)
	if err != nil {
		return nil, err
	}
	return b.Node(p, op, Attrs{}, d, b.Scalar(syntax.PyInt(int64(k))))
}

// Diagonal is the k-th diagonal of the 2-D x (OpDiagonal).
func (b *Builder) Diagonal(p syntax.SrcPos, x *Node, k int) (*Node, error) {
	return b.Node(p, tensor.OpDiagonal, Attrs{K: k}, x)
}

// inferDiagonal sets the shape and dtype of OpDiagonal.
func inferDiagonal(n *Node) error {
	x := n.Inputs[0]
	if len(x.Shape) != 2 {
		return fmt.Errorf("diagonal of a %d-D array: it takes a 2-D one", len(x.Shape))
	}
	k := n.Attrs.K
	l := min(x.Shape[0], x.Shape[1]-k)
	if k < 0 {
		l = min(x.Shape[0]+k, x.Shape[1])
	}
	n.Shape, n.DType = []int{max(l, 0)}, x.DType
	return nil
}
