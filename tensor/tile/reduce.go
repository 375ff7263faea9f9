package tile

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// Reductions tile as trees. For every output chunk, a map op ("sum.map")
// reduces each input chunk that feeds it to a partial over the reduced axes
// (kept as size-1 axes); combine ops ("sum.combine") merge up to
// reduceCombine partials at a time, level by level, and a final op
// ("sum.final") turns the last partial into the result chunk, dropping the
// reduced axes unless keepdims.
//
// A partial is one value per output element for most reductions (a mean's
// is its float64 sums: the final divides by the count the input's shape
// gives, which its args carry); nanmean keeps (sum, count), var and std
// keep (count, mean, M2) and argmin/argmax keep (value, global index),
// stored along a trailing extra axis: float64 for float inputs, int64 for
// integer and bool ones, where an index is exact.
//
// The output chunking keeps the input's chunks along the axes that are not
// reduced; a reduced axis becomes one chunk of size 1 (keepdims) or vanishes.

// ReduceCombine is the fan-in of a reduction tree. Four keeps the tree
// shallow (log4 of the number of chunks) while each combine op holds only a
// few partials in memory and can start as soon as four of them exist.
const ReduceCombine = 4

// MeanMapGroup is the most blocks along the reduced axes one mean's map
// op reads when the blocks are a reshape's whose reduced extent is 1 (the
// years of x.reshape(3, T/3, lat, lon).mean(axis=0), each a block of its
// own): a float mean's partial keeps its sums in float64, 8 bytes a
// value, twice such a float32 block, and a partial each was stored,
// moved and combined. Grouped, up to eight (the rows the kernel adds at
// once), one map op makes one partial of them all, where the final that
// follows it runs. Blocks made by other ops are left alone: expression
// fusion ends elementwise ops in a map of one block, and Maps shares one
// block among the maps that read it.
const MeanMapGroup = 8

// meanMapGroup returns how many blocks along the reduced axes a map op of
// n's reduction reads: MeanMapGroup for a float mean of a reshape's
// blocks one value deep along the reduced axes, else 1.
func meanMapGroup(t *tiler, n *spec.Node, in *tensor.TiledTensor, reduced []bool) int {
	if n.Op != tensor.OpMean || (in.DType != tensor.Float32 && in.DType != tensor.Float64) || len(in.Keys) == 0 {
		return 1
	}
	for ax, r := range reduced {
		if r && slices.Max(in.Chunks[ax]) != 1 {
			return 1
		}
	}
	if in.Keys[0] >= uint64(t.nops) || t.opAt(in.Keys[0]).Kind != chunk.KindReshape {
		return 1
	}
	return MeanMapGroup
}

// gatherBlocks returns the inputs and args of a mean's map of the
// reshape blocks made by the ops blocks: the reshapes' inputs, each once,
// and their runs over them (ReduceArgs.Gather).
func gatherBlocks(t *tiler, blocks []int, args chunk.ReduceArgs) ([]int, chunk.ReduceArgs) {
	var ins []int
	slot := map[int]int{}
	args.Gather = make([]chunk.ReshapeArgs, len(blocks))
	for b, key := range blocks {
		op := t.opAt(uint64(key))
		ra := op.Args.(chunk.ReshapeArgs)
		runs := make([]chunk.ReshapeRun, len(ra.Runs))
		for i, r := range ra.Runs {
			src := op.Inputs[r.In]
			j, ok := slot[src]
			if !ok {
				j = len(ins)
				slot[src] = j
				ins = append(ins, src)
			}
			r.In = j
			runs[i] = r
		}
		args.Gather[b] = chunk.ReshapeArgs{Runs: runs}
	}
	return ins, args
}

func tileReduce(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	in := t.input(n, 0)
	nd := len(in.Shape)
	reduced := make([]bool, nd)
	axes := n.Attrs.Axes
	if axes == nil {
		for ax := range reduced {
			reduced[ax] = true
			axes = append(axes, ax)
		}
	}
	for _, ax := range n.Attrs.Axes {
		if ax < 0 || ax >= nd || reduced[ax] {
			return nil, fmt.Errorf("bad axes %v for shape %v", n.Attrs.Axes, in.Shape)
		}
		reduced[ax] = true
	}
	isArg := n.Op == tensor.OpArgmin || n.Op == tensor.OpArgmax
	if isArg && len(n.Attrs.Axes) > 1 {
		return nil, fmt.Errorf("%s takes one axis or none, got %v", n.Op, n.Attrs.Axes)
	}
	pdt, fields := chunk.PartialSpec(n.Op, in.DType, n.DType)
	base := chunk.ReduceArgs{Op: n.Op, In: in.DType, Axes: axes, Flat: isArg && n.Attrs.Axes == nil,
		Keepdims: n.Attrs.Keepdims, Ddof: n.Attrs.Ddof}

	keepChunks := make([][]int, nd)
	redGrid := make([]int, nd)
	var outChunks [][]int
	for ax := range reduced {
		if reduced[ax] {
			keepChunks[ax] = []int{1}
			redGrid[ax] = len(in.Chunks[ax])
			if n.Attrs.Keepdims {
				outChunks = append(outChunks, []int{1})
			}
			continue
		}
		keepChunks[ax] = in.Chunks[ax]
		redGrid[ax] = 1
		outChunks = append(outChunks, in.Chunks[ax])
	}
	if outChunks == nil {
		outChunks = [][]int{}
	}
	inGrid, keepGrid, outGrid := tensor.GridShape(in.Chunks), tensor.GridShape(keepChunks), tensor.GridShape(outChunks)
	offs := tensor.ChunkOffsets(in.Chunks)
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: outChunks}
	mapKind, combineKind, finalKind := chunk.StepKind(n.Op, chunk.StepMap), chunk.StepKind(n.Op, chunk.StepCombine), chunk.StepKind(n.Op, chunk.StepFinal)
	// The args are boxed once, the map's too but for argmin and argmax,
	// whose maps need their chunk's offset.
	var baseArgs any = base
	mapArgs := base
	mapArgs.Global = in.Shape
	var finalArgs any = base
	if n.Op == tensor.OpMean {
		finalArgs = mapArgs // its count, from the input's shape (chunk.MeanCount)
	}
	var sharedMapArgs any = mapArgs
	idx, ridx, full := make([]int, nd), make([]int, nd), make([]int, nd)
	nkeep, nred := tensor.NumElements(keepGrid), tensor.NumElements(redGrid)
	out.Keys = make([]uint64, 0, nkeep)
	var parts, next, gins []int
	cf := t.columns[n.ID] // the fuser of the columns of n's input, if any
	group, gather := 1, false
	if cf == nil && nred > 1 {
		group = meanMapGroup(t, n, in, reduced)
		// The reshape's blocks, read by nothing else, are not made:
		// each map reads their runs where they lie.
		gather = group > 1 && len(t.readers[n.Inputs[0].ID]) == 1
	}
	for k := 0; k < nkeep; k++ {
		tensor.UnravelInto(idx, k, keepGrid)
		pshape := tensor.ChunkShape(keepChunks, keepGrid, k)
		if fields > 1 {
			pshape = append(pshape, fields)
		}
		parts = parts[:0]
		for r := 0; r < nred; r++ {
			tensor.UnravelInto(ridx, r, redGrid)
			for ax := range full {
				full[ax] = idx[ax]
				if reduced[ax] {
					full[ax] = ridx[ax]
				}
			}
			args := sharedMapArgs
			if isArg {
				a := mapArgs
				a.Offset = t.ints.Take(nd)
				for ax := range full {
					a.Offset[ax] = offs[ax][full[ax]]
				}
				args = a
			}
			if cf != nil {
				key, err := cf.emit(t, tensor.Ravel(full, inGrid), chunk.Op{Kind: mapKind, Shape: pshape, DType: pdt, Args: args})
				if err != nil {
					return nil, err
				}
				parts = append(parts, int(key))
				continue
			}
			if group > 1 {
				// Blocks r..r+group-1 feed one map op (see MeanMapGroup).
				if r%group == 0 {
					parts = append(parts, -1)
					gins = gins[:0]
				}
				gins = append(gins, int(in.Keys[tensor.Ravel(full, inGrid)]))
				if r%group == group-1 || r == nred-1 {
					ins, gargs := t.ints.Clone(gins), args
					if gather {
						ins, gargs = gatherBlocks(t, gins, mapArgs)
					}
					parts[len(parts)-1] = int(t.emitOp(chunk.Op{Kind: mapKind, Inputs: ins, Shape: pshape, DType: pdt, Args: gargs}))
				}
				continue
			}
			ins := t.ints.Take(1)
			ins[0] = int(in.Keys[tensor.Ravel(full, inGrid)])
			parts = append(parts, int(t.emitOp(chunk.Op{Kind: mapKind, Inputs: ins, Shape: pshape, DType: pdt, Args: args})))
		}
		for len(parts) > 1 {
			next = next[:0]
			for lo := 0; lo < len(parts); lo += ReduceCombine {
				group := parts[lo:min(lo+ReduceCombine, len(parts))]
				if len(group) == 1 {
					next = append(next, group[0])
					continue
				}
				next = append(next, int(t.emitOp(chunk.Op{Kind: combineKind, Inputs: t.ints.Clone(group),
					Shape: pshape, DType: pdt, Args: baseArgs})))
			}
			parts, next = next, parts
		}
		out.Keys = append(out.Keys, t.emitOp(chunk.Op{Kind: finalKind, Inputs: t.ints.Clone(parts),
			Shape: tensor.ChunkShape(outChunks, outGrid, k), DType: n.DType, Args: finalArgs}))
	}
	return out, nil
}
