package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// Graph cuts g into chunk operands. env resolves OpInput nodes to the
// session's stored tensors; their chunks become Stored ops.
//
// Each Node.Op has one tile rule (see tileRules); a rule reads the tiled
// inputs of a node and emits the ops that make the node's chunks.
//
// A graph in which a length depends on the data (unique, bincount) cannot be
// tiled at once: Stages tiles it a stage at a time.
func Graph(g *spec.Graph, env spec.Env) (*chunk.Graph, error) {
	s, err := Stages(g, env)
	if err != nil {
		return nil, err
	}
	if !s.Last() {
		return nil, fmt.Errorf("tile: the graph has lengths that depend on the data; it must be tiled in stages")
	}
	return s.Graph, nil
}

// A tileRule emits the ops for one node and returns its chunk grid.
type tileRule func(t *tiler, n *spec.Node) (*tensor.TiledTensor, error)

// ruleFor returns the tile rule of a Node.Op: the whole table is this switch.
func ruleFor(op string) (tileRule, bool) {
	switch op {
	case tensor.OpInput:
		return tileInput, true
	case tensor.OpFromNPY:
		return tileFromNPY, true
	case tensor.OpFromZarr:
		return tileFromZarr, true
	case tensor.OpRechunk:
		return tileRechunk, true
	case tensor.OpGroupBy:
		return tileGroupBy, true
	case tensor.OpScalar, tensor.OpFull, tensor.OpArange, tensor.OpLinspace, tensor.OpEye, tensor.OpRand, tensor.OpRandn, tensor.OpRandint, tensor.OpUniform, tensor.OpNormal:
		return tileCreate, true
	case tensor.OpTranspose:
		return tileTranspose, true
	case tensor.OpSlice:
		return tileSlice, true
	case tensor.OpConcat:
		return tileConcat, true
	case tensor.OpReshape:
		return tileReshape, true
	case tensor.OpCumsum, tensor.OpCumprod:
		return tileScan, true
	case tensor.OpMatmul:
		return tileMatmul, true
	case tensor.OpQRQ:
		return tileQRQ, true
	case tensor.OpQRR:
		return tileQRR, true
	case tensor.OpSVDU, tensor.OpSVDS, tensor.OpSVDVT:
		return tileSVD, true
	case tensor.OpSolve:
		return tileSolve, true
	case tensor.OpInv:
		return tileInv, true
	case tensor.OpCholesky:
		return tileCholesky, true
	case tensor.OpSort, tensor.OpArgsort:
		return tileSort, true
	case tensor.OpHistogram, tensor.OpHistEdges:
		return tileHistogram, true
	case tensor.OpBincount:
		return tileBincount, true
	case tensor.OpPercentile, tensor.OpMedian:
		return tilePercentile, true
	case tensor.OpDiagonal:
		return tileDiagonal, true
	case tensor.OpEighW, tensor.OpEighV:
		return tileEigh, true
	case tensor.OpSearchsorted, tensor.OpIsin:
		return tileLookup, true
	case tensor.OpArray:
		return tileArray, true
	case tensor.OpNonEmpty:
		return tileNonEmpty, true
	}
	if tensor.ElemKinds[op] {
		return tileElementwise, true
	}
	if slices.Contains(tensor.Reductions, op) {
		return tileReduce, true
	}
	return nil, false
}

type tiler struct {
	env spec.Env
	// grids holds the grids of the nodes earlier stages tiled, whose
	// chunks this stage may not have (see stagedRule.dropsInputs).
	grids []*tensor.TiledTensor
	// readers holds the nodes that read each node, by ID, and nodes the
	// graph's nodes (for rules that choose by what else reads their input).
	readers [][]int
	nodes   []*spec.Node
	ops     [][]*chunk.Op // in blocks of up to opBlock: growing them copies nothing
	nops    int
	tiled   []*tensor.TiledTensor // by node ID
	node    int                   // the node being tiled, recorded in each op
	// shared holds what the nodes of one multi-output function tile once
	// for all of them (a factorization), by family and input node ID.
	shared map[string]any
	// owner is whose rights the ops reading and writing files act with
	// (Options.Owner).
	owner chunk.Owner
	// The ops of the rules that make one op a chunk are cut from slabs.
	slab   chunk.OpSlab
	ints   chunk.IntSlab
	shapes chunk.ShapeCache
	// columns holds the fusers of the reductions whose columns are fused
	// as they are tiled (fuse_tile.go), by node ID.
	columns map[int]*columnFuser
	maxOps  int // emit panics with tooManyOps past it; 0 for no bound
}

// input returns the tiled form of n's i-th input.
func (t *tiler) input(n *spec.Node, i int) *tensor.TiledTensor { return t.tiled[n.Inputs[i].ID] }

// opBlock is the most ops a block of the tiler's op list holds.
const opBlock = 1 << 14

// emit appends op to the graph, sets its key, and returns the key.
func (t *tiler) emit(op *chunk.Op) uint64 {
	if t.maxOps > 0 && t.nops >= t.maxOps {
		panic(tooManyOps{})
	}
	op.Key = t.nops
	op.Node = int32(t.node)
	if n := len(t.ops); n == 0 || len(t.ops[n-1]) == cap(t.ops[n-1]) {
		size := 64
		if n > 0 {
			size = chunk.NextBlock(cap(t.ops[n-1]), 64, opBlock)
		}
		t.ops = append(t.ops, make([]*chunk.Op, 0, size))
	}
	b := &t.ops[len(t.ops)-1]
	*b = append(*b, op)
	t.nops++
	return uint64(op.Key)
}

// emitOp is emit for an op made by value: its memory is cut from a slab.
func (t *tiler) emitOp(op chunk.Op) uint64 {
	p := t.slab.Take()
	*p = op
	return t.emit(p)
}

func checkTiled(n *spec.Node, tt *tensor.TiledTensor) error {
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
