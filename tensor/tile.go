package tensor

import (
	"fmt"
	"slices"
)

// Tile cuts g into chunk operands. env resolves OpInput nodes to the
// session's stored tensors; their chunks become Stored ops.
//
// Each Node.Op has one tile rule (see tileRules); a rule reads the tiled
// inputs of a node and emits the ops that make the node's chunks.
//
// A graph in which a length depends on the data (unique, bincount) cannot be
// tiled at once: TileStages tiles it a stage at a time.
func Tile(g *Graph, env Env) (*ChunkGraph, error) {
	s, err := TileStages(g, env)
	if err != nil {
		return nil, err
	}
	if !s.Last() {
		return nil, fmt.Errorf("tile: the graph has lengths that depend on the data; it must be tiled in stages")
	}
	return s.Graph, nil
}

// A tileRule emits the ops for one node and returns its chunk grid.
type tileRule func(t *tiler, n *Node) (*TiledTensor, error)

// ruleFor returns the tile rule of a Node.Op: the whole table is this switch.
func ruleFor(op string) (tileRule, bool) {
	switch op {
	case OpInput:
		return tileInput, true
	case OpRechunk:
		return tileRechunk, true
	case OpScalar, OpFull, OpArange, OpLinspace, OpEye, OpRand, OpRandn, OpRandint, OpUniform, OpNormal:
		return tileCreate, true
	case OpTranspose:
		return tileTranspose, true
	case OpSlice:
		return tileSlice, true
	case OpConcat:
		return tileConcat, true
	case OpReshape:
		return tileReshape, true
	case OpCumsum, OpCumprod:
		return tileScan, true
	case OpMatmul:
		return tileMatmul, true
	case OpQRQ:
		return tileQRQ, true
	case OpQRR:
		return tileQRR, true
	case OpSVDU, OpSVDS, OpSVDVT:
		return tileSVD, true
	case OpSolve:
		return tileSolve, true
	case OpInv:
		return tileInv, true
	case OpCholesky:
		return tileCholesky, true
	case OpSort, OpArgsort:
		return tileSort, true
	case OpHistogram, OpHistEdges:
		return tileHistogram, true
	case OpBincount:
		return tileBincount, true
	case OpPercentile, OpMedian:
		return tilePercentile, true
	}
	if elemKinds[op] {
		return tileElementwise, true
	}
	if slices.Contains(reductions, op) {
		return tileReduce, true
	}
	return nil, false
}

type tiler struct {
	env   Env
	ops   [][]*ChunkOp // in blocks of up to opBlock: growing them copies nothing
	nops  int
	tiled []*TiledTensor // by node ID
	node  int            // the node being tiled, recorded in each op
	// shared holds what the nodes of one multi-output function tile once
	// for all of them (a factorization), by family and input node ID.
	shared map[string]any
	// The ops of the rules that make one op a chunk are cut from slabs.
	slab   opSlab
	ints   intSlab
	shapes shapeCache
	// columns holds the fusers of the reductions whose columns are fused
	// as they are tiled (fuse_tile.go), by node ID.
	columns map[int]*columnFuser
}

// input returns the tiled form of n's i-th input.
func (t *tiler) input(n *Node, i int) *TiledTensor { return t.tiled[n.Inputs[i].ID] }

// opBlock is the most ops a block of the tiler's op list holds.
const opBlock = 1 << 14

// emit appends op to the graph, sets its key, and returns the key.
func (t *tiler) emit(op *ChunkOp) uint64 {
	op.Key = t.nops
	op.Node = t.node
	if n := len(t.ops); n == 0 || len(t.ops[n-1]) == cap(t.ops[n-1]) {
		size := 64
		if n > 0 {
			size = nextBlock(cap(t.ops[n-1]), 64, opBlock)
		}
		t.ops = append(t.ops, make([]*ChunkOp, 0, size))
	}
	b := &t.ops[len(t.ops)-1]
	*b = append(*b, op)
	t.nops++
	return uint64(op.Key)
}

// emitOp is emit for an op made by value: its memory is cut from a slab.
func (t *tiler) emitOp(op ChunkOp) uint64 {
	p := t.slab.take()
	*p = op
	return t.emit(p)
}

func checkTiled(n *Node, tt *TiledTensor) error {
	if len(tt.Chunks) != len(n.Shape) {
		return fmt.Errorf("tile %s: %d chunk axes for shape %v", n.Op, len(tt.Chunks), n.Shape)
	}
	want := 1
	for ax, cs := range tt.Chunks {
		sum := 0
		for _, c := range cs {
			sum += c
		}
		if sum != n.Shape[ax] {
			return fmt.Errorf("tile %s: chunks %v do not cover axis %d of %v", n.Op, cs, ax, n.Shape)
		}
		want *= len(cs)
	}
	if len(tt.Keys) != want {
		return fmt.Errorf("tile %s: %d chunk keys for a grid of %d", n.Op, len(tt.Keys), want)
	}
	return nil
}

// GridShape is the number of chunks along each axis of chunks.
func GridShape(chunks [][]int) []int {
	g := make([]int, len(chunks))
	for i, cs := range chunks {
		g[i] = len(cs)
	}
	return g
}

// ChunkOffsets returns, for each axis, the offset of each chunk's first
// element: offsets[ax][i] = sum(chunks[ax][:i]).
func ChunkOffsets(chunks [][]int) [][]int {
	offs := make([][]int, len(chunks))
	for ax, cs := range chunks {
		o := make([]int, len(cs))
		s := 0
		for i, c := range cs {
			o[i] = s
			s += c
		}
		offs[ax] = o
	}
	return offs
}

// unravelInto is unravel writing the grid index into idx.
func unravelInto(idx []int, k int, grid []int) {
	for ax := len(grid) - 1; ax >= 0; ax-- {
		idx[ax] = k % grid[ax]
		k /= grid[ax]
	}
}
