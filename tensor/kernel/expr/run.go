package expr

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// blockPools hold scratch registers by log2 of their length in elements,
// each of 8 bytes an element so that any dtype fits. Fresh pages are costly
// to touch, so registers are reused across kernel calls.
var blockPools [17]sync.Pool

func getBlock(block int) *[]byte {
	lg := bits.TrailingZeros(uint(block))
	if p, ok := blockPools[lg].Get().(*[]byte); ok {
		return p
	}
	b := make([]byte, block*8)
	return &b
}

func putBlock(block int, b *[]byte) {
	blockPools[bits.TrailingZeros(uint(block))].Put(b)
}

// An exprStep is an instruction made ready to run: checked, with its loop
// function and scratch state.
type exprStep struct {
	in        *chunk.ExprInstr
	invariant bool          // runs once, before the first block
	src       *tensor.Array // load, bcast, splat: the input chunk
	base      int           // load: the element of the value shape src's first is (a streamed piece's)
	seg       int           // gen, bcast: the instruction's strides in the segment layout
	f         elem.RowFn    // elem
	srcs      [][]byte
	fill      genFill      // gen
	srcDT     tensor.DType // cast: the source's dtype
	dstA      tensor.Array // cast: scratch headers
	srcA      tensor.Array
	red       *exprReducer // reduce
}

// An exprMachine runs one program over one op's input chunks.
type exprMachine struct {
	args    *chunk.ExprArgs
	own     chunk.ExprArgs // what args points to: the op's arguments, copied
	n       int            // elements in the value shape
	blk     int            // elements a register holds: Block, or less for a short value
	parts   []tensor.Array // the reductions' partials, parts of the output
	ins     []inputSig     // the inputs' dtypes and shapes the steps were checked against
	opDT    tensor.DType
	opShape []int
	steps   []exprStep
	views   [][]byte // each register's current block
	bufs    []*[]byte
	lay     *segLayout
	reds    []*exprReducer // of the reduce instructions, in order
	gens    int            // gen instructions prepared so far
	outBase int            // the element of the output out.Data starts at (a window's; else 0)
}

func ExprKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.ExprArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	m, err := acquireMachine(op, &args, in, -1)
	if err != nil {
		return nil, err
	}
	defer releaseMachine(m)
	out := elem.NewOutput(ctx, op)
	if err := m.run(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// newExprMachine checks args against op and its inputs and prepares every
// instruction.
func newExprMachine(op *chunk.Op, args *chunk.ExprArgs, in []*tensor.Array, streamed int) (*exprMachine, error) {
	if err := chunk.CheckOp(op); err != nil {
		return nil, err
	}
	if args.Block < 64 || args.Block > 1<<16 || args.Block&(args.Block-1) != 0 {
		return nil, fmt.Errorf("block of %d elements is not a power of two in [64, 65536]", args.Block)
	}
	if args.Regs < 0 || args.Regs > 1<<12 || len(args.Code) == 0 || len(args.Code) > 1<<16 {
		return nil, fmt.Errorf("program of %d instructions and %d registers", len(args.Code), args.Regs)
	}
	if err := checkExprShape(args.Shape); err != nil {
		return nil, err
	}
	for i, a := range in {
		if a == nil {
			return nil, fmt.Errorf("input %d missing", i)
		}
		if err := checkInput(a, i == streamed); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	m := &exprMachine{own: *args, n: tensor.NumElements(args.Shape), steps: make([]exprStep, len(args.Code)),
		views: make([][]byte, args.Regs), bufs: make([]*[]byte, args.Regs)}
	m.args = &m.own
	args = m.args
	m.blk = registerLen(args.Block, m.n)
	m.opDT, m.opShape = op.DType, slices.Clone(op.Shape)
	m.ins = make([]inputSig, len(in))
	for i, a := range in {
		m.ins[i] = inputSig{a.DType, slices.Clone(a.Shape)}
	}
	written := make([]tensor.DType, args.Regs) // 0: not yet written
	fixed := make([]bool, args.Regs)           // holds an invariant value
	var strides [][]int
	var bases []int
	for i := range args.Code {
		ins := &args.Code[i]
		st := &m.steps[i]
		st.in = ins
		if err := m.prepare(op, in, streamed, i, st, written, &strides, &bases); err != nil {
			return nil, fmt.Errorf("instruction %d (%s %s): %w", i, ins.Op, ins.Kind, err)
		}
		if ins.Op == chunk.ExprCast && fixed[ins.Src[0]] {
			st.invariant = true // a cast of a constant is cast once
		}
		if ins.Dst >= 0 {
			if fixed[ins.Dst] {
				return nil, fmt.Errorf("instruction %d overwrites the constant in register %d", i, ins.Dst)
			}
			// A constant is set before the first block: a register that
			// earlier instructions write in every block cannot hold one.
			if st.invariant && written[ins.Dst] != 0 {
				return nil, fmt.Errorf("instruction %d sets a constant in register %d, written before", i, ins.Dst)
			}
			written[ins.Dst] = ins.DType
			fixed[ins.Dst] = st.invariant
		}
	}
	if m.gens*len(args.Shape) != len(args.Offsets) {
		return nil, fmt.Errorf("%d offsets for %d generators of %d axes", len(args.Offsets), m.gens, len(args.Shape))
	}
	last := args.Code[len(args.Code)-1]
	switch {
	case last.Op == chunk.ExprReduce:
		if err := m.checkPartials(op); err != nil {
			return nil, err
		}
	case last.Op == chunk.ExprElem && last.Dst == -1:
		if last.DType != op.DType || !slices.Equal(op.Shape, args.Shape) {
			return nil, fmt.Errorf("program makes %v%v, op says %v%v", last.DType, args.Shape, op.DType, op.Shape)
		}
	default:
		return nil, fmt.Errorf("program ends in %s, not in an elementwise op writing the output or a reduction", last.Op)
	}
	for _, r := range m.reds {
		r.seg = len(strides)
		strides = append(strides, r.strides)
		bases = append(bases, 0)
	}
	m.lay = newSegLayout(args.Shape, strides, bases, min(args.Block, m.n)) // no block is longer
	m.parts = make([]tensor.Array, len(m.reds))
	return m, nil
}

// checkPartials checks the partials the reduce instructions make against
// op's chunk: one reduction makes it, several make it packed, a 1-D
// chunk of their elements one after the other, all of op's dtype.
func (m *exprMachine) checkPartials(op *chunk.Op) error {
	if len(m.reds) == 1 {
		r := m.reds[0]
		if r.pdt != op.DType || !slices.Equal(r.keep, op.Shape) {
			return fmt.Errorf("%v values make a partial of %v%v, op says %v%v", r.src, r.pdt, r.keep, op.DType, op.Shape)
		}
		return nil
	}
	n := 0
	for i, r := range m.reds {
		if r.pdt != op.DType {
			return fmt.Errorf("reduction %d makes a partial of %v, op says %v", i, r.pdt, op.DType)
		}
		n += tensor.NumElements(r.keep)
	}
	if len(op.Shape) != 1 || op.Shape[0] != n {
		return fmt.Errorf("%d reductions make %d elements, op says %v", len(m.reds), n, op.Shape)
	}
	return nil
}

// checkInput checks an input's data against its dtype and shape; a
// streamed one has none yet, only a dtype and shape.
func checkInput(a *tensor.Array, streamed bool) error {
	if !streamed {
		return a.Check()
	}
	if !a.DType.Valid() || checkExprShape(a.Shape) != nil {
		return fmt.Errorf("streamed input of %v%v", a.DType, a.Shape)
	}
	return nil
}

func checkExprShape(shape []int) error {
	n := 1
	for _, s := range shape {
		if s < 0 || s > 1<<40 {
			return fmt.Errorf("bad dimension in shape %v", shape)
		}
		if s > 0 && n > (1<<50)/s {
			return fmt.Errorf("shape %v is too large", shape)
		}
		n *= s
	}
	return nil
}

// exprSources is the number of registers each instruction reads, but for
// elem, whose op says.
var exprSources = map[string]int{chunk.ExprLoad: 0, chunk.ExprBcast: 0, chunk.ExprSplat: 0, chunk.ExprConst: 0, chunk.ExprGen: 0,
	chunk.ExprCast: 1, chunk.ExprNaN0: 1}

// prepare checks instruction i and readies st.
func (m *exprMachine) prepare(op *chunk.Op, in []*tensor.Array, streamed, i int, st *exprStep, written []tensor.DType, strides *[][]int, bases *[]int) error {
	ins := st.in
	args := m.args
	if !ins.DType.Valid() {
		return fmt.Errorf("invalid dtype %v", ins.DType)
	}
	if ins.Dst < -1 || ins.Dst >= args.Regs || ins.Dst == -1 && !(i == len(args.Code)-1 && ins.Op == chunk.ExprElem || ins.Op == chunk.ExprReduce) {
		return fmt.Errorf("bad destination register %d", ins.Dst)
	}
	if ins.Op == chunk.ExprReduce && ins.Dst != -1 || ins.Op != chunk.ExprReduce && len(m.reds) > 0 {
		return fmt.Errorf("reductions must end the program")
	}
	if ins.Op == chunk.ExprElem && ins.Dst == -1 && (ins.DType != op.DType) {
		return fmt.Errorf("writes %v to an output of %v", ins.DType, op.DType)
	}
	srcDT := make([]tensor.DType, len(ins.Src))
	for j, r := range ins.Src {
		if r < 0 || r >= args.Regs || written[r] == 0 {
			return fmt.Errorf("reads register %d before it is written", r)
		}
		if r == ins.Dst {
			return fmt.Errorf("reads and writes register %d", r)
		}
		srcDT[j] = written[r]
	}
	if want, ok := exprSources[ins.Op]; ok && len(ins.Src) != want {
		return fmt.Errorf("takes %d registers, got %d", want, len(ins.Src))
	}
	switch ins.Op {
	case chunk.ExprLoad, chunk.ExprBcast, chunk.ExprSplat:
		if ins.Input < 0 || ins.Input >= len(in) {
			return fmt.Errorf("input %d of %d", ins.Input, len(in))
		}
		if ins.Input == streamed && ins.Op != chunk.ExprLoad {
			return fmt.Errorf("input %d is streamed, and a %s reads it out of order", ins.Input, ins.Op)
		}
		a := in[ins.Input]
		if a.DType != ins.DType || !tensor.Broadcasts(a.Shape, args.Shape) {
			return fmt.Errorf("input %d is %v%v, want %v broadcasting to %v", ins.Input, a.DType, a.Shape, ins.DType, args.Shape)
		}
		st.src = a
		switch ins.Op {
		case chunk.ExprLoad:
			if a.Len() != m.n {
				return fmt.Errorf("input %d of shape %v is not of shape %v", ins.Input, a.Shape, args.Shape)
			}
		case chunk.ExprSplat:
			if a.Len() != 1 {
				return fmt.Errorf("input %d of shape %v has more than one element", ins.Input, a.Shape)
			}
			st.invariant = true
		case chunk.ExprBcast:
			st.seg = len(*strides)
			*strides = append(*strides, bcastStrides(a.Shape, args.Shape))
			*bases = append(*bases, 0)
		}
	case chunk.ExprConst:
		if !tensor.Broadcasts(ins.Shape, args.Shape) {
			return fmt.Errorf("constant of shape %v does not broadcast to %v", ins.Shape, args.Shape)
		}
		st.invariant = true
	case chunk.ExprGen:
		nd := len(args.Shape)
		if (m.gens+1)*nd > len(args.Offsets) {
			return fmt.Errorf("generator %d has no offset among %d", m.gens, len(args.Offsets))
		}
		off := args.Offsets[m.gens*nd : (m.gens+1)*nd]
		m.gens++
		fill, gs, base, err := newGenFill(ins, args.Shape, off)
		if err != nil {
			return err
		}
		st.fill = fill
		st.seg = len(*strides)
		*strides = append(*strides, gs)
		*bases = append(*bases, base)
	case chunk.ExprCast:
		st.srcDT = srcDT[0]
	case chunk.ExprNaN0:
		if srcDT[0] != ins.DType {
			return fmt.Errorf("%v source for %v", srcDT[0], ins.DType)
		}
	case chunk.ExprElem:
		f, err := elem.ElemFunc(ins.Kind, ins.Elem.Compute, ins.DType, ins.Elem.Decimals, len(ins.Src))
		if err != nil {
			return err
		}
		for j, dt := range srcDT {
			want := ins.Elem.Compute
			if ins.Kind == tensor.OpWhere && j == 0 {
				want = tensor.Bool
			}
			if dt != want {
				return fmt.Errorf("operand %d is %v, want %v", j, dt, want)
			}
		}
		st.f = f
		if v := vecRow(ins.Kind, ins.Elem.Compute, ins.DType); v != nil && len(ins.Src) == 2 {
			st.f = v
		}
		if ins.Kind == tensor.OpPower && len(ins.Src) == 2 && ins.DType == ins.Elem.Compute {
			if v, ok := constOf(args.Code[:i], ins.Src[1]); ok && v == 2 {
				if sq := squareRow(ins.DType); sq != nil {
					st.f = sq
				}
			}
		}
		st.srcs = make([][]byte, len(ins.Src))
	case chunk.ExprReduce:
		red, err := newExprReducer(op.DType, ins, srcDT, args.Shape)
		if err != nil {
			return err
		}
		st.red = red
		m.reds = append(m.reds, red)
	default:
		return fmt.Errorf("unknown instruction")
	}
	return nil
}

// bcastStrides are the element strides of an input of shape over out's
// axes, zero along the axes it is broadcast over.
func bcastStrides(shape, out []int) []int {
	st := make([]int, len(out))
	off := len(out) - len(shape)
	s := 1
	for ax := len(shape) - 1; ax >= 0; ax-- {
		if shape[ax] != 1 {
			st[ax+off] = s
		}
		s *= shape[ax]
	}
	return st
}

func (m *exprMachine) release() {
	for i, b := range m.bufs {
		if b != nil {
			putBlock(m.blk, b)
			m.bufs[i] = nil
		}
	}
}

// reg returns register r's scratch block, cut to n elements of dt, and
// makes it the register's current view.
func (m *exprMachine) reg(r int, dt tensor.DType, n int) []byte {
	if m.bufs[r] == nil {
		m.bufs[r] = getBlock(m.blk)
	}
	v := (*m.bufs[r])[:n*dt.Size()]
	m.views[r] = v
	return v
}

func (m *exprMachine) run(ctx context.Context, out *tensor.Array) error {
	if err := m.begin(out); err != nil {
		return err
	}
	if err := m.blocks(ctx, out, 0, m.n); err != nil {
		return err
	}
	m.end()
	return nil
}

// begin runs the invariant instructions and starts the reductions'
// partials in out.
func (m *exprMachine) begin(out *tensor.Array) error {
	B := m.args.Block
	for i := range m.steps {
		if st := &m.steps[i]; st.invariant {
			if err := m.exec(st, out, 0, min(B, m.n)); err != nil { // no block is longer
				return err
			}
		}
	}
	// Each reduction's partial is its own part of out.
	parts := m.parts
	off := 0
	for i, r := range m.reds {
		n := tensor.NumElements(r.keep) * r.pdt.Size()
		parts[i] = tensor.Array{DType: r.pdt, Shape: r.keep, Data: out.Data[off : off+n]}
		off += n
		if err := r.start(&parts[i]); err != nil {
			return err
		}
	}
	return nil
}

// blocks runs the program over the blocks of elements lo..hi-1, lo the
// start of a block and hi the start of one or the end.
func (m *exprMachine) blocks(ctx context.Context, out *tensor.Array, lo, hi int) error {
	B := m.args.Block
	for nb := 0; lo < hi; lo, nb = lo+B, nb+1 {
		if nb%16 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		end := min(lo+B, hi)
		m.lay.cut(lo, end)
		for i := range m.steps {
			if st := &m.steps[i]; !st.invariant {
				if err := m.exec(st, out, lo, end); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// end finishes the reductions' partials.
func (m *exprMachine) end() {
	for i, r := range m.reds {
		r.finish(&m.parts[i])
	}
}

// exec runs one instruction over elements lo..hi-1 of the value shape;
// invariant instructions fill a register once, as far as any block goes.
// Its error is an elementwise loop's, on values its op refuses (an integer
// raised to a negative integer power).
func (m *exprMachine) exec(st *exprStep, out *tensor.Array, lo, hi int) error {
	ins := st.in
	n := hi - lo
	switch ins.Op {
	case chunk.ExprLoad:
		es := ins.DType.Size()
		m.views[ins.Dst] = st.src.Data[(lo-st.base)*es : (hi-st.base)*es]
	case chunk.ExprSplat:
		elem.FillRepeat(m.reg(ins.Dst, ins.DType, n), st.src.Data)
	case chunk.ExprConst:
		fillConst(m.reg(ins.Dst, ins.DType, n), ins.DType, ins.Gen)
	case chunk.ExprBcast:
		dst := m.reg(ins.Dst, ins.DType, n)
		es := ins.DType.Size()
		l := m.lay
		step := l.step(st.seg)
		for s := 0; s < l.nseg; s++ {
			pos, cnt, v := l.pos[s], l.cnt[s], l.val[st.seg][s]
			d := dst[pos*es : (pos+cnt)*es]
			switch step {
			case 0:
				elem.FillRepeat(d, st.src.Data[v*es:(v+1)*es])
			case 1:
				copy(d, st.src.Data[v*es:(v+cnt)*es])
			default:
				for j := range cnt {
					copy(d[j*es:(j+1)*es], st.src.Data[(v+j*step)*es:])
				}
			}
		}
	case chunk.ExprGen:
		dst := m.reg(ins.Dst, ins.DType, n)
		l := m.lay
		step := l.step(st.seg)
		for s := 0; s < l.nseg; s++ {
			st.fill(dst, l.pos[s], l.cnt[s], l.val[st.seg][s], step)
		}
	case chunk.ExprCast:
		st.srcA = tensor.Array{DType: st.srcDT, Data: m.views[ins.Src[0]]}
		st.dstA = tensor.Array{DType: ins.DType, Data: m.reg(ins.Dst, ins.DType, n)}
		elem.CastInto(&st.dstA, &st.srcA)
	case chunk.ExprNaN0:
		dst := m.reg(ins.Dst, ins.DType, n)
		src := m.views[ins.Src[0]]
		if ins.DType == tensor.Float32 {
			zeroNaNInto(tensor.View[float32](dst), tensor.View[float32](src))
		} else if ins.DType == tensor.Float64 {
			zeroNaNInto(tensor.View[float64](dst), tensor.View[float64](src))
		} else {
			copy(dst, src)
		}
	case chunk.ExprElem:
		for j, r := range ins.Src {
			st.srcs[j] = m.views[r]
		}
		var dst []byte
		if ins.Dst < 0 {
			es := out.DType.Size()
			dst = out.Data[(lo-m.outBase)*es : (hi-m.outBase)*es]
		} else {
			dst = m.reg(ins.Dst, ins.DType, n)
		}
		if err := st.f(dst, st.srcs); err != nil {
			return fmt.Errorf("%s: %w", ins.Kind, err)
		}
	case chunk.ExprReduce:
		var orig []byte
		if len(ins.Src) > 1 {
			orig = m.views[ins.Src[1]]
		}
		st.red.add(m.lay, m.views[ins.Src[0]], orig)
	}
	return nil
}

func zeroNaNInto[T elem.FloatType](dst, src []T) {
	src = src[:len(dst)]
	for i, v := range src {
		if v != v {
			v = 0
		}
		dst[i] = v
	}
}

func fillConst(dst []byte, dt tensor.DType, g chunk.GenArgs) {
	switch dt {
	case tensor.Bool:
		elem.FillSlice(dst, elem.B2u(g.IntValue != 0))
	case tensor.Int32:
		elem.FillSlice(tensor.View[int32](dst), int32(g.IntValue))
	case tensor.Int64:
		elem.FillSlice(tensor.View[int64](dst), g.IntValue)
	case tensor.Float32:
		elem.FillSlice(tensor.View[float32](dst), float32(g.Value))
	case tensor.Float64:
		elem.FillSlice(tensor.View[float64](dst), g.Value)
	}
}

// A segLayout cuts blocks of the value shape into segments: runs along its
// last axis (after dropping size-1 axes and merging axes every consumer
// steps through alike), over which each consumer's index (a generator's
// global index, a broadcast input's element, an accumulator) advances by a
// fixed step.
type segLayout struct {
	shape   []int
	strides [][]int // per consumer, per axis
	base    []int   // per consumer
	idx     []int
	nseg    int
	pos     []int   // per segment: its first element in the block
	cnt     []int   // per segment: its length
	val     [][]int // per consumer, per segment: the consumer's index at pos
}

func newSegLayout(shape []int, strides [][]int, base []int, block int) *segLayout {
	l := &segLayout{base: base, strides: make([][]int, len(strides))}
	for ax, s := range shape {
		if s == 1 {
			continue
		}
		if last := len(l.shape) - 1; last >= 0 {
			merge := true
			for c, st := range strides {
				if l.strides[c][last] != st[ax]*s {
					merge = false
					break
				}
			}
			if merge {
				l.shape[last] *= s
				for c, st := range strides {
					l.strides[c][last] = st[ax]
				}
				continue
			}
		}
		l.shape = append(l.shape, s)
		for c, st := range strides {
			l.strides[c] = append(l.strides[c], st[ax])
		}
	}
	if len(l.shape) == 0 {
		l.shape = []int{1}
		for c := range strides {
			l.strides[c] = []int{0}
		}
	}
	l.idx = make([]int, len(l.shape))
	maxSeg := block/max(l.shape[len(l.shape)-1], 1) + 2
	l.pos = make([]int, maxSeg)
	l.cnt = make([]int, maxSeg)
	l.val = make([][]int, len(strides))
	for c := range l.val {
		l.val[c] = make([]int, maxSeg)
	}
	return l
}

// step is consumer c's index step along a segment.
func (l *segLayout) step(c int) int { return l.strides[c][len(l.shape)-1] }

// cut splits elements lo..hi-1 (C order) into segments.
func (l *segLayout) cut(lo, hi int) {
	nd := len(l.shape)
	if len(l.strides) == 0 {
		l.nseg = 1
		l.pos[0], l.cnt[0] = 0, hi-lo
		return
	}
	r := lo
	for ax := nd - 1; ax >= 0; ax-- {
		l.idx[ax] = r % l.shape[ax]
		r /= l.shape[ax]
	}
	L := l.shape[nd-1]
	l.nseg = 0
	for pos := lo; pos < hi; {
		n := min(L-l.idx[nd-1], hi-pos)
		s := l.nseg
		l.pos[s], l.cnt[s] = pos-lo, n
		for c, st := range l.strides {
			v := l.base[c]
			for ax, i := range l.idx {
				v += i * st[ax]
			}
			l.val[c][s] = v
		}
		l.nseg++
		pos += n
		l.idx[nd-1] += n
		for ax := nd - 1; ax > 0 && l.idx[ax] == l.shape[ax]; ax-- {
			l.idx[ax] = 0
			l.idx[ax-1]++
		}
	}
}
