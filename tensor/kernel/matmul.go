package kernel

import (
	"context"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/internal/gemm"
	"marsfs/tensor/kernel/elem"
)

// matmulKernel adds up block products: its blocks are pairs (a, b), each a
// (m x k_l) and b (k_l x n), read from its inputs or drawn (see
// MatmulArgs), and its output the sum of the products a b, each block first
// converted to the output dtype. Bool blocks multiply as NumPy does: the
// logical or of ands. With no pairs, or empty blocks, the output is zero.
func matmulKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	src, nblocks, err := newBlockSource(ctx, op, in)
	if err != nil {
		return nil, err
	}
	if nblocks%2 != 0 {
		return nil, fmt.Errorf("%d blocks, want pairs", nblocks)
	}
	if len(op.Shape) != 2 {
		return nil, fmt.Errorf("product of shape %v is not 2-D", op.Shape)
	}
	m, n := op.Shape[0], op.Shape[1]
	for p := 0; p < nblocks; p += 2 {
		as, bs := src.shape(p), src.shape(p+1)
		if len(as) != 2 || len(bs) != 2 || as[1] != bs[0] || as[0] != m || bs[1] != n {
			return nil, fmt.Errorf("blocks of shapes %v and %v for a product of shape %v", as, bs, op.Shape)
		}
	}
	if !op.DType.Valid() {
		return nil, fmt.Errorf("invalid dtype %v", op.DType)
	}
	// A float product with a pair to multiply overwrites its output (beta
	// 0 at first), which therefore need not be cleared; other dtypes
	// accumulate into zeros.
	overwrite := false
	if op.DType == tensor.Float64 || op.DType == tensor.Float32 {
		for p := 0; p < nblocks; p += 2 {
			overwrite = overwrite || tensor.NumElements(src.shape(p)) > 0 && tensor.NumElements(src.shape(p+1)) > 0
		}
	}
	var out *tensor.Array
	if overwrite {
		out = elem.NewOutputAll(ctx, op)
	} else {
		out = elem.NewOutput(ctx, op)
	}
	// beta is 0 until a product has been written: the first one overwrites
	// the output, the others add to it.
	var beta float64 // 0 or 1, exact in float32 too
	sym := overwrite && src.symmetric(nblocks)
	for p := 0; p < nblocks; p += 2 {
		if k := src.shape(p)[1]; m == 0 || n == 0 || k == 0 {
			continue // adds zero
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := multiplyPair(ctx, src, p, out, beta, sym); err != nil {
			return nil, err
		}
		beta = 1
	}
	if sym && beta == 1 {
		switch out.DType {
		case tensor.Float64:
			mirrorUpper(out.Float64s(), n)
		case tensor.Float32:
			mirrorUpper(out.Float32s(), n)
		}
	}
	return out, nil
}

// multiplyPair adds (beta 1) or writes (beta 0) the product of the blocks
// p and p+1 of src to out; only its upper triangle when sym, the pair
// being a block and its transpose (see blockSource.symmetric).
func multiplyPair(ctx context.Context, src *blockSource, p int, out *tensor.Array, beta float64, sym bool) error {
	if out.DType == tensor.Float64 && !sym && filledProducts {
		// Two blocks drawn by rand: the product makes their values as
		// it packs them, never storing either whole, and packs them
		// from cache rather than reading 16 MB (at 1000 x 1000) back
		// from memory. The values, and so the results, are the same.
		if fa, ok := src.filler(p); ok {
			if fb, ok := src.filler(p + 1); ok {
				sa, sb := src.shape(p), src.shape(p+1)
				m, k, n := sa[0], sa[1], sb[1]
				gemm.DgemmFilled(m, n, k, 1, fa, fb, beta, out.Float64s(), n)
				return nil
			}
		}
	}
	ga, releaseA, err := src.get(p)
	if err != nil {
		return fmt.Errorf("block %d: %w", p, err)
	}
	defer releaseA()
	gb, releaseB, err := src.get(p + 1)
	if err != nil {
		return fmt.Errorf("block %d: %w", p+1, err)
	}
	defer releaseB()
	a, b := ConvertChunk(ga, out.DType), ConvertChunk(gb, out.DType)
	va, vb := src.view(p), src.view(p+1)
	sa, sb := src.shape(p), src.shape(p+1)
	m, k, n := sa[0], sa[1], sb[1]
	switch {
	case out.DType == tensor.Float64 && sym:
		blasSyrk(blas64.Implementation().Dsyrk, m, k, viewOf(a.Float64s(), a, va), beta, out.Float64s())
		return nil
	case out.DType == tensor.Float32 && sym:
		blasSyrk(blas32.Implementation().Ssyrk, m, k, viewOf(a.Float32s(), a, va), float32(beta), out.Float32s())
		return nil
	case out.DType == tensor.Float64:
		blasGemm(blas64.Implementation().Dgemm, m, k, n, viewOf(a.Float64s(), a, va), viewOf(b.Float64s(), b, vb), beta, out.Float64s())
		return nil
	case out.DType == tensor.Float32:
		blasGemm(blas32.Implementation().Sgemm, m, k, n, viewOf(a.Float32s(), a, va), viewOf(b.Float32s(), b, vb), float32(beta), out.Float32s())
		return nil
	}
	// The other dtypes multiply whole blocks.
	a, b = materialize(a, va), materialize(b, vb)
	switch out.DType {
	case tensor.Int32:
		return matmulLoop(ctx, out.Int32s(), a.Int32s(), b.Int32s(), m, k, n, matmulAxpy[int32])
	case tensor.Int64:
		return matmulLoop(ctx, out.Int64s(), a.Int64s(), b.Int64s(), m, k, n, matmulAxpy[int64])
	case tensor.Uint64:
		return matmulLoop(ctx, out.Uint64s(), a.Uint64s(), b.Uint64s(), m, k, n, matmulAxpy[uint64])
	case tensor.Bool:
		return matmulLoop(ctx, tensor.View[uint8](out.Data), tensor.View[uint8](a.Data), tensor.View[uint8](b.Data), m, k, n, matmulAxpyBool)
	}
	return nil
}

// The blocks of matmulLoop: a block of B of matmulRowBlock rows by
// matmulColBlock columns (128 KiB of int64) stays in L2 while every row of A
// passes over it.
const (
	matmulRowBlock = 64
	matmulColBlock = 256
)

// matmulLoop computes c += a b for row-major a (m x k), b (k x n) and c
// (m x n), where axpy(c, x, b) adds x times the row b to the row c. It
// returns ctx.Err() if ctx is done between blocks.
func matmulLoop[T any](ctx context.Context, c, a, b []T, m, k, n int, axpy func(c []T, x T, b []T)) error {
	for l0 := 0; l0 < k; l0 += matmulRowBlock {
		if err := ctx.Err(); err != nil {
			return err
		}
		l1 := min(l0+matmulRowBlock, k)
		for j0 := 0; j0 < n; j0 += matmulColBlock {
			j1 := min(j0+matmulColBlock, n)
			for i := range m {
				ci := c[i*n+j0 : i*n+j1]
				for l := l0; l < l1; l++ {
					axpy(ci, a[i*k+l], b[l*n+j0:l*n+j1])
				}
			}
		}
	}
	return nil
}

func matmulAxpy[T int32 | int64 | uint64](c []T, x T, b []T) {
	if x == 0 {
		return
	}
	b = b[:len(c)]
	for j, v := range b {
		c[j] += x * v
	}
}

// matmulAxpyBool is matmulAxpy for bools stored as bytes 0 and 1.
func matmulAxpyBool(c []uint8, x uint8, b []uint8) {
	if x == 0 {
		return
	}
	b = b[:len(c)]
	for j, v := range b {
		c[j] |= v
	}
}

// matmulSumKernel adds its inputs, partial products of one output block;
// bools are or-ed.
func matmulSumKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	out := elem.NewOutput(ctx, op)
	for i, a := range in {
		if a.DType != op.DType || !slices.Equal(a.Shape, op.Shape) {
			return nil, fmt.Errorf("input %d is %v%v, want %v%v", i, a.DType, a.Shape, op.DType, op.Shape)
		}
		switch op.DType {
		case tensor.Float64:
			matmulAccumulate(out.Float64s(), a.Float64s())
		case tensor.Float32:
			matmulAccumulate(out.Float32s(), a.Float32s())
		case tensor.Int32:
			matmulAccumulate(out.Int32s(), a.Int32s())
		case tensor.Int64:
			matmulAccumulate(out.Int64s(), a.Int64s())
		case tensor.Bool:
			for j, v := range a.Data {
				out.Data[j] |= v
			}
		default:
			return nil, fmt.Errorf("invalid dtype %v", op.DType)
		}
	}
	return out, nil
}

func matmulAccumulate[T int32 | int64 | float32 | float64](dst, src []T) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] += v
	}
}
