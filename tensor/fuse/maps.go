package fuse

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// Maps gives every chunk that map ops of reductions read, two or more
// (x.mean(axis=0) and x.var(axis=0) over a chunk of x), one "maps"
// op (chunk.MapsArgs) in their place: it runs them all over the chunk and
// packs their partials into one 1-D chunk, and each reader of a partial
// reads its run of that chunk (a chunk.Range) in place of the map's
// chunk. The chunk then has one reader, so that Chains can join its
// maker and the maps op into one chain, and the chunk is made into a
// scratch buffer and dropped, never stored: a chunk read from a file
// (from_zarr, from_npy) costs a file read and a decode, not a decode, a
// store, and a read by each map. The expression fuser does the same for a
// chunk it computes (sibling roots); Maps is for the chunks it does not,
// and runs after it.
//
// A chunk that other ops read too (the climate analysis' x, read by its
// time mean's and std's maps, by the global mean's expression and by the
// seasonal cycle) keeps them, and its maps become one reader among
// them: the chunk is stored, as it was, but read once for all its maps,
// which share their sums (the mean's is the std's first pass).
//
// A group is taken only when two or more readers of the chunk are map
// ops that read it whole, are no output, make partials of one dtype,
// and whose own readers read their inputs whole. The maps op takes the
// key of the group's first member; keys are renumbered; cg is not
// modified, and the ops that keep their key and inputs are shared.
func Maps(cg *chunk.Graph) *chunk.Graph {
	n := len(cg.Ops)
	uses := make([]int32, n)
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
	// plain[k]: op k is a map op a maps op may run, no output, whose
	// readers read it whole.
	plain := make([]bool, n)
	for _, op := range cg.Ops {
		if isMapsMember(op) && !isOutput[op.Key] {
			plain[op.Key] = true
		}
	}
	for _, op := range cg.Ops {
		if op.Ranges != nil {
			for _, in := range op.Inputs {
				plain[in] = false
			}
		}
	}
	// The readers of each chunk read only by two or more plain maps (a
	// map op's chunk is left to its own readers).
	var groups map[int][]int // by the chunk read
	bad := make(map[int]bool)
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			if uses[in] < 2 || bad[in] {
				continue
			}
			if !plain[op.Key] {
				continue // another reader: the chunk keeps it
			}
			if isMapsMember(cg.Ops[in]) || (groups[in] != nil && cg.Ops[groups[in][0]].DType != op.DType) {
				bad[in] = true
				delete(groups, in)
				continue
			}
			if groups == nil {
				groups = map[int][]int{}
			}
			groups[in] = append(groups[in], op.Key)
		}
	}
	for x, g := range groups {
		if len(g) < 2 {
			delete(groups, x)
		}
	}
	if len(groups) == 0 {
		return cg
	}
	// member[k] is the group of map op k, by its chunk; off[k] its
	// partial's offset in the packed chunk.
	member := make(map[int]int)
	off := make(map[int]int)
	for x, g := range groups {
		o := 0
		for _, k := range g {
			member[k] = x
			off[k] = o
			o += tensor.NumElements(cg.Ops[k].Shape)
		}
	}
	out := &chunk.Graph{Ops: make([]*chunk.Op, 0, n)}
	newKey := make([]int32, n)
	var slab chunk.OpSlab
	var ints chunk.IntSlab
	for _, op := range cg.Ops {
		if x, ok := member[op.Key]; ok {
			g := groups[x]
			if g[0] != op.Key {
				newKey[op.Key] = newKey[g[0]]
				continue
			}
			members := make([]chunk.Op, len(g))
			total := 0
			for i, k := range g {
				members[i] = *cg.Ops[k]
				members[i].Key = 0
				members[i].Inputs = []int{0}
				total += tensor.NumElements(cg.Ops[k].Shape)
			}
			c := slab.Take()
			*c = chunk.Op{Key: len(out.Ops), Kind: chunk.KindMaps, Inputs: []int{int(newKey[x])},
				Shape: []int{total}, DType: op.DType, Node: op.Node, Args: chunk.MapsArgs{Members: members}}
			newKey[op.Key] = int32(c.Key)
			out.Ops = append(out.Ops, c)
			continue
		}
		ranged := false
		for _, in := range op.Inputs {
			if _, ok := member[in]; ok {
				ranged = true
			}
		}
		var c *chunk.Op
		switch {
		case !ranged && keepsKeys(op, len(out.Ops), newKey):
			c = op
		default:
			c = slab.Take()
			*c = *op
			c.Key = len(out.Ops)
			c.Inputs = ints.Take(len(op.Inputs))
			for i, in := range op.Inputs {
				c.Inputs[i] = int(newKey[in])
			}
			if ranged {
				rs := make([]chunk.Range, len(op.Inputs))
				for i, in := range op.Inputs {
					if _, ok := member[in]; ok {
						m := cg.Ops[in]
						rs[i] = chunk.Range{Off: off[in], Shape: slices.Clone(m.Shape), DType: m.DType}
					}
				}
				c.Ranges = &rs
			}
		}
		newKey[op.Key] = int32(c.Key)
		out.Ops = append(out.Ops, c)
	}
	out.Outputs = remapOutputs(cg.Outputs, newKey)
	return out
}

// isMapsMember reports whether op is a reduction's map op that a maps op
// may run: it reads one chunk whole, and computes in the dtypes the
// kernels do (an op of a narrow dtype runs widened, alone: kernel.Run).
func isMapsMember(op *chunk.Op) bool {
	args, ok := op.Args.(chunk.ReduceArgs)
	return ok && op.Stored == 0 && len(op.Inputs) == 1 && op.Ranges == nil && op.Kind == chunk.StepKind(args.Op, chunk.StepMap) &&
		!narrow(args.In) && !narrow(op.DType)
}
