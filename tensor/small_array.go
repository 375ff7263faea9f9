package tensor

import "context"

// packedArray is an array of at most two axes and packedBytes of data in
// one allocation: the header, its shape and its data. The kernels of a
// graph of tiny chunks make one such output per op, and three allocations
// an op cost more there than the op's work.
type packedArray struct {
	a     Array
	shape [2]int
	data  [packedBytes]byte // 8-byte aligned: it follows the ints
}

// packedBytes bounds the data of a packed array: a few scalars, or a
// partial of a reduction and its count.
const packedBytes = 32

// newSmallArray is NewArray, in one allocation when the array is small.
func newSmallArray(dt DType, shape []int) *Array {
	n := NumElements(shape) * dt.Size()
	if len(shape) > 2 || n > packedBytes {
		return NewArray(dt, shape)
	}
	p := &packedArray{}
	copy(p.shape[:], shape)
	p.a = Array{DType: dt, Shape: p.shape[:len(shape):len(shape)], Data: p.data[:n:n]}
	return &p.a
}

// newSmallOutput is newOutput for a kernel whose output may be small: the
// context's allocator first, else newSmallArray.
func newSmallOutput(ctx context.Context, op *ChunkOp) *Array {
	if alloc, ok := ctx.Value(allocKey{}).(Alloc); ok && alloc != nil {
		if a := alloc(op.DType, op.Shape, true); a != nil {
			return a
		}
	}
	return newSmallArray(op.DType, op.Shape)
}
