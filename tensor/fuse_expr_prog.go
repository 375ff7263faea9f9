package tensor

// An expr op's program is a register machine over blocks. The value shape
// (the chunk an elementwise root makes, or the chunk a reduction map reads)
// is cut into blocks of ExprArgs.Block elements in C order; for each block
// the instructions run in order, each one a typed operation on whole blocks:
// registers hold one block each, of any dtype. So the cost of interpreting
// the program is paid once a block, not once an element, and the loops that
// do the work are the elementwise kernels' own, which is also why a fused
// elementwise result is bit-identical to the unfused one.

// The instructions of an expr program (ExprInstr.Op).
const (
	exprLoad   = "load"   // Dst views input Input's block (same element order: no copy)
	exprBcast  = "bcast"  // Dst holds input Input broadcast to the value shape
	exprSplat  = "splat"  // Dst holds input Input's only element, in every slot (once)
	exprConst  = "const"  // Dst holds the constant of the full generator Gen (once)
	exprGen    = "gen"    // Dst holds generator Kind's values from their global indices
	exprCast   = "cast"   // Dst = Src[0] cast to DType
	exprNaN0   = "nan0"   // Dst = Src[0] with NaNs replaced by zeros
	exprElem   = "elem"   // Dst = Kind(Src...), Dst -1 being the output chunk's block
	exprReduce = "reduce" // the partial of reduction Kind over Axes accumulates Src[0] (nanmean: and Src[1])
)

// exprBlock is the block length compiled programs use: 4096 elements keep a
// handful of float64 registers (32 KiB each) within the L2 cache, and are
// long enough that the per-block work of the interpreter is negligible.
const exprBlock = 4096

// ExprArgs are the arguments of an "expr" op: a compiled program. A worker
// validates a program before running it; a malformed one is an error.
type ExprArgs struct {
	Shape   []int // the value shape the program iterates over
	Block   int   // elements a block: a power of two in [64, 65536]
	Regs    int   // number of registers
	Code    []ExprInstr
	Members []string // the kinds of the fused ops, for plans
}

// An ExprInstr is one instruction of an expr program.
type ExprInstr struct {
	Op    string // exprLoad, ...
	Kind  string // elem: the elementwise op; gen: the generator; reduce: the reduction
	Dst   int    // the register written
	Src   []int  // the registers read
	Input int    // load, bcast, splat: index of the op's input
	DType DType  // the dtype Dst holds (reduce: of the accumulator)
	Elem  ElemArgs
	Gen   GenArgs
	Shape []int // const: the full chunk's shape
	Axes  []int // reduce: the reduced axes of the value shape
}

// genNative is the dtype a generator computes in before its values are
// cast to the chunk's dtype, as its kernel does.
func genNative(kind string, dt DType) DType {
	switch kind {
	case OpRand, OpRandn, OpUniform, OpNormal, OpLinspace:
		return Float64
	case OpRandint:
		return Int64
	case OpArange:
		switch {
		case dt.IsInt():
			return Int64
		case dt == Float32:
			return Float32
		}
		return Float64
	}
	return dt
}

// exprCompiler turns a group into a program over virtual registers, then
// maps them onto as few registers as the values' lifetimes allow.
type exprCompiler struct {
	cg     *ChunkGraph
	g      *exprGroup
	code   []ExprInstr
	dtypes []DType // of each virtual register
	pinned []bool  // set once, read in every block
	val    map[int]int
	casts  map[[2]int]int
	input  map[int]int // op key -> index among the group's inputs
}

func (c *exprCompiler) newReg(dt DType) int {
	c.dtypes = append(c.dtypes, dt)
	c.pinned = append(c.pinned, false)
	return len(c.dtypes) - 1
}

func (c *exprCompiler) emit(in ExprInstr) int {
	in.Dst = c.newReg(in.DType)
	c.code = append(c.code, in)
	return in.Dst
}

// cast returns a register holding r's values as dt.
func (c *exprCompiler) cast(r int, dt DType) int {
	if c.dtypes[r] == dt {
		return r
	}
	key := [2]int{r, int(dt)}
	if v, ok := c.casts[key]; ok {
		return v
	}
	v := c.emit(ExprInstr{Op: exprCast, Src: []int{r}, DType: dt})
	c.pinned[v] = c.pinned[r] // a cast constant is cast once
	c.casts[key] = v
	return v
}

// value returns the register holding op k's values.
func (c *exprCompiler) value(k int) int {
	if v, ok := c.val[k]; ok {
		return v
	}
	op := c.cg.Ops[k]
	ins := ExprInstr{Input: c.input[k], DType: op.DType}
	switch n := NumElements(op.Shape); {
	case n == NumElements(c.g.shape):
		ins.Op = exprLoad
	case n == 1:
		ins.Op = exprSplat
	default:
		ins.Op = exprBcast
	}
	v := c.emit(ins)
	c.pinned[v] = ins.Op == exprSplat
	c.val[k] = v
	return v
}

// compileGroup makes the expr op that replaces g; its Inputs are g.inputs.
func compileGroup(cg *ChunkGraph, g *exprGroup) ChunkOp {
	c := &exprCompiler{cg: cg, g: g, val: map[int]int{}, casts: map[[2]int]int{}, input: map[int]int{}}
	for i, k := range g.inputs {
		c.input[k] = i
	}
	root := cg.Ops[g.root]
	var members []string
	for _, k := range g.members {
		op := cg.Ops[k]
		members = append(members, op.Kind)
		if k == g.root && g.value != g.root {
			continue
		}
		switch {
		case op.Kind == OpFull:
			v := c.emit(ExprInstr{Op: exprConst, DType: op.DType, Gen: op.Args.(GenArgs), Shape: op.Shape})
			c.pinned[v] = true
			c.val[k] = v
		case isGenOp(op):
			v := c.emit(ExprInstr{Op: exprGen, Kind: op.Kind, DType: genNative(op.Kind, op.DType), Gen: op.Args.(GenArgs)})
			c.val[k] = c.cast(v, op.DType)
		default:
			args := op.Args.(ElemArgs)
			src := make([]int, len(op.Inputs))
			for i, in := range op.Inputs {
				want := args.Compute
				if op.Kind == OpWhere && i == 0 {
					want = Bool
				}
				src[i] = c.cast(c.value(in), want)
			}
			c.val[k] = c.emit(ExprInstr{Op: exprElem, Kind: op.Kind, Src: src, DType: op.DType, Elem: args})
		}
	}
	if g.value != g.root {
		args := root.Args.(ReduceArgs)
		v := c.val[g.value]
		var src []int
		switch args.Op {
		case OpCountNonzero:
			v = c.cast(c.cast(v, Bool), Int64)
		case OpMean, OpVar, OpStd:
			v = c.cast(v, Float64)
		case OpNanmean:
			v = c.cast(v, Float64)
			z := c.emit(ExprInstr{Op: exprNaN0, Src: []int{v}, DType: Float64})
			src = []int{z, v} // sums without NaNs; counts of what is not NaN
			v = z
		case OpNansum:
			v = c.cast(v, root.DType)
			if root.DType.IsFloat() {
				v = c.emit(ExprInstr{Op: exprNaN0, Src: []int{v}, DType: root.DType})
			}
		default:
			v = c.cast(v, root.DType)
		}
		if src == nil {
			src = []int{v}
		}
		c.code = append(c.code, ExprInstr{Op: exprReduce, Kind: args.Op, Src: src, DType: c.dtypes[v], Axes: args.Axes, Dst: -1})
	} else {
		c.code[len(c.code)-1].Dst = -1 // the root writes the output chunk
	}
	args := ExprArgs{Shape: g.shape, Block: exprBlock, Code: c.code, Members: members}
	args.Regs = c.allocate()
	return ChunkOp{Kind: "expr", Inputs: g.inputs, Shape: root.Shape, DType: root.DType, Args: args, Node: root.Node}
}

// allocate maps the virtual registers of c.code onto registers, reusing one
// once the value it held is read no more, and returns how many it used. A
// register is never both read and written by one instruction, so a loop's
// output never overlaps its input; pinned values keep theirs.
func (c *exprCompiler) allocate() int {
	last := make([]int, len(c.dtypes))
	for i := range last {
		last[i] = -1
	}
	for i, in := range c.code {
		for _, s := range in.Src {
			last[s] = i
		}
	}
	phys := make([]int, len(c.dtypes))
	var free []int
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
		src := make([]int, len(in.Src))
		for j, s := range in.Src {
			src[j] = phys[s]
			if last[s] == i && !c.pinned[s] {
				last[s] = -2 // freed once even when read twice
				free = append(free, phys[s])
			}
		}
		in.Src = src
	}
	return n
}
