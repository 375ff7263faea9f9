package fuse

import (
	"encoding/binary"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// An expr op's program is a register machine over blocks. The value shape
// (the chunk an elementwise root makes, or the chunk a reduction map reads)
// is cut into blocks of ExprArgs.Block elements in C order; for each block
// the instructions run in order, each one a typed operation on whole blocks:
// registers hold one block each, of any dtype. So the cost of interpreting
// the program is paid once a block, not once an element, and the loops that
// do the work are the elementwise kernels' own, which is also why a fused
// elementwise result is bit-identical to the unfused one.

// ExprCompiler turns a group into a program over virtual registers, then
// maps them onto as few registers as the values' lifetimes allow. One
// compiler serves all the groups of a graph: its scratch is reused from
// group to group, and the programs it makes are interned, so that the
// groups that compile alike (the chunks of one expression, which differ
// only in their generators' offsets) share one program.
type ExprCompiler struct {
	cg     *chunk.Graph
	class  []uint8 // of each op of cg, as exprGrower's
	g      *exprGroup
	code   []chunk.ExprInstr
	srcs   []int          // backing of the Src of the instructions being compiled
	dtypes []tensor.DType // of each virtual register
	pinned []bool         // set once, read in every block
	// A group is small: the registers of its values and casts are
	// searched, not mapped.
	val     []regOf // the register holding each op's values
	casts   []regOf // key: a register and a dtype, as r<<8 | dtype
	members []string
	reds    []chunk.ExprInstr // the reduce instructions of sibling roots
	last    []int             // allocate's scratch
	phys    []int
	free    []int

	key         []byte                 // the program being compiled, serialized
	programs    map[string]exprProgram // interned programs by serialized form
	lastProgram exprProgram            // the program interned last
	Prev        prevGroup              // the group compiled last
	Reuse       bool                   // a group alike prev takes its program
	lastArgs    chunk.ExprArgs         // of the op made last with no offsets
	lastBox     any                    // lastArgs boxed
	ints        chunk.IntSlab
}

// An exprProgram is a compiled program, shared by the ops that run it.
type exprProgram struct {
	code    []chunk.ExprInstr
	members []string
	regs    int
}

func NewExprCompiler(cg *chunk.Graph, class []uint8) *ExprCompiler {
	return &ExprCompiler{cg: cg, class: class, programs: map[string]exprProgram{}}
}

func (c *ExprCompiler) newReg(dt tensor.DType) int {
	c.dtypes = append(c.dtypes, dt)
	c.pinned = append(c.pinned, false)
	return len(c.dtypes) - 1
}

func (c *ExprCompiler) emit(in chunk.ExprInstr) int {
	in.Dst = c.newReg(in.DType)
	c.code = append(c.code, in)
	return in.Dst
}

// src returns a Src of the given registers, backed by the compiler's
// scratch: the program keeps a copy only when it is new.
func (c *ExprCompiler) src(regs ...int) []int {
	if len(c.srcs)+len(regs) > cap(c.srcs) {
		// Earlier instructions keep the old backing array.
		c.srcs = make([]int, 0, max(64, 2*cap(c.srcs), len(regs)))
	}
	n := len(c.srcs)
	c.srcs = append(c.srcs, regs...)
	return c.srcs[n : n+len(regs) : n+len(regs)]
}

// cast returns a register holding r's values as dt.
func (c *ExprCompiler) cast(r int, dt tensor.DType) int {
	if c.dtypes[r] == dt {
		return r
	}
	key := r<<8 | int(dt)
	if v, ok := lookupReg(c.casts, key); ok {
		return v
	}
	v := c.emit(chunk.ExprInstr{Op: chunk.ExprCast, Src: c.src(r), DType: dt})
	c.pinned[v] = c.pinned[r] // a cast constant is cast once
	c.casts = append(c.casts, regOf{key, v})
	return v
}

// value returns the register holding op k's values.
func (c *ExprCompiler) value(k int) int {
	if v, ok := lookupReg(c.val, k); ok {
		return v
	}
	op := c.cg.Ops[k]
	input, _ := slices.BinarySearch(c.g.Inputs, k) // an input, as k is no member
	ins := chunk.ExprInstr{Input: input, DType: op.DType}
	switch n := tensor.NumElements(op.Shape); {
	case n == tensor.NumElements(c.g.shape):
		ins.Op = chunk.ExprLoad
	case n == 1:
		ins.Op = chunk.ExprSplat
	default:
		ins.Op = chunk.ExprBcast
	}
	v := c.emit(ins)
	c.pinned[v] = ins.Op == chunk.ExprSplat
	c.val = append(c.val, regOf{k, v})
	return v
}

// A regOf maps a key to a register.
type regOf struct{ key, reg int }

func lookupReg(m []regOf, key int) (int, bool) {
	for _, e := range m {
		if e.key == key {
			return e.reg, true
		}
	}
	return 0, false
}

// reset readies the compiler for group g.
func (c *ExprCompiler) reset(g *exprGroup) {
	c.g = g
	c.code = c.code[:0]
	c.srcs = c.srcs[:0]
	c.dtypes = c.dtypes[:0]
	c.pinned = c.pinned[:0]
	c.members = c.members[:0]
	c.val = c.val[:0]
	c.casts = c.casts[:0]
}

// Compile makes the expr op that replaces g; its Inputs are g.inputs.
func (c *ExprCompiler) Compile(g *exprGroup) chunk.Op {
	if c.Reuse && c.sameAsLast(g) {
		return c.makeOp(g, c.Prev.prog)
	}
	c.reset(g)
	cg := c.cg
	for _, k := range g.Members {
		op := cg.Ops[k]
		c.members = append(c.members, string(op.Kind))
		if g.value != g.root && g.isRoot(k) {
			continue
		}
		switch {
		case op.Kind == tensor.OpFull:
			gen := op.Args.(chunk.GenArgs)
			gen.Offset = nil // a constant is the same everywhere
			v := c.emit(chunk.ExprInstr{Op: chunk.ExprConst, DType: op.DType, Gen: gen, Shape: op.Shape})
			c.pinned[v] = true
			c.val = append(c.val, regOf{k, v})
		case c.class[k] == classGen:
			gen := op.Args.(chunk.GenArgs)
			gen.Offset = nil
			v := c.emit(chunk.ExprInstr{Op: chunk.ExprGen, Kind: string(op.Kind), DType: chunk.GenNative(string(op.Kind), op.DType), Gen: gen})
			c.val = append(c.val, regOf{k, c.cast(v, op.DType)})
		default:
			args := op.Args.(chunk.ElemArgs)
			src := c.src(op.Inputs...)
			for i, in := range op.Inputs {
				want := args.Compute
				if op.Kind == tensor.OpWhere && i == 0 {
					want = tensor.Bool
				}
				src[i] = c.cast(c.value(in), want)
			}
			c.val = append(c.val, regOf{k, c.emit(chunk.ExprInstr{Op: chunk.ExprElem, Kind: string(op.Kind), Src: src, DType: op.DType, Elem: args})})
		}
	}
	if g.value != g.root {
		// The reductions end the program, each sibling's after the
		// instructions that make its operands.
		c.reds = c.reds[:0]
		if g.roots == nil {
			c.reduction(g.root)
		}
		for _, r := range g.roots {
			c.reduction(r)
		}
		c.code = append(c.code, c.reds...)
	} else {
		c.code[len(c.code)-1].Dst = -1 // the root writes the output chunk
	}
	regs := c.allocate()
	p := c.intern(regs)
	c.Prev.prog = p
	c.Prev.members = append(c.Prev.members[:0], g.Members...)
	c.Prev.inputs = append(c.Prev.inputs[:0], g.Inputs...)
	c.Prev.roots = append(c.Prev.roots[:0], g.roots...)
	c.Prev.multi = g.roots != nil
	c.Prev.value, c.Prev.Root, c.Prev.shape = g.value, g.root, g.shape
	c.Prev.rels = c.Prev.rels[:0]
	for _, k := range g.Members {
		for _, in := range cg.Ops[k].Inputs {
			c.Prev.rels = append(c.Prev.rels, relKey(g.Members, g.Inputs, in))
		}
	}
	return c.makeOp(g, p)
}

// isRoot reports whether op k is g's root or one of its sibling roots.
func (g *exprGroup) isRoot(k int) bool {
	return k == g.root || slices.Contains(g.roots, k)
}

// reduction emits the instructions that cast the group's values for map
// op k, and appends its reduce instruction to c.reds.
func (c *ExprCompiler) reduction(k int) {
	root := c.cg.Ops[k]
	args := root.Args.(chunk.ReduceArgs)
	v, _ := lookupReg(c.val, c.g.value)
	var src []int
	switch args.Op {
	case tensor.OpCountNonzero:
		v = c.cast(c.cast(v, tensor.Bool), tensor.Int64)
	case tensor.OpMean:
		// The mean of booleans adds their bytes, exactly as it would add
		// them cast to float64, but without the cast.
		if c.dtypes[v] != tensor.Bool {
			v = c.cast(v, tensor.Float64)
		}
	case tensor.OpVar, tensor.OpStd:
		v = c.cast(v, tensor.Float64)
	case tensor.OpNanmean:
		v = c.cast(v, tensor.Float64)
		z := c.emit(chunk.ExprInstr{Op: chunk.ExprNaN0, Src: c.src(v), DType: tensor.Float64})
		src = c.src(z, v) // sums without NaNs; counts of what is not NaN
		v = z
	case tensor.OpNansum:
		v = c.cast(v, root.DType)
		if root.DType.IsFloat() {
			v = c.emit(chunk.ExprInstr{Op: chunk.ExprNaN0, Src: c.src(v), DType: root.DType})
		}
	default:
		v = c.cast(v, root.DType)
	}
	if src == nil {
		src = c.src(v)
	}
	c.reds = append(c.reds, chunk.ExprInstr{Op: chunk.ExprReduce, Kind: args.Op, Src: src, DType: c.dtypes[v], Axes: args.Axes, Dst: -1})
}

// makeOp makes the expr op that runs p for g.
func (c *ExprCompiler) makeOp(g *exprGroup, p exprProgram) chunk.Op {
	root := c.cg.Ops[g.root]
	shape := root.Shape
	if g.roots != nil {
		// The sibling partials, packed one after the other.
		root = c.cg.Ops[g.roots[0]]
		n := 0
		for _, r := range g.roots {
			n += tensor.NumElements(c.cg.Ops[r].Shape)
		}
		shape = c.ints.Take(1)
		shape[0] = n
	}
	args := chunk.ExprArgs{Shape: g.shape, Block: chunk.ExprBlock, Regs: p.regs, Code: p.code, Members: p.members}
	// The offsets of the generators, in the order compile emits them.
	n := 0
	for _, k := range g.Members {
		if op := c.cg.Ops[k]; c.class[k] == classGen && op.Kind != tensor.OpFull && k != g.root {
			n += len(op.Args.(chunk.GenArgs).Offset)
		}
	}
	if n > 0 {
		args.Offsets = c.ints.Take(n)[:0]
		for _, k := range g.Members {
			if op := c.cg.Ops[k]; c.class[k] == classGen && op.Kind != tensor.OpFull && k != g.root {
				args.Offsets = append(args.Offsets, op.Args.(chunk.GenArgs).Offset...)
			}
		}
	}
	return chunk.Op{Kind: chunk.KindExpr, Inputs: g.Inputs, Shape: shape, DType: root.DType, Args: c.box(args), Node: root.Node}
}

// box returns args as an op's Args: the box of the op made before when
// that op's args are the same program over the same shape with no
// offsets, as the expr ops of constants mostly are, so that they share
// one.
func (c *ExprCompiler) box(args chunk.ExprArgs) any {
	l := &c.lastArgs
	if args.Offsets == nil && c.lastBox != nil && l.Block == args.Block && l.Regs == args.Regs &&
		sameSlice(l.Code, args.Code) && sameSlice(l.Members, args.Members) && slices.Equal(l.Shape, args.Shape) {
		return c.lastBox
	}
	var box any = args
	if args.Offsets == nil {
		c.lastArgs, c.lastBox = args, box
	}
	return box
}

// sameSlice reports whether a and b are the same slice: the same elements
// of one array.
func sameSlice[E any](a, b []E) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// A prevGroup is the group compiled last, and its program.
type prevGroup struct {
	prog                   exprProgram
	members, inputs, roots []int
	multi                  bool // roots are siblings
	value, Root            int
	shape                  []int
	rels                   []int // relKey of each input of each member, in order
}

// sameAsLast reports whether g compiles to the program of the group
// compiled last, as the chunks of one expression mostly do. Of a group,
// compile reads the value shape and, member by member and input by input,
// the ops' kinds, dtypes, shapes and arguments (but for generator offsets,
// which the op keeps apart) and which member or input each member reads:
// where all those are alike, so is the program, which is not compiled
// again.
func (c *ExprCompiler) sameAsLast(g *exprGroup) bool {
	l := &c.Prev
	if l.prog.code == nil || len(l.members) != len(g.Members) || len(l.inputs) != len(g.Inputs) ||
		(l.value == l.Root) != (g.value == g.root) || !slices.Equal(l.shape, g.shape) ||
		l.multi != (g.roots != nil) || len(l.roots) != len(g.roots) {
		return false
	}
	lg := exprGroup{root: l.Root, roots: l.roots}
	if !l.multi {
		lg.roots = nil
	}
	cg := c.cg
	rels := l.rels
	for i, k := range g.Members {
		lk := l.members[i]
		a, b := cg.Ops[lk], cg.Ops[k]
		if lg.isRoot(lk) != g.isRoot(k) || (lk == l.value) != (k == g.value) ||
			c.class[lk] != c.class[k] || !sameOpButOffset(a, b) {
			return false
		}
		// sameOpButOffset compared the numbers of inputs.
		for j, in := range b.Inputs {
			if rels[j] != relKey(g.Members, g.Inputs, in) {
				return false
			}
		}
		rels = rels[len(b.Inputs):]
	}
	for i, k := range g.Inputs {
		a, b := cg.Ops[l.inputs[i]], cg.Ops[k]
		if a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) {
			return false
		}
	}
	return true
}

// relKey places op k in a group: member i is i, input i is -1-i.
func relKey(members, inputs []int, k int) int {
	if i, ok := slices.BinarySearch(members, k); ok {
		return i
	}
	i, _ := slices.BinarySearch(inputs, k)
	return -1 - i
}

// sameOpButOffset reports whether a and b are alike in kind, dtype, shape,
// number of inputs and arguments, a generator's offset aside.
func sameOpButOffset(a, b *chunk.Op) bool {
	if a == b {
		return true // a constant every group copies
	}
	if a.Kind != b.Kind || a.DType != b.DType || len(a.Inputs) != len(b.Inputs) || a.Stored != b.Stored ||
		!slices.Equal(a.Shape, b.Shape) {
		return false
	}
	switch x := a.Args.(type) {
	case chunk.ElemArgs:
		y, ok := b.Args.(chunk.ElemArgs)
		return ok && x == y
	case chunk.GenArgs:
		y, ok := b.Args.(chunk.GenArgs)
		return ok && len(x.Offset) == len(y.Offset) && slices.Equal(x.Global, y.Global) &&
			math.Float64bits(x.Value) == math.Float64bits(y.Value) && x.IntValue == y.IntValue &&
			math.Float64bits(x.Start) == math.Float64bits(y.Start) &&
			math.Float64bits(x.Step) == math.Float64bits(y.Step) &&
			x.Low == y.Low && x.High == y.High && x.K == y.K && x.Seed == y.Seed
	case chunk.ReduceArgs:
		y, ok := b.Args.(chunk.ReduceArgs)
		return ok && x.Op == y.Op && x.In == y.In && slices.Equal(x.Axes, y.Axes) && x.Flat == y.Flat &&
			x.Keepdims == y.Keepdims && x.Ddof == y.Ddof && slices.Equal(x.Offset, y.Offset) &&
			slices.Equal(x.Global, y.Global)
	}
	return false
}

// allocate maps the virtual registers of c.code onto registers, reusing one
// once the value it held is read no more, and returns how many it used. A
// register is never both read and written by one instruction, so a loop's
// output never overlaps its input; pinned values keep theirs.
func (c *ExprCompiler) allocate() int {
	last := grow(c.last, len(c.dtypes))
	c.last = last
	for i := range last {
		last[i] = -1
	}
	for i, in := range c.code {
		for _, s := range in.Src {
			last[s] = i
		}
	}
	phys := grow(c.phys, len(c.dtypes))
	c.phys = phys
	free := c.free[:0]
	n := 0
	for i := range c.code {
		in := &c.code[i]
		if in.Dst >= 0 {
			v := in.Dst
			if len(free) > 0 && !c.pinned[v] {
				phys[v], free = free[len(free)-1], free[:len(free)-1]
			} else {
				phys[v] = n
				n++
			}
			in.Dst = phys[v]
			if last[v] < 0 && !c.pinned[v] {
				free = append(free, phys[v]) // never read
			}
		}
		for j, s := range in.Src {
			in.Src[j] = phys[s] // Src is the instruction's own
			if last[s] == i && !c.pinned[s] {
				last[s] = -2 // freed once even when read twice
				free = append(free, phys[s])
			}
		}
	}
	c.free = free
	return n
}

// grow returns s resized to n elements, reallocated when too small.
func grow(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n, 2*n)
	}
	return s[:n]
}

// intern returns the program c compiled, the same one (shared slices) for
// every group that compiles to it: the programs are compared by their
// serialized form, which determines them.
func (c *ExprCompiler) intern(regs int) exprProgram {
	// The chunks of a grid come one after the other: most programs are
	// the one just before, which a comparison finds without serializing.
	if p := c.lastProgram; p.code != nil && p.regs == regs && len(p.code) == len(c.code) &&
		slices.Equal(p.members, c.members) {
		same := true
		for i := range p.code {
			if !exprInstrEqual(&p.code[i], &c.code[i]) {
				same = false
				break
			}
		}
		if same {
			return p
		}
	}
	k := c.key[:0]
	k = binary.AppendUvarint(k, uint64(regs))
	k = appendStrings(k, c.members...)
	for i := range c.code {
		k = appendInstr(k, &c.code[i])
	}
	c.key = k
	if p, ok := c.programs[string(k)]; ok {
		c.lastProgram = p
		return p
	}
	p := exprProgram{code: slices.Clone(c.code), members: slices.Clone(c.members), regs: regs}
	n := 0
	for _, in := range p.code {
		n += len(in.Src)
	}
	srcs := make([]int, n)
	for i := range p.code {
		in := &p.code[i]
		m := copy(srcs, in.Src)
		in.Src, srcs = srcs[:m:m], srcs[m:]
	}
	c.programs[string(k)] = p
	c.lastProgram = p
	return p
}

// exprInstrEqual reports whether a and b are the same instruction: every
// field equal, slices element by element and floats by their bits, as
// appendInstr serializes them.
func exprInstrEqual(a, b *chunk.ExprInstr) bool {
	ga, gb := &a.Gen, &b.Gen
	return a.Op == b.Op && a.Kind == b.Kind && a.Dst == b.Dst && slices.Equal(a.Src, b.Src) &&
		a.Input == b.Input && a.DType == b.DType && a.Elem == b.Elem &&
		slices.Equal(ga.Offset, gb.Offset) && slices.Equal(ga.Global, gb.Global) &&
		math.Float64bits(ga.Value) == math.Float64bits(gb.Value) && ga.IntValue == gb.IntValue &&
		math.Float64bits(ga.Start) == math.Float64bits(gb.Start) &&
		math.Float64bits(ga.Step) == math.Float64bits(gb.Step) &&
		ga.Low == gb.Low && ga.High == gb.High && ga.K == gb.K && ga.Seed == gb.Seed &&
		slices.Equal(a.Shape, b.Shape) && slices.Equal(a.Axes, b.Axes)
}

func appendStrings(b []byte, ss ...string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func appendInts(b []byte, v []int) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, x := range v {
		b = binary.AppendVarint(b, int64(x))
	}
	return b
}

// appendInstr serializes every field of in, slices length first, so that
// two instructions serialize alike exactly when they are equal (floats by
// their bits).
func appendInstr(b []byte, in *chunk.ExprInstr) []byte {
	b = appendStrings(b, in.Op, in.Kind)
	b = binary.AppendVarint(b, int64(in.Dst))
	b = appendInts(b, in.Src)
	b = binary.AppendVarint(b, int64(in.Input))
	b = binary.AppendVarint(b, int64(in.DType))
	b = binary.AppendVarint(b, int64(in.Elem.Compute))
	b = binary.AppendVarint(b, int64(in.Elem.Decimals))
	g := &in.Gen
	b = appendInts(b, g.Offset)
	b = appendInts(b, g.Global)
	b = binary.AppendUvarint(b, math.Float64bits(g.Value))
	b = binary.AppendVarint(b, g.IntValue)
	b = binary.AppendUvarint(b, math.Float64bits(g.Start))
	b = binary.AppendUvarint(b, math.Float64bits(g.Step))
	b = binary.AppendVarint(b, g.Low)
	b = binary.AppendVarint(b, g.High)
	b = binary.AppendVarint(b, int64(g.K))
	b = binary.AppendUvarint(b, g.Seed)
	b = appendInts(b, in.Shape)
	return appendInts(b, in.Axes)
}
