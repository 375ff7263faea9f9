package tensor

import (
	"slices"
	"strings"
)

// Expression fusion goes past Mars' chain fusion: for every output chunk it
// gathers the elementwise ops and generators that feed it (and the
// reduction map that may consume it) into one "expr" op, whose kernel runs a
// compiled program over cache-sized blocks. Intermediate chunks, random ones
// included, are never materialized: each block of each intermediate lives in
// a scratch register (4096 elements, 32 KiB at most), reused from chunk to
// chunk.
//
// A group grows from a root (an elementwise op, or a reduction map op of a
// supported reduction whose input is an elementwise op or a generator read
// by nothing else) towards its inputs. An input op joins the group when it
//   - is an elementwise op or a random generator with the root's value
//     shape, is no output of the graph, and every op that reads it is in the
//     group; or
//   - is a full (zeros, ones, a scalar literal) of any shape that broadcasts:
//     a constant, copied into every group that reads it; or
//   - is an arange, linspace or eye chunk of the value shape, copied into
//     every group that reads it, since generating one of those values costs
//     less than reading it back from memory.
//
// Random generators are not copied: a value costs two 64-bit hashes, more
// than a read, so a random chunk read by several groups is made once and
// read by each. A copied generator whose every reader was fused is dropped
// from the graph. Every other input is read from its chunk, block by block,
// without a copy (or broadcast into a register when its shape differs).

// Options select the graph optimizations Optimize applies.
type Options struct {
	Fuse     bool // chain fusion, as Mars: single-input chains become one "fuse" op
	FuseExpr bool // expression fusion of elementwise ops, generators and reduction maps
}

// Optimize applies the optimizations opt selects to cg: expression fusion
// first, then chain fusion of the chains that remain (an expr op heads a
// chain like any other op). cg is not modified.
func Optimize(cg *ChunkGraph, opt Options) *ChunkGraph {
	if opt.FuseExpr {
		cg = FuseExpr(cg)
	}
	if opt.Fuse {
		cg = Fuse(cg)
	}
	return cg
}

// exprReductions are the reductions whose map op an expr program can end in;
// argmin and argmax, which need global indices, keep their own map kernel.
var exprReductions = map[string]bool{
	OpSum: true, OpNansum: true, OpProd: true, OpMin: true, OpMax: true, OpNanmin: true,
	OpNanmax: true, OpAny: true, OpAll: true, OpCountNonzero: true, OpMean: true,
	OpNanmean: true, OpVar: true, OpStd: true,
}

var (
	elemKinds = map[string]bool{}
	genKinds  = map[string]bool{OpFull: true, OpArange: true, OpLinspace: true, OpEye: true,
		OpRand: true, OpRandn: true, OpRandint: true, OpUniform: true, OpNormal: true}
	// copiedGens are the generators a group copies rather than shares.
	copiedGens = map[string]bool{OpFull: true, OpArange: true, OpLinspace: true, OpEye: true}
)

func init() {
	for _, k := range elemUnaryOps {
		elemKinds[k] = true
	}
	for _, k := range elemBinaryOps {
		elemKinds[k] = true
	}
	elemKinds[OpWhere] = true
}

func isElemOp(op *ChunkOp) bool {
	_, ok := op.Args.(ElemArgs)
	return ok && op.Stored == 0 && elemKinds[op.Kind]
}

func isGenOp(op *ChunkOp) bool {
	_, ok := op.Args.(GenArgs)
	return ok && op.Stored == 0 && genKinds[op.Kind] && len(op.Inputs) == 0
}

// exprMapOp returns the reduction of a map op an expr program can end in.
func exprMapOp(op *ChunkOp) (ReduceArgs, bool) {
	args, ok := op.Args.(ReduceArgs)
	if !ok || op.Stored != 0 || len(op.Inputs) != 1 || !exprReductions[args.Op] || op.Kind != args.Op+".map" {
		return args, false
	}
	return args, true
}

// maxExprMembers bounds a group, and so a program's length and registers
// (a register is a block of up to 32 KiB): past it, the ops that would
// have joined are read as inputs.
const maxExprMembers = 256

// An exprGroup is the set of ops one expr op replaces.
type exprGroup struct {
	root    int   // the op whose chunk the expr op makes
	value   int   // the op whose values the program computes (root, or a map's input)
	shape   []int // the value shape: the program's iteration space
	members []int // ascending keys, root included
	inputs  []int // the chunks the program reads, ascending keys
}

// FuseExpr replaces, per output chunk, the maximal sub-graph of elementwise
// ops and generators (optionally ending in a reduction map op) whose
// intermediate results nothing else reads by one "expr" op computing it in
// one pass over blocks. It returns a new graph with keys renumbered; cg is
// not modified. Groups of a single op are left as they are.
func FuseExpr(cg *ChunkGraph) *ChunkGraph {
	n := len(cg.Ops)
	uses := make([]int, n)
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			uses[in]++
		}
	}
	isOutput := make([]bool, n)
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			isOutput[k] = true
		}
	}
	owner := make([]int, n) // the root of the group that absorbed the op, or -1
	for i := range owner {
		owner[i] = -1
	}
	groups := map[int]*exprGroup{}
	for k := n - 1; k >= 0; k-- {
		if owner[k] >= 0 {
			continue
		}
		if g := growGroup(cg, k, uses, isOutput, owner); g != nil {
			groups[k] = g
		}
	}

	// Copied generators stay only when something still reads them.
	refs := make([]int, n)
	for k, op := range cg.Ops {
		if owner[k] >= 0 && owner[k] != k {
			continue
		}
		ins := op.Inputs
		if g, ok := groups[k]; ok {
			ins = g.inputs
		}
		for _, in := range ins {
			refs[in]++
		}
	}
	out := &ChunkGraph{}
	newKey := make([]int, n)
	for k, op := range cg.Ops {
		if owner[k] >= 0 && owner[k] != k {
			continue
		}
		if refs[k] == 0 && !isOutput[k] && isGenOp(op) && copiedGens[op.Kind] && uses[k] > 0 {
			continue // every reader copied it
		}
		var c ChunkOp
		if g, ok := groups[k]; ok {
			c = compileGroup(cg, g)
		} else {
			c = *op
		}
		ins := make([]int, len(c.Inputs))
		for i, in := range c.Inputs {
			ins[i] = newKey[in]
		}
		c.Inputs = ins
		c.Key = len(out.Ops)
		newKey[k] = c.Key
		out.Ops = append(out.Ops, &c)
	}
	for _, o := range cg.Outputs {
		t := o
		t.Keys = make([]uint64, len(o.Keys))
		for i, k := range o.Keys {
			t.Keys[i] = uint64(newKey[k])
		}
		out.Outputs = append(out.Outputs, t)
	}
	return out
}

// growGroup builds the group rooted at op root, marking the ops it absorbs
// in owner, or returns nil when root fuses with nothing.
func growGroup(cg *ChunkGraph, root int, uses []int, isOutput []bool, owner []int) *exprGroup {
	op := cg.Ops[root]
	g := &exprGroup{root: root, value: root}
	if _, ok := exprMapOp(op); ok {
		x := op.Inputs[0]
		xo := cg.Ops[x]
		if !(isElemOp(xo) || isGenOp(xo)) || uses[x] != 1 || isOutput[x] || owner[x] >= 0 {
			return nil
		}
		if isGenOp(xo) && xo.Kind == OpFull && NumElements(xo.Shape) == 1 && len(xo.Shape) == 0 {
			return nil // a reduction of a 0-d literal: nothing to stream
		}
		g.value = x
	} else if !isElemOp(op) {
		return nil
	}
	g.shape = cg.Ops[g.value].Shape
	inner := map[int]int{} // uses of a candidate from inside the group
	var cands []int
	use := func(k int) {
		if inner[k] == 0 {
			cands = append(cands, k)
		}
		inner[k]++
	}
	add := func(k int) {
		g.members = append(g.members, k)
		for _, in := range cg.Ops[k].Inputs {
			use(in)
		}
	}
	if g.value != root {
		g.members = append(g.members, root)
		use(g.value)
	} else {
		add(root)
	}
	fused := 0
	inputs := map[int]bool{}
	for len(cands) > 0 {
		// The largest candidate first: all of its readers, which have
		// larger keys, are decided by now.
		i := 0
		for j, c := range cands {
			if c > cands[i] {
				i = j
			}
		}
		c := cands[i]
		cands = append(cands[:i], cands[i+1:]...)
		co := cg.Ops[c]
		switch {
		case len(g.members) >= maxExprMembers:
			inputs[c] = true
			continue
		case isGenOp(co) && co.Kind == OpFull && broadcasts(co.Shape, g.shape):
			add(c)
		case isGenOp(co) && copiedGens[co.Kind] && slices.Equal(co.Shape, g.shape):
			add(c)
		case (isElemOp(co) || isGenOp(co)) && slices.Equal(co.Shape, g.shape) &&
			!isOutput[c] && owner[c] < 0 && inner[c] == uses[c]:
			add(c)
			owner[c] = root
		default:
			inputs[c] = true
			continue
		}
		fused++
	}
	if fused == 0 && g.value == root {
		return nil
	}
	if g.value != root {
		owner[g.value] = root
	}
	owner[root] = root
	slices.Sort(g.members)
	for k := range inputs {
		g.inputs = append(g.inputs, k)
	}
	slices.Sort(g.inputs)
	return g
}

// broadcasts reports whether shape broadcasts to out (NumPy's rule).
func broadcasts(shape, out []int) bool {
	if len(shape) > len(out) {
		return false
	}
	off := len(out) - len(shape)
	for ax, s := range shape {
		if s != 1 && s != out[ax+off] {
			return false
		}
	}
	return true
}

// exprMembers names the kinds of an expr op's fused ops, "rand+rand+add+sum.map".
func exprMembers(op *ChunkOp) (string, bool) {
	a, ok := op.Args.(ExprArgs)
	if op.Kind != "expr" || !ok {
		return "", false
	}
	return "expr(" + strings.Join(a.Members, "+") + ")", true
}
