package fuse

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
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
// by nothing else, by sibling maps only, or redrawn) towards its inputs. An input op joins the group when it
//   - is an elementwise op or a random generator with the root's value
//     shape, is no output of the graph, and every op that reads it is in the
//     group; or
//   - is a full (zeros, ones, a scalar literal) of any shape that broadcasts:
//     a constant, copied into every group that reads it; or
//   - is an arange, linspace or eye chunk of the value shape, copied into
//     every group that reads it, since generating one of those values costs
//     less than reading it back from memory.
//
// A random chunk read by several groups is made once and read by each,
// but for rand and uniform chunks that are no outputs and have at most
// maxRedraws readers: those are drawn again in every group that reads
// them, since a value costs about a nanosecond to draw, less than writing
// it to fresh memory and reading it back, and no chunk is held (normal
// values, by Box–Muller, and randint's cost more). A copied or redrawn
// generator whose every reader was fused is dropped from the graph. Every
// other input is read from its chunk, block by block, without a copy (or
// broadcast into a register when its shape differs).
//
// When all the readers of a value are map ops of reductions (x.sum(axis=0)
// and x.mean(axis=1)), those maps join one group as its sibling roots: one
// pass makes each block of the value once and folds it into every partial.
// The group's expr op makes all the partials, packed one after the other
// in a 1-D chunk, and an "expr.part" op per sibling cuts its own out.

// Options select the graph optimizations Optimize applies.
type Options struct {
	Fuse     bool // chain fusion, as Mars: single-input chains become one "fuse" op
	FuseExpr bool // expression fusion of elementwise ops, generators and reduction maps; random blocks drawn by their matmul ops
	// MemoryBound is the chunk bytes the workers may keep, 0 if unknown:
	// Reread reads a file again rather than keep more of it.
	MemoryBound int64
}

// Optimize applies the optimizations opt selects to cg: expression fusion
// first (with DrawMatmulBlocks and Labels), then the choice between
// keeping and reading again a file a two-pass formula reads twice
// (Reread), the sharing of a chunk by the reductions' maps that read it
// (Maps), a read of its own for each reader of a chunk of a file cheap to
// decode (Copies), then chain fusion of the chains that remain (an expr
// op heads a chain like any other op). cg is not modified.
func Optimize(cg *chunk.Graph, opt Options) *chunk.Graph {
	if opt.FuseExpr {
		cg = Labels(DrawMatmulBlocks(Expr(cg)))
	}
	if opt.Fuse {
		var notes []string
		cg, notes = Reread(cg, opt.MemoryBound)
		var copied []string
		cg, copied = Copies(Maps(cg))
		notes = append(notes, copied...)
		cg = Chains(cg)
		if notes != nil {
			noted := *cg // cg may be the caller's, unmodified
			noted.Notes = append(append([]string(nil), cg.Notes...), notes...)
			cg = &noted
		}
	}
	return cg
}

// maxRedraws bounds the groups that draw one random chunk again: past a
// few, reading the chunk from memory costs less than drawing it in each.
const maxRedraws = 4

// MaxExprMembers bounds a group, and so a program's length and registers
// (a register is a block of up to 32 KiB): past it, the ops that would
// have joined are read as inputs.
const MaxExprMembers = 256

// An exprGroup is the set of ops one expr op replaces.
type exprGroup struct {
	root    int   // the op whose chunk the expr op makes (the last sibling)
	value   int   // the op whose values the program computes (root, or a map's input)
	roots   []int // sibling map roots, ascending, root among them; nil for one root
	shape   []int // the value shape: the program's iteration space
	Members []int // ascending keys, root included
	Inputs  []int // the chunks the program reads, ascending keys
}

// Expr replaces, per output chunk, the maximal sub-graph of elementwise
// ops and generators (optionally ending in a reduction map op) whose
// intermediate results nothing else reads by one "expr" op computing it in
// one pass over blocks. It returns a new graph with keys renumbered; cg is
// not modified. The ops that keep their key and inputs are shared by both
// graphs. Groups of a single op are left as they are.
func Expr(cg *chunk.Graph) *chunk.Graph { return FuseExpr(cg, true) }

// FuseExpr is FuseExpr; reuse lets a group take the program of the group
// compiled before it without compiling it, when they are alike.
func FuseExpr(cg *chunk.Graph, reuse bool) *chunk.Graph {
	n := len(cg.Ops)
	// Keys fit in int32: a graph of 2^31 ops would not fit in memory.
	uses := make([]int32, n)
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			uses[in]++
		}
	}
	class, isMap := make([]uint8, n), make([]bool, n)
	Classify(cg.Ops, class, isMap)
	if !slices.Contains(class, classElem) && !slices.Contains(isMap, true) {
		// No op roots a group (as a graph tiled fused mostly is): every
		// op keeps its key.
		for k := range uses {
			uses[k] = int32(k)
		}
		return &chunk.Graph{Ops: slices.Clone(cg.Ops), Outputs: remapOutputs(cg.Outputs, uses)}
	}
	isOutput := make([]bool, n)
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			isOutput[k] = true
		}
	}
	owner := make([]int32, n) // the root of the group that absorbed the op, or -1
	for i := range owner {
		owner[i] = -1
	}
	// Groups are found from the last op back, so that every group that may
	// absorb an op is grown before the op itself is visited; each is
	// compiled at once, and its op stacked for the renumbering pass.
	gr := &ExprGrower{Cg: cg, Uses: uses, IsOutput: isOutput, Owner: owner, Class: class, IsMap: isMap}
	comp := NewExprCompiler(cg, gr.Class)
	comp.Reuse = reuse
	var made chunk.OpStack
	// Groups of sibling roots are made at their first root, which comes
	// before groups of later roots: they are kept apart from the stack.
	var siblings map[int]*chunk.Op
	refs := make([]int32, n) // readers left once the groups are made
	kept := 0
	for k := n - 1; k >= 0; k-- {
		if owner[k] >= 0 {
			continue // absorbed by a group of a later root
		}
		ins := cg.Ops[k].Inputs
		if g := gr.Grow(k); g != nil {
			var op *chunk.Op
			if g.roots != nil {
				if siblings == nil {
					siblings = map[int]*chunk.Op{}
				}
				op = new(chunk.Op)
				siblings[g.roots[0]] = op
			} else {
				op = made.Push()
			}
			*op = comp.Compile(g)
			ins = op.Inputs
		}
		for _, in := range ins {
			refs[in]++
		}
		kept++
	}

	out := &chunk.Graph{Ops: make([]*chunk.Op, 0, kept)}
	var slab chunk.OpSlab
	// Whether groups copy the generators of a kind, looked up once a run
	// of ops of one kind.
	copiedKind, copied := chunk.Kind(""), false
	// An op's readers are counted no more once it is visited, and the new
	// keys of the ops before it are what is read: one table holds both.
	newKey := refs
	for k, op := range cg.Ops {
		if owner[k] >= 0 && int(owner[k]) != k {
			if g, ok := siblings[int(owner[k])]; ok && gr.partOffset(k) >= 0 {
				newKey[k] = int32(len(out.Ops))
				out.Ops = append(out.Ops, partOp(op, len(out.Ops), g.Key, gr.partOffset(k)))
			}
			continue
		}
		// Copied generators stay only when something still reads them.
		if refs[k] == 0 && !isOutput[k] && gr.Class[k] == classGen && uses[k] > 0 {
			if op.Kind != copiedKind {
				copiedKind, copied = op.Kind, chunk.CopiedGens[op.Kind] || chunk.RedrawnGens[op.Kind]
			}
			if copied {
				continue // every reader copied it
			}
		}
		var c *chunk.Op
		if g, ok := siblings[k]; ok && int(owner[k]) == k {
			c = g
			for i, in := range c.Inputs {
				c.Inputs[i] = int(newKey[in])
			}
			c.Key = len(out.Ops)
			out.Ops = append(out.Ops, c, partOp(op, c.Key+1, c.Key, 0))
			newKey[k] = int32(c.Key + 1)
			continue
		} else if int(owner[k]) == k {
			c = made.Pop()
			for i, in := range c.Inputs {
				c.Inputs[i] = int(newKey[in]) // the group's own inputs
			}
			c.Key = len(out.Ops)
		} else if keepsKeys(op, len(out.Ops), newKey) {
			c = op // the same key and inputs: shared, as Fuse shares them
		} else {
			c = slab.Take()
			*c = *op
			c.Inputs = comp.ints.Take(len(op.Inputs))
			for i, in := range op.Inputs {
				c.Inputs[i] = int(newKey[in])
			}
			c.Key = len(out.Ops)
		}
		newKey[k] = int32(c.Key)
		out.Ops = append(out.Ops, c)
	}
	out.Outputs = remapOutputs(cg.Outputs, newKey)
	return out
}

// keepsKeys reports whether op keeps its key, key, and its inputs' keys in the
// graph FuseExpr makes, as newKey has them so far.
func keepsKeys(op *chunk.Op, key int, newKey []int32) bool {
	if op.Key != key {
		return false
	}
	for _, in := range op.Inputs {
		if int(newKey[in]) != in {
			return false
		}
	}
	return true
}

// The classes of ops an expr group may absorb.
const (
	classElem = 1 + iota // isElemOp
	classGen             // isGenOp
)

// Classify sets class[k] to op k's class (0 for an op no group absorbs)
// and isMap[k] to whether it is a map op an expr program can end in, as
// isElemOp, isGenOp and exprMapOp tell. The ops of one node come one
// after the other and share their kind: a kind is looked up once a run
// of them.
func Classify(ops []*chunk.Op, class []uint8, isMap []bool) {
	var kind chunk.Kind
	var elem, gen, red bool
	for k, op := range ops {
		if k == 0 || op.Kind != kind {
			kind = op.Kind
			elem, gen = kind.IsElem(), chunk.GenKinds[kind]
			base, step := kind.Split()
			red = step == chunk.StepMap && chunk.ExprReductions[base]
		}
		// The VM computes in the dtypes the kernels do: an op computing
		// in another (int8, float16, ...; see tensor.DType.Compute) runs
		// alone, widened by kernel.Run. Its chunk may still be a
		// group's input: loading casts it.
		if op.Stored != 0 || narrow(op.DType) {
			continue
		}
		switch {
		case elem:
			if a, ok := op.Args.(chunk.ElemArgs); ok && !narrow(a.Compute) {
				class[k] = classElem
			}
		case gen:
			if _, ok := op.Args.(chunk.GenArgs); ok && len(op.Inputs) == 0 {
				class[k] = classGen
			}
		case red:
			a, ok := chunk.ExprMapOp(op)
			isMap[k] = ok && !narrow(a.In)
		}
	}
}

// narrow reports whether the kernels compute d in another dtype.
func narrow(d tensor.DType) bool { return d.Valid() && d.Compute() != d }

// An exprCand is an op that a member of a growing group reads, with the
// number of members that read it.
type exprCand struct{ key, inner int }

// An ExprGrower grows the groups of one graph, reusing its scratch.
type ExprGrower struct {
	Cg       *chunk.Graph
	Uses     []int32
	IsOutput []bool
	Owner    []int32
	g        exprGroup
	Class    []uint8 // of each op: classElem, classGen or 0
	IsMap    []bool  // of each op: whether exprMapOp takes it
	cands    []exprCand
	inputs   []int
	ints     chunk.IntSlab
	// readers[readAt[k]:readAt[k+1]] are the ops that read op k, made
	// the first time a value with several readers may end a group.
	readAt, readers []int32
	// parts holds, for each sibling root, the offset of its partial in
	// its group's packed output.
	parts map[int]int
}

// readersOf returns the keys of the ops that read op k.
func (gr *ExprGrower) readersOf(k int) []int32 {
	if gr.readAt == nil {
		n := len(gr.Cg.Ops)
		gr.readAt = make([]int32, n+1)
		for _, op := range gr.Cg.Ops {
			for _, in := range op.Inputs {
				gr.readAt[in+1]++
			}
		}
		for i := range n {
			gr.readAt[i+1] += gr.readAt[i]
		}
		gr.readers = make([]int32, gr.readAt[n])
		next := slices.Clone(gr.readAt[:n])
		for _, op := range gr.Cg.Ops {
			for _, in := range op.Inputs {
				gr.readers[next[in]] = int32(op.Key)
				next[in]++
			}
		}
	}
	return gr.readers[gr.readAt[k]:gr.readAt[k+1]]
}

// siblings sets g.roots to the readers of x when every one is a map op of
// an expr reduction making partials of dtype dt, none yet in a group, and
// reports whether they are; their partials' offsets go to gr.parts.
func (gr *ExprGrower) siblings(g *exprGroup, x int, dt tensor.DType) bool {
	rs := gr.readersOf(x)
	if len(rs) != int(gr.Uses[x]) || len(rs) > MaxExprMembers/2 {
		return false // an op reads x twice, or the group would be too large
	}
	for _, r := range rs {
		op := gr.Cg.Ops[r]
		if !gr.IsMap[r] || gr.Owner[r] >= 0 || op.DType != dt {
			return false
		}
	}
	g.roots = g.roots[:0]
	for _, r := range rs {
		g.roots = append(g.roots, int(r))
	}
	slices.Sort(g.roots)
	if gr.parts == nil {
		gr.parts = map[int]int{}
	}
	off := 0
	for _, r := range g.roots {
		gr.parts[r] = off
		off += tensor.NumElements(gr.Cg.Ops[r].Shape)
	}
	return true
}

// partOffset is the offset of sibling root k's partial in its group's
// output, or -1 when k is none.
func (gr *ExprGrower) partOffset(k int) int {
	if off, ok := gr.parts[k]; ok {
		return off
	}
	return -1
}

// Grow builds the group rooted at op root, marking the ops it absorbs in
// owner, or returns nil when root fuses with nothing. The group is valid
// until the next call, but for its inputs, which are its own.
func (gr *ExprGrower) Grow(root int) *exprGroup {
	cg, uses, isOutput, owner := gr.Cg, gr.Uses, gr.IsOutput, gr.Owner
	op := cg.Ops[root]
	g := &gr.g
	*g = exprGroup{root: root, value: root, Members: g.Members[:0], roots: g.roots[:0]}
	multi := false
	if gr.IsMap[root] {
		x := op.Inputs[0]
		xo := cg.Ops[x]
		if gr.Class[x] == 0 || isOutput[x] || owner[x] >= 0 {
			return nil
		}
		if gr.Class[x] == classGen && xo.Kind == tensor.OpFull && tensor.NumElements(xo.Shape) == 1 && len(xo.Shape) == 0 {
			return nil // a reduction of a 0-d literal: nothing to stream
		}
		if uses[x] != 1 {
			switch {
			case gr.siblings(g, x, op.DType):
				multi = true
			case gr.Class[x] != classGen || !chunk.RedrawnGens[xo.Kind] || uses[x] > maxRedraws:
				return nil
			}
		}
		g.value = x
	} else if gr.Class[root] != classElem {
		return nil
	}
	// The ops a group absorbs are marked with the key it is made at: its
	// first sibling root, or its root.
	at := int32(root)
	if !multi {
		g.roots = nil
	} else {
		at = int32(g.roots[0])
	}
	g.shape = cg.Ops[g.value].Shape
	// A candidate is met only until it is decided: its readers, all
	// decided before it, are the only ops that meet it. So the few
	// candidates pending are searched, not mapped.
	class := gr.Class
	inputs := gr.inputs[:0]
	cands := gr.cands[:0]
	use := func(k int) {
		for i := range cands {
			if cands[i].key == k {
				cands[i].inner++
				return
			}
		}
		cands = append(cands, exprCand{k, 1})
	}
	add := func(k int) {
		g.Members = append(g.Members, k)
		for _, in := range cg.Ops[k].Inputs {
			use(in)
		}
	}
	if multi {
		g.Members = append(g.Members, g.roots...)
		for range g.roots {
			use(g.value)
		}
	} else if g.value != root {
		g.Members = append(g.Members, root)
		use(g.value)
	} else {
		add(root)
	}
	fused := 0
	for len(cands) > 0 {
		// The largest candidate first: all of its readers, which have
		// larger keys, are decided by now.
		i := 0
		for j := range cands {
			if cands[j].key > cands[i].key {
				i = j
			}
		}
		c, inner := cands[i].key, cands[i].inner
		cands = append(cands[:i], cands[i+1:]...)
		co := cg.Ops[c]
		gen := class[c] == classGen
		switch {
		case len(g.Members) >= MaxExprMembers:
			inputs = append(inputs, c)
			continue
		case gen && co.Kind == tensor.OpFull && tensor.Broadcasts(co.Shape, g.shape):
			add(c)
		case gen && chunk.CopiedGens[co.Kind] && slices.Equal(co.Shape, g.shape):
			add(c)
		case gen && chunk.RedrawnGens[co.Kind] && !isOutput[c] && slices.Equal(co.Shape, g.shape) &&
			inner < int(uses[c]) && uses[c] <= maxRedraws:
			add(c) // drawn again: other groups read it too
		case class[c] != 0 && slices.Equal(co.Shape, g.shape) &&
			!isOutput[c] && owner[c] < 0 && inner == int(uses[c]):
			add(c)
			owner[c] = at
		default:
			inputs = append(inputs, c)
			continue
		}
		fused++
	}
	gr.cands, gr.inputs = cands, inputs
	if fused == 0 && g.value == root && !gr.readsStore(root) {
		return nil
	}
	if g.value != root && (multi || uses[g.value] == 1) {
		owner[g.value] = at // else drawn again, as other groups read it
	}
	owner[root] = at
	for _, r := range g.roots {
		owner[r] = at
	}
	sortSmall(g.Members)
	g.Inputs = gr.ints.Clone(inputs)
	sortSmall(g.Inputs)
	return g
}

// readsStore says whether op k's first input is a store chunk (a
// from_zarr op's): a program of k alone then reads the chunk a block at a
// time as it is decoded (kernel's streamExpr), where k's own kernel needs
// it whole in memory (the anomaly's x - m: a 6 MB chunk decoded, and
// another 6 MB made, for each store chunk written).
func (gr *ExprGrower) readsStore(k int) bool {
	ins := gr.Cg.Ops[k].Inputs
	return len(ins) > 0 && gr.Cg.Ops[ins[0]].Kind == chunk.KindFromZarr
}

// sortSmall sorts s, as slices.Sort does, by insertion when s is short, as
// a group's members and inputs are: they come largest first, and a few
// are reversed faster than sorted.
func sortSmall(s []int) {
	if len(s) > 12 {
		slices.Sort(s)
		return
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// partOp is op key: it cuts sibling root op's partial, at element offset
// off, out of the output of expr op in.
func partOp(op *chunk.Op, key, in, off int) *chunk.Op {
	return &chunk.Op{Key: key, Kind: chunk.KindExprPart, Inputs: []int{in}, Shape: op.Shape, DType: op.DType,
		Args: chunk.PartArgs{Offset: off}, Node: op.Node}
}
