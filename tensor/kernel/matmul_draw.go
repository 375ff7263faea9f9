package kernel

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
)

// A blockSource gives a matmul op the blocks it multiplies: its inputs, when
// it draws none, else its inputs and the drawn blocks in the order of
// args.Blocks. A drawn block is made only when get is called, into a buffer
// of the scratch pool that get's release gives back.
type blockSource struct {
	ctx  context.Context
	in   []*tensor.Array
	args *chunk.MatmulArgs
	at   []int // the input of each block, or -1 for a drawn one
}

func newBlockSource(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*blockSource, int, error) {
	s := &blockSource{ctx: ctx, in: in}
	a, ok := op.Args.(chunk.MatmulArgs)
	if !ok {
		if op.Args != nil {
			return nil, 0, fmt.Errorf("bad args %T", op.Args)
		}
		return s, len(in), nil
	}
	s.args = &a
	nblocks := len(a.Blocks)
	if a.Blocks == nil {
		nblocks = len(a.Views)
	} else if a.Views != nil && len(a.Views) != nblocks {
		return nil, 0, fmt.Errorf("%d views for %d blocks", len(a.Views), nblocks)
	}
	s.at = make([]int, nblocks)
	next := 0
	for i := range nblocks {
		if a.Blocks == nil || a.Blocks[i].Kind == "" {
			if next >= len(in) {
				return nil, 0, fmt.Errorf("%d inputs for %d read blocks", len(in), next+1)
			}
			if a.Views != nil {
				if err := checkView(a.Views[i], in[next]); err != nil {
					return nil, 0, fmt.Errorf("block %d: %w", i, err)
				}
			}
			s.at[i] = next
			next++
			continue
		}
		b := &a.Blocks[i]
		if !chunk.IsGenOp(b) || !chunk.RedrawnGens[b.Kind] || len(b.Shape) != 2 {
			return nil, 0, fmt.Errorf("block %d: %s of shape %v is no random 2-D block", i, b.Kind, b.Shape)
		}
		s.at[i] = -1
	}
	if next != len(in) {
		return nil, 0, fmt.Errorf("%d inputs for %d read blocks", len(in), next)
	}
	return s, nblocks, nil
}

// checkView checks that v is a part of the 2-D chunk x.
func checkView(v chunk.BlockView, x *tensor.Array) error {
	if len(x.Shape) != 2 || v.R0 < 0 || v.R0 > v.R1 || v.R1 > x.Shape[0] || v.C0 < 0 || v.C0 > v.C1 || v.C1 > x.Shape[1] {
		return fmt.Errorf("view rows [%d, %d) columns [%d, %d) of a chunk of shape %v", v.R0, v.R1, v.C0, v.C1, x.Shape)
	}
	return nil
}

// shape returns the shape of block i without making it.
func (s *blockSource) shape(i int) []int {
	if v := s.view(i); v != nil {
		return v.Shape()
	}
	if s.args == nil || s.at[i] >= 0 {
		return s.in[s.inputOf(i)].Shape
	}
	return s.args.Blocks[i].Shape
}

// view returns the part of its input that read block i is, nil for all
// of it (or a drawn block).
func (s *blockSource) view(i int) *chunk.BlockView {
	if s.args == nil || s.args.Views == nil || s.at[i] < 0 {
		return nil
	}
	return &s.args.Views[i]
}

func (s *blockSource) inputOf(i int) int {
	if s.args == nil {
		return i
	}
	return s.at[i]
}

// get returns block i, drawing it into a scratch buffer when it is drawn;
// release gives the buffer back once the block is no longer read. A read
// block with a view is returned as its whole input: see view.
func (s *blockSource) get(i int) (a *tensor.Array, release func(), err error) {
	if s.args == nil || s.at[i] >= 0 {
		return s.in[s.inputOf(i)], func() {}, nil
	}
	g := &s.args.Blocks[i]
	buf := scratch.take(g.DType, g.Shape)
	ctx := tensor.WithAlloc(s.ctx, func(dt tensor.DType, shape []int, zero bool) *tensor.Array {
		if dt != buf.DType || tensor.NumElements(shape) != buf.Len() {
			return nil
		}
		if zero {
			clear(buf.Data)
		}
		return buf
	})
	a, err = Run(ctx, g, nil)
	if err != nil {
		scratch.put(buf)
		return nil, nil, err
	}
	return a, func() { scratch.put(buf) }, nil
}

// filler returns, for a drawn block i that rand makes in float64, a
// function that makes any segment of any of its rows, the values
// randomKernel would draw there (see gemm.DgemmFilled): dst[j] is the
// value of row r, column c+j of the block.
func (s *blockSource) filler(i int) (func(dst []float64, r, c int), bool) {
	if s.args == nil || s.at[i] >= 0 {
		return nil, false
	}
	g := &s.args.Blocks[i]
	if g.Kind != tensor.OpRand || g.DType != tensor.Float64 || len(g.Shape) != 2 {
		return nil, false
	}
	args, err := genArgs(g, nil)
	if err != nil {
		return nil, false // get reports it
	}
	st := elem.NewRandStream(args.Seed, 0)
	row0, col0, width := args.Offset[0], args.Offset[1], args.Global[1]
	return func(dst []float64, r, c int) {
		// The counter of an element is its flat index in the whole
		// tensor, as forGlobalRows gives it to randomKernel.
		expr.UniformFill(dst, st, uint64((row0+r)*width+col0+c))
	}, true
}

// symmetric says whether every pair of blocks, of the nblocks, is a block
// x of a float chunk and x's transpose, as read from the same buffer: xᵀ x
// or x xᵀ, the diagonal blocks of x.T @ x (and x @ x.T). Their sum is a
// symmetric matrix, of which the kernel computes one triangle.
func (s *blockSource) symmetric(nblocks int) bool {
	if s.args == nil || s.args.Views == nil || nblocks == 0 {
		return false
	}
	for p := 0; p < nblocks; p += 2 {
		if s.at[p] < 0 || s.at[p+1] < 0 {
			return false
		}
		va, vb := s.args.Views[p], s.args.Views[p+1]
		if va.Trans == vb.Trans || va.R0 != vb.R0 || va.R1 != vb.R1 || va.C0 != vb.C0 || va.C1 != vb.C1 {
			return false
		}
		x, y := s.in[s.at[p]], s.in[s.at[p+1]]
		if x != y && (len(x.Data) == 0 || len(y.Data) != len(x.Data) || &x.Data[0] != &y.Data[0]) {
			return false
		}
		if x.DType != tensor.Float64 && x.DType != tensor.Float32 {
			return false
		}
	}
	return true
}
