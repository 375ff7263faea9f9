package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec"
)

// Fusion while tiling. A reduction over an elementwise expression of
// generators (or over a generator), as (ones(1e6, chunks=10) + 1).sum(),
// tiles into one map op a chunk of the expression, each reading one chunk of each of the
// expression's nodes: FuseExpr then fuses every such column into one expr
// op, and the 300,000 ops of 100,000 columns are made only to be dropped.
//
// When every node of the expression is read by the expression alone, is no
// output, and has the chunks of the reduction's input (or is a one-element
// full, broadcast), the columns are apart from each other and from the rest
// of the graph: the group FuseExpr grows from a map op is its column, its
// whole column. Then the tiler makes each column on its own, in a graph of
// a column, grows and compiles its group there with FuseExpr's own code,
// and emits the expr op in place of the map op, and no op of the
// expression: FuseExpr of that graph is FuseExpr of the whole tiling.
//
// A column differs from the one compiled last only by the offsets of its
// generators when its chunks and its partial have the same shapes: where
// its program reads no offset (its generators are fulls), its expr op is
// the one made last.

// maxColumnNodes bounds the nodes of an expression fused while tiled, far
// below maxExprMembers: a column is one group.
const maxColumnNodes = 64

// A columnFuser makes the expr ops of one reduction's columns.
type columnFuser struct {
	nodes  []*spec.Node // the expression's nodes in graph order; the reduction's input last
	whole  []bool       // nodes[i] has the input's shape and chunks; else a one-element full
	chunks [][]int      // the input's chunks
	grid   []int
	offs   [][]int // ChunkOffsets(chunks)
	// Per node: its chunks' kind, their args boxed once (elementwise
	// nodes, and fulls, whose offsets no program reads), generator args
	// but for the offset, its inputs' indexes in nodes, and a
	// broadcast full's shape.
	kind   []chunk.Kind
	box    []any
	gen    []chunk.GenArgs
	ins    [][]int
	bshape [][]int
	// offsets: a whole generator other than a full, whose chunk offsets
	// programs carry: no column takes the expr op of another.
	offsets bool

	// The column graph holds two columns, in slots of len(nodes)+1 ops
	// (the map op last): the one the compiler compared with last stays
	// while the next is made in the other.
	mini   chunk.Graph
	store  []chunk.Op
	inputs [2][][]int // the Inputs of each slot's ops
	offBuf [2][][]int // the offsets of each slot's generators
	slot   int
	gr     *fuse.ExprGrower
	comp   *fuse.ExprCompiler

	idx, shape []int
	made       bool
	last       chunk.Op // the expr op made last, of a column of chunk shape lastShape
	lastShape  []int
}

// planColumns finds the reductions of g whose columns the tiler fuses
// (see above), and returns their fusers by node ID, and by node ID the
// fuser of each node tiled with one, making no op of its own.
func planColumns(g *spec.Graph, consumers [][]int) (map[int]*columnFuser, []*columnFuser) {
	var fusers map[int]*columnFuser
	var deferred []*columnFuser
	var output []bool
	for _, r := range g.Nodes {
		if !chunk.ExprReductions[r.Op] || len(r.Inputs) != 1 {
			continue
		}
		if output == nil {
			output = make([]bool, len(g.Nodes))
			for _, o := range g.Outputs {
				output[o.Node.ID] = true
			}
		}
		cf := newColumnFuser(r, consumers, output)
		if cf == nil {
			continue
		}
		if fusers == nil {
			fusers = map[int]*columnFuser{}
			deferred = make([]*columnFuser, len(g.Nodes))
		}
		fusers[r.ID] = cf
		for _, n := range cf.nodes {
			deferred[n.ID] = cf
		}
	}
	return fusers, deferred
}

// newColumnFuser returns the fuser of reduction r, or nil when its columns
// are not apart.
func newColumnFuser(r *spec.Node, consumers [][]int, output []bool) *columnFuser {
	x := r.Inputs[0]
	if !tensor.ElemKinds[x.Op] && !chunk.GenKinds[createKind(x)] || output[x.ID] || len(consumers[x.ID]) != 1 ||
		tensor.HasUnknown(r.Shape) || tensor.HasUnknown(x.Shape) || tensor.NumElements(x.Shape) < 2 {
		return nil
	}
	// The expression: x and what it reads, all the way down.
	in := map[int]bool{x.ID: true}
	nodes := []*spec.Node{x}
	for i := 0; i < len(nodes); i++ {
		for _, p := range nodes[i].Inputs {
			if !in[p.ID] {
				if len(nodes) == maxColumnNodes {
					return nil
				}
				in[p.ID] = true
				nodes = append(nodes, p)
			}
		}
	}
	slices.SortFunc(nodes, func(a, b *spec.Node) int { return a.ID - b.ID })
	cf := &columnFuser{nodes: nodes}
	if r.DType.Compute() != r.DType {
		return nil // the kernels widen it: see fuse.Classify
	}
	for _, n := range nodes {
		if output[n.ID] || tensor.HasUnknown(n.Shape) || n.DType.Compute() != n.DType {
			return nil
		}
		if n != x {
			for _, c := range consumers[n.ID] {
				if !in[c] {
					return nil
				}
			}
		}
		whole := slices.Equal(n.Shape, x.Shape)
		switch {
		case tensor.ElemKinds[n.Op]:
			// Its chunks are those of its whole inputs, as
			// tileElementwise cuts them, with nothing to rechunk.
			hasWhole := false
			for _, p := range n.Inputs {
				switch {
				case slices.Equal(p.Shape, x.Shape):
					hasWhole = true
				case !broadcastFull(p, x):
					return nil
				}
			}
			if !whole || !hasWhole {
				return nil
			}
		case chunk.GenKinds[createKind(n)]:
			if len(n.Chunks) != len(n.Shape) || createKind(n) == tensor.OpEye && len(n.Shape) != 2 {
				return nil
			}
			if !whole {
				if !broadcastFull(n, x) {
					return nil
				}
				break
			}
			if cf.chunks == nil {
				cf.chunks = n.Chunks
			} else if !SameChunks(cf.chunks, n.Chunks) {
				return nil
			}
		default:
			return nil
		}
		cf.whole = append(cf.whole, whole)
	}
	if cf.chunks == nil || len(cf.chunks) != len(x.Shape) {
		return nil
	}
	for ax, cs := range cf.chunks {
		sum := 0
		for _, c := range cs {
			if c <= 0 {
				return nil
			}
			sum += c
		}
		if sum != x.Shape[ax] {
			return nil
		}
	}
	cf.init()
	return cf
}

// broadcastFull reports whether n is a full of one element that the
// expression of x broadcasts, in one chunk.
func broadcastFull(n, x *spec.Node) bool {
	if createKind(n) != tensor.OpFull || tensor.NumElements(n.Shape) != 1 || len(n.Shape) > len(x.Shape) ||
		len(n.Chunks) != len(n.Shape) || tensor.HasUnknown(n.Shape) {
		return false
	}
	for _, cs := range n.Chunks {
		if len(cs) != 1 || cs[0] != 1 {
			return false
		}
	}
	return true
}

// init readies the fuser's tables and its column graph.
func (cf *columnFuser) init() {
	nn := len(cf.nodes)
	cf.grid = tensor.GridShape(cf.chunks)
	cf.offs = tensor.ChunkOffsets(cf.chunks)
	cf.idx, cf.shape = make([]int, len(cf.grid)), make([]int, len(cf.grid))
	cf.kind = make([]chunk.Kind, nn)
	cf.box = make([]any, nn)
	cf.gen = make([]chunk.GenArgs, nn)
	cf.ins = make([][]int, nn)
	cf.bshape = make([][]int, nn)
	at := make(map[int]int, nn)
	for i, n := range cf.nodes {
		at[n.ID] = i
	}
	for i, n := range cf.nodes {
		if tensor.ElemKinds[n.Op] {
			cf.kind[i] = chunk.Kind(n.Op)
			cf.box[i] = elemArgs(n)
			for _, p := range n.Inputs {
				cf.ins[i] = append(cf.ins[i], at[p.ID])
			}
			continue
		}
		cf.kind[i] = createKind(n)
		cf.gen[i] = createArgs(n)
		if !cf.whole[i] {
			cf.bshape[i] = tensor.ChunkShape(n.Chunks, tensor.GridShape(n.Chunks), 0)
		}
		if cf.kind[i] == chunk.KindFull {
			// No program reads a full's offset (compile and makeOp
			// skip it; sameOpButOffset compares its length): one box
			// serves every column.
			a := cf.gen[i]
			a.Offset = make([]int, len(n.Shape))
			cf.box[i] = a
		} else {
			cf.offsets = true
		}
	}
	m := nn + 1
	cf.store = make([]chunk.Op, 2*m)
	cf.mini.Ops = make([]*chunk.Op, 2*m)
	for k := range cf.store {
		cf.mini.Ops[k] = &cf.store[k]
	}
	for s := range cf.inputs {
		cf.inputs[s] = make([][]int, m)
		cf.offBuf[s] = make([][]int, nn)
		for i := range cf.nodes {
			cf.inputs[s][i] = make([]int, len(cf.ins[i]))
			for j, p := range cf.ins[i] {
				cf.inputs[s][i][j] = s*m + p
			}
			cf.offBuf[s][i] = make([]int, len(cf.grid))
		}
		cf.inputs[s][nn] = []int{s*m + nn - 1} // the map reads the input, last of the nodes
	}
	owner := make([]int32, 2*m)
	cf.gr = &fuse.ExprGrower{Cg: &cf.mini, Uses: make([]int32, 2*m), IsOutput: make([]bool, 2*m), Owner: owner,
		Class: make([]uint8, 2*m), IsMap: make([]bool, 2*m)}
	cf.comp = fuse.NewExprCompiler(&cf.mini, cf.gr.Class)
	cf.comp.Reuse = true
}

// emit emits the expr op that FuseExpr would make of the map op mapOp of
// chunk j of the reduction's input and the column it reads, and returns
// its key. mapOp's Key, Inputs and Node are its own to set.
func (cf *columnFuser) emit(t *tiler, j int, mapOp chunk.Op) (uint64, error) {
	tensor.UnravelInto(cf.idx, j, cf.grid)
	for ax, i := range cf.idx {
		cf.shape[ax] = cf.chunks[ax][i]
	}
	if cf.made && !cf.offsets && slices.Equal(cf.shape, cf.lastShape) && slices.Equal(mapOp.Shape, cf.last.Shape) {
		op := t.slab.Take()
		*op = cf.last
		op.Shape = mapOp.Shape
		return t.emit(op), nil
	}
	nn := len(cf.nodes)
	m := nn + 1
	s := cf.slot
	b := s * m
	shape := t.shapes.Shape(cf.shape)
	gr := cf.gr
	for i, n := range cf.nodes {
		op := &cf.store[b+i]
		*op = chunk.Op{Key: b + i, Kind: cf.kind[i], Inputs: cf.inputs[s][i], Shape: shape, DType: n.DType, Args: cf.box[i], Node: int32(n.ID)}
		if !cf.whole[i] {
			op.Shape = cf.bshape[i]
		}
		if op.Args == nil {
			// A generator whose offset programs carry.
			a := cf.gen[i]
			a.Offset = cf.offBuf[s][i]
			for ax, c := range cf.idx {
				a.Offset[ax] = cf.offs[ax][c]
			}
			op.Args = a
		}
	}
	mo := &cf.store[b+nn]
	*mo = mapOp
	mo.Key, mo.Inputs, mo.Node = b+nn, cf.inputs[s][nn], int32(t.node)
	for k := b; k < b+m; k++ {
		gr.Uses[k], gr.Owner[k], gr.Class[k], gr.IsMap[k] = 0, -1, 0, false
	}
	for _, op := range cf.mini.Ops[b : b+m] {
		for _, in := range op.Inputs {
			gr.Uses[in]++
		}
	}
	fuse.Classify(cf.mini.Ops[b:b+m], gr.Class[b:b+m], gr.IsMap[b:b+m])
	g := gr.Grow(b + nn)
	if g == nil || len(g.Inputs) != 0 || len(g.Members) != m {
		return 0, fmt.Errorf("column %d of the reduction's input does not fuse whole", j)
	}
	op := cf.comp.Compile(g)
	if cf.comp.Prev.Root == b+nn {
		cf.slot ^= 1 // compared with from now on: keep it
	}
	cf.last, cf.made = op, true
	cf.lastShape = append(cf.lastShape[:0], cf.shape...)
	return t.emitOp(op), nil
}
