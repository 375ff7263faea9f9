package kernel

import (
	"gonum.org/v1/gonum/blas"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// A matView is a 2-D operand of a product as a BLAS takes it: a block of a
// row-major buffer starting at data[off], the rows of the buffer ld
// elements apart, and stored transposed (the operand's rows are columns
// of the buffer) when transposed.
type matView[T any] struct {
	data       []T
	off, ld    int
	transposed bool
}

func (v matView[T]) trans() blas.Transpose {
	if v.transposed {
		return blas.Trans
	}
	return blas.NoTrans
}

// at returns the buffer from the operand's element (i, j) on.
func (v matView[T]) at(i, j int) []T {
	if v.transposed {
		i, j = j, i
	}
	return v.data[v.off+i*v.ld+j:]
}

// viewOf makes the matView of block x (a whole chunk when view is nil)
// whose data are d.
func viewOf[T any](d []T, x *tensor.Array, view *chunk.BlockView) matView[T] {
	cols := x.Shape[1]
	if view == nil {
		return matView[T]{data: d, ld: cols}
	}
	return matView[T]{data: d, off: view.R0*cols + view.C0, ld: cols, transposed: view.Trans}
}

// materialize copies the block that view makes of x into an array of its
// own, for the kernels that read blocks whole.
func materialize(x *tensor.Array, view *chunk.BlockView) *tensor.Array {
	if view == nil {
		return x
	}
	shape := view.Shape()
	out := tensor.NewArray(x.DType, shape)
	size := x.DType.Size()
	cols := x.Shape[1]
	for r := view.R0; r < view.R1; r++ {
		for c := view.C0; c < view.C1; c++ {
			i, j := r-view.R0, c-view.C0
			if view.Trans {
				i, j = j, i
			}
			copy(out.Data[(i*shape[1]+j)*size:][:size], x.Data[(r*cols+c)*size:][:size])
		}
	}
	return out
}
