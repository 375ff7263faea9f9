package tensor

import (
	"context"
	"fmt"
	"slices"
)

// Elementwise ops tile to one op an output chunk. Inputs are first rechunked so
// that, along every output axis, they share the common refinement of the
// chunk boundaries of the inputs that are not broadcast along it; an axis an
// input broadcasts (size 1, or missing) stays one chunk of size 1.
//
// A kernel casts its input chunks to a compute dtype, then applies a typed
// loop of the form func(dst, a, b []T) row by row: a row is a run of the
// output's last (coalesced) axis, and an input broadcast along that axis is
// repeated into a scratch row first. When every input already has the
// output's shape the loop runs over whole blocks. Because the loops work on
// plain slices, an expression of several ops can be evaluated block by block.

// ElemArgs are the arguments of the elementwise kernels; ChunkOp.Kind names
// the op (OpAdd, OpSqrt, ...).
type ElemArgs struct {
	// Compute is the dtype inputs are cast to before the loop runs: the
	// output dtype for arithmetic, the promoted input dtype for comparisons,
	// bool for logical_and/or and where's condition.
	Compute  DType
	Decimals int // OpRound
}

// elemBlock is the number of elements a kernel processes between checks of
// its context (and the block size of the full-shape fast path).
const elemBlock = 1 << 15

var (
	elemUnaryOps = []string{OpNegative, OpAbs, OpSqrt, OpExp, OpLog, OpLog1p, OpSin, OpCos, OpTan,
		OpTanh, OpFloor, OpCeil, OpRound, OpSign, OpLogicalNot, OpInvert, OpAstype}
	elemBinaryOps = []string{OpAdd, OpSubtract, OpMultiply, OpDivide, OpFloorDiv, OpMod, OpPower,
		OpMaximum, OpMinimum, OpEqual, OpNotEqual, OpLess, OpLessEq, OpGreater, OpGreaterEq,
		OpLogicalAnd, OpLogicalOr, OpBitAnd, OpBitOr}
)

// elemKinds are the elementwise ops, whose chunk ops have the node's op as
// their kind.
var elemKinds = setOf(elemUnaryOps, elemBinaryOps, []string{OpWhere})

// setOf returns the set of the strings of lists.
func setOf(lists ...[]string) map[string]bool {
	m := make(map[string]bool)
	for _, l := range lists {
		for _, s := range l {
			m[s] = true
		}
	}
	return m
}

func isComparison(op string) bool {
	switch op {
	case OpEqual, OpNotEqual, OpLess, OpLessEq, OpGreater, OpGreaterEq:
		return true
	}
	return false
}

// elemArgs are the arguments of the chunks of elementwise node n.
func elemArgs(n *Node) ElemArgs {
	return ElemArgs{Compute: computeDType(n), Decimals: n.Attrs.Decimals}
}

// computeDType is the dtype n's kernel casts its inputs to.
func computeDType(n *Node) DType {
	switch {
	case isComparison(n.Op):
		return comparisonDType(n.Inputs[0], n.Inputs[1])
	case n.Op == OpLogicalAnd || n.Op == OpLogicalOr:
		return Bool
	case n.Op == OpLogicalNot || n.Op == OpAstype:
		return n.Inputs[0].DType
	}
	return n.DType
}

// comparisonDType is the dtype NumPy 1.24 compares a and b in: their
// result type, with Python scalars yielding by value (f32 < 70000 compares in
// float64, where the value does not fit float32 exactly).
func comparisonDType(a, b *Node) DType {
	if dt, err := resultType(a, b); err == nil {
		return dt
	}
	return Promote(a.DType, b.DType)
}

func tileElementwise(t *tiler, n *Node) (*TiledTensor, error) {
	nd := len(n.Shape)
	ins := make([]*TiledTensor, len(n.Inputs))
	for i := range n.Inputs {
		ins[i] = t.input(n, i)
		if len(ins[i].Shape) > nd {
			return nil, fmt.Errorf("input %d has more axes (%v) than the result %v", i, ins[i].Shape, n.Shape)
		}
	}
	chunks := make([][]int, nd)
	for ax := 0; ax < nd; ax++ {
		size := n.Shape[ax]
		if size == 0 {
			chunks[ax] = []int{0}
			continue
		}
		var same []int // the chunks every input has along ax, if they agree
		agree := true
		for _, in := range ins {
			if iax := ax - (nd - len(in.Shape)); iax >= 0 && in.Shape[iax] == size {
				if same == nil {
					same = in.Chunks[iax]
				} else if !slices.Equal(same, in.Chunks[iax]) {
					agree = false
				}
			}
		}
		if agree && same != nil && !slices.Contains(same, 0) {
			chunks[ax] = same // what cutting them again would make
			continue
		}
		var cuts []int
		for _, in := range ins {
			if iax := ax - (nd - len(in.Shape)); iax >= 0 && in.Shape[iax] == size {
				s := 0
				for _, c := range in.Chunks[iax] {
					cuts = append(cuts, s)
					s += c
				}
			}
		}
		chunks[ax] = cutsToChunks(cuts, size)
	}
	// Align each input to the output's chunking.
	aligned := make([]*TiledTensor, len(ins))
	for i, in := range ins {
		off := nd - len(in.Shape)
		want := make([][]int, len(in.Shape))
		for iax, s := range in.Shape {
			if s != n.Shape[iax+off] {
				if s != 1 {
					return nil, fmt.Errorf("input %d of shape %v does not broadcast to %v", i, in.Shape, n.Shape)
				}
				want[iax] = []int{1}
			} else {
				want[iax] = chunks[iax+off]
			}
		}
		aligned[i] = t.rechunk(in, want)
	}
	// The args are boxed once: every chunk's op shares them.
	var args any = elemArgs(n)
	out := &TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: chunks}
	grid := GridShape(chunks)
	nk := NumElements(grid)
	out.Keys = make([]uint64, 0, nk)
	inGrids := make([][]int, len(aligned))
	for i, in := range aligned {
		inGrids[i] = GridShape(in.Chunks)
	}
	idx, sub, shape := make([]int, nd), make([]int, nd), make([]int, nd)
	for k := 0; k < nk; k++ {
		unravelInto(idx, k, grid)
		for ax, i := range idx {
			shape[ax] = chunks[ax][i]
		}
		keys := t.ints.take(len(aligned))
		for i, in := range aligned {
			off := nd - len(in.Shape)
			sub := sub[:len(in.Shape)]
			for iax := range sub {
				sub[iax] = 0
				if in.Shape[iax] == n.Shape[iax+off] {
					sub[iax] = idx[iax+off]
				}
			}
			keys[i] = int(in.Keys[ravel(sub, inGrids[i])])
		}
		out.Keys = append(out.Keys, t.emitOp(ChunkOp{Kind: n.Op, Inputs: keys, Shape: t.shapes.shape(shape), DType: n.DType, Args: args}))
	}
	return out, nil
}

// cutsToChunks turns chunk start offsets, in any order and with repeats,
// into chunk sizes covering size.
func cutsToChunks(cuts []int, size int) []int {
	offs := []int{0}
	for _, o := range cuts {
		if o < size {
			offs = append(offs, o)
		}
	}
	slices.Sort(offs)
	offs = slices.Compact(offs)
	sizes := make([]int, len(offs))
	for i, o := range offs {
		end := size
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		sizes[i] = end - o
	}
	return sizes
}

// A rowFn applies an op to one row: dst and every input hold the same number
// of elements.
type rowFn func(dst []byte, in [][]byte) error

// checkOp reports whether op's output dtype and shape are valid.
func checkOp(op *ChunkOp) error {
	if !op.DType.Valid() {
		return fmt.Errorf("invalid dtype %v", op.DType)
	}
	for _, s := range op.Shape {
		if s < 0 {
			return fmt.Errorf("negative dimension in shape %v", op.Shape)
		}
	}
	return nil
}

func elemKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, ok := op.Args.(ElemArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if err := checkOp(op); err != nil {
		return nil, err
	}
	ct := args.Compute
	for i, a := range in {
		if a == nil {
			return nil, fmt.Errorf("input %d missing", i)
		}
		if err := a.Check(); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		if len(a.Shape) > len(op.Shape) {
			return nil, fmt.Errorf("input %d of shape %v does not broadcast to %v", i, a.Shape, op.Shape)
		}
		off := len(op.Shape) - len(a.Shape)
		for ax, s := range a.Shape {
			if s != 1 && s != op.Shape[ax+off] {
				return nil, fmt.Errorf("input %d of shape %v does not broadcast to %v", i, a.Shape, op.Shape)
			}
		}
	}
	f, err := elemFunc(op.Kind, ct, op.DType, args.Decimals, len(in))
	if err != nil {
		return nil, err
	}
	want := make([]DType, len(in))
	for i := range in {
		want[i] = ct
		if op.Kind == OpWhere && i == 0 {
			want[i] = Bool
		}
	}
	out := newOutputAll(ctx, op) // broadcastApply sets every element
	if err := broadcastApply(ctx, out, in, want, f); err != nil {
		return nil, err
	}
	return out, nil
}

// broadcastApply runs f over out, with input i cast to want[i] and the
// inputs broadcast to out's shape. When every input has out's size it works
// block by block, casting each block into a scratch buffer, so that a cast
// never costs a pass over memory of its own.
func broadcastApply(ctx context.Context, out *Array, in []*Array, want []DType, f rowFn) error {
	n := out.Len()
	if n == 0 {
		return nil
	}
	es := out.DType.Size()
	full := true
	for _, a := range in {
		if a.Len() != n {
			full = false
		}
	}
	bufs := make([][]byte, len(in))
	scratch := make([][]byte, len(in))
	if full {
		for lo := 0; lo < n; lo += elemBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(lo+elemBlock, n)
			for i, a := range in {
				s := a.DType.Size()
				bufs[i] = a.Data[lo*s : hi*s]
				if a.DType == want[i] {
					continue
				}
				if scratch[i] == nil {
					scratch[i] = make([]byte, min(elemBlock, n)*want[i].Size())
				}
				dst := &Array{DType: want[i], Data: scratch[i][:(hi-lo)*want[i].Size()]}
				castInto(dst, &Array{DType: a.DType, Data: bufs[i]})
				bufs[i] = dst.Data
			}
			if err := f(out.Data[lo*es:hi*es], bufs); err != nil {
				return err
			}
		}
		return nil
	}
	cast := make([]*Array, len(in))
	for i, a := range in {
		cast[i] = castArray(a, want[i])
	}
	return broadcastRows(ctx, out, cast, f)
}

// broadcastRows runs f over out row by row, broadcasting the inputs (already
// of their compute dtypes) to out's shape.
func broadcastRows(ctx context.Context, out *Array, in []*Array, f rowFn) error {
	es := out.DType.Size()
	bufs := make([][]byte, len(in))
	shape, strides := broadcastLayout(out.Shape, in)
	nd := len(shape)
	rowLen := shape[nd-1]
	scratch := make([][]byte, len(in))
	idx := make([]int, nd-1)
	done := 0
	for row := 0; ; row++ {
		if done >= elemBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			done = 0
		}
		for i, a := range in {
			s := a.DType.Size()
			off := 0
			for ax, ix := range idx {
				off += ix * strides[i][ax]
			}
			if strides[i][nd-1] == 1 {
				bufs[i] = a.Data[off*s : (off+rowLen)*s]
				continue
			}
			if scratch[i] == nil {
				scratch[i] = make([]byte, rowLen*s)
			}
			fillRepeat(scratch[i], a.Data[off*s:(off+1)*s])
			bufs[i] = scratch[i]
		}
		if err := f(out.Data[row*rowLen*es:(row+1)*rowLen*es], bufs); err != nil {
			return err
		}
		done += rowLen
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return nil
		}
	}
}

// broadcastLayout returns out's shape with axes merged where every input
// steps the same way, and each input's element strides over it (0 where the
// input is broadcast). The result has at least one axis.
func broadcastLayout(outShape []int, in []*Array) ([]int, [][]int) {
	nd := len(outShape)
	full := make([][]int, len(in))
	for i, a := range in {
		st := make([]int, nd)
		off := nd - len(a.Shape)
		s := 1
		for ax := len(a.Shape) - 1; ax >= 0; ax-- {
			if a.Shape[ax] != 1 {
				st[ax+off] = s
			}
			s *= a.Shape[ax]
		}
		full[i] = st
	}
	var shape []int
	strides := make([][]int, len(in))
	for ax := 0; ax < nd; ax++ {
		if outShape[ax] == 1 {
			continue
		}
		merge := len(shape) > 0
		if merge {
			last := len(shape) - 1
			for i := range in {
				// Axis ax-... merges into the previous one when stepping over the
				// whole of ax equals one step of the previous axis.
				if strides[i][last] != full[i][ax]*outShape[ax] {
					merge = false
					break
				}
			}
		}
		if merge {
			last := len(shape) - 1
			shape[last] *= outShape[ax]
			for i := range in {
				strides[i][last] = full[i][ax]
			}
			continue
		}
		shape = append(shape, outShape[ax])
		for i := range in {
			strides[i] = append(strides[i], full[i][ax])
		}
	}
	if len(shape) == 0 {
		shape = []int{1}
		for i := range in {
			strides[i] = []int{0}
		}
	}
	return shape, strides
}

// fillRepeat fills dst with copies of the element elem.
func fillRepeat(dst, elem []byte) {
	if len(dst) == 0 {
		return
	}
	n := copy(dst, elem)
	for n < len(dst) {
		n += copy(dst[n:], dst[:n])
	}
}
