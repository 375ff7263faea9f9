package spec

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// batchLoop is the most matrices a stacked matmul multiplies one pair at a
// time (each a blocked product); more are multiplied by broadcasting and
// a sum, which holds every product of a row and a column at once.
const batchLoop = 32

// matmulND is x @ y when either has more than 2 dimensions: stacks of
// matrices in the last two axes, the stacks broadcast against each other
// (a 1-D operand is a row on the left, a column on the right, its axis
// removed from the result, as NumPy's).
func (b *Builder) matmulND(p syntax.SrcPos, x, y *Node) (*Node, error) {
	if tensor.HasUnknown(x.Shape) || tensor.HasUnknown(y.Shape) {
		return nil, syntax.Errorf(p, "matmul of stacks of matrices whose lengths depend on the data is not supported yet")
	}
	dt, err := ResultType(x, y)
	if err != nil {
		return nil, syntax.ErrAt(p, err)
	}
	rowVec, colVec := len(x.Shape) == 1, len(y.Shape) == 1
	if rowVec {
		if x, err = b.Reshape(p, x, []int{1, x.Shape[0]}); err != nil {
			return nil, err
		}
	}
	if colVec {
		if y, err = b.Reshape(p, y, []int{y.Shape[0], 1}); err != nil {
			return nil, err
		}
	}
	nx, ny := len(x.Shape), len(y.Shape)
	n, k, k2, m := x.Shape[nx-2], x.Shape[nx-1], y.Shape[ny-2], y.Shape[ny-1]
	if k != k2 {
		return nil, syntax.Errorf(p, "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size %d is different from %d)", k2, k)
	}
	stack, err := broadcastShapes(x.Shape[:nx-2], y.Shape[:ny-2])
	if err != nil {
		return nil, syntax.Errorf(p, "operands could not be broadcast together with remapped shapes [original->remapped]: %s->%s %s->%s",
			ShapeString(x.Shape), ShapeString(x.Shape[:nx-2]), ShapeString(y.Shape), ShapeString(y.Shape[:ny-2]))
	}
	if x, err = b.BroadcastTo(p, x, append(CloneInts(stack), n, k)); err != nil {
		return nil, err
	}
	if y, err = b.BroadcastTo(p, y, append(CloneInts(stack), k, m)); err != nil {
		return nil, err
	}
	batches := tensor.NumElements(stack)
	var r *Node
	if batches <= batchLoop {
		r, err = b.matmulLoop(p, x, y, batches, n, k, m)
	} else {
		r, err = b.matmulBroadcast(p, x, y, len(stack), n, k, m, dt)
	}
	if err != nil {
		return nil, err
	}
	out := CloneInts(stack)
	if !rowVec {
		out = append(out, n)
	}
	if !colVec {
		out = append(out, m)
	}
	return b.Reshape(p, r, out)
}

// matmulLoop multiplies each pair of matrices of the stacks x and y
// (batches of them, flattened) and joins the products along a first axis.
func (b *Builder) matmulLoop(p syntax.SrcPos, x, y *Node, batches, n, k, m int) (*Node, error) {
	xs, err := b.Reshape(p, x, []int{batches, n, k})
	if err != nil {
		return nil, err
	}
	ys, err := b.Reshape(p, y, []int{batches, k, m})
	if err != nil {
		return nil, err
	}
	parts := make([]*Node, 0, batches)
	for i := range batches {
		one := tensor.Slice{Start: i, Step: 1, Len: 1}
		xi, err := b.SliceAxis(p, xs, 0, one)
		if err != nil {
			return nil, err
		}
		if xi, err = b.Reshape(p, xi, []int{n, k}); err != nil {
			return nil, err
		}
		yi, err := b.SliceAxis(p, ys, 0, one)
		if err != nil {
			return nil, err
		}
		if yi, err = b.Reshape(p, yi, []int{k, m}); err != nil {
			return nil, err
		}
		r, err := b.Matmul(p, xi, yi)
		if err != nil {
			return nil, err
		}
		if r, err = b.Reshape(p, r, []int{1, n, m}); err != nil {
			return nil, err
		}
		parts = append(parts, r)
	}
	if len(parts) == 0 {
		// An empty stack: the product's dtype at shape (0, n, m).
		dt, err := ResultType(x, y)
		if err != nil {
			return nil, syntax.ErrAt(p, err)
		}
		return b.FullOf(p, []int{0, n, m}, syntax.PyInt(0), dt)
	}
	return b.Concat(p, parts, 0)
}

// matmulBroadcast is the stacked product as x[..., :, :, None] *
// y[..., None, :, :] summed over k, in the product's dtype.
func (b *Builder) matmulBroadcast(p syntax.SrcPos, x, y *Node, nstack, n, k, m int, dt tensor.DType) (*Node, error) {
	xs := append(CloneInts(x.Shape[:nstack]), n, k, 1)
	ys := append(CloneInts(y.Shape[:nstack]), 1, k, m)
	x4, err := b.Reshape(p, x, xs)
	if err != nil {
		return nil, err
	}
	y4, err := b.Reshape(p, y, ys)
	if err != nil {
		return nil, err
	}
	prod, err := b.Node(p, tensor.OpMultiply, Attrs{}, x4, y4)
	if err != nil {
		return nil, err
	}
	s, err := b.ReduceNode(p, tensor.OpSum, prod, []int{nstack + 1}, false, 0)
	if err != nil {
		return nil, err
	}
	return b.Astype(p, s, dt)
}

// broadcastShapes is NumPy's broadcast of two shapes.
func broadcastShapes(a, c []int) ([]int, error) {
	nd := max(len(a), len(c))
	out := make([]int, nd)
	for i := range nd {
		da, dc := 1, 1
		if j := len(a) - nd + i; j >= 0 {
			da = a[j]
		}
		if j := len(c) - nd + i; j >= 0 {
			dc = c[j]
		}
		switch {
		case da == dc || dc == 1:
			out[i] = da
		case da == 1:
			out[i] = dc
		default:
			return nil, fmt.Errorf("shapes %s and %s do not broadcast", ShapeString(a), ShapeString(c))
		}
	}
	return out, nil
}
