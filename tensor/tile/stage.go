package tile

import (
	"errors"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
)

// A stagedRule tiles a node whose length the data decides, in two steps.
type stagedRule struct {
	// measure emits the ops that compute the node's data and returns the
	// chunks that finish reads (carry) and the key of the int64 scalar
	// chunk holding the node's length (probe).
	measure func(t *tiler, n *spec.Node) (carry []uint64, probe uint64, err error)
	// finish tiles the node in a later stage, once its length is known:
	// ids are the global IDs of the carry chunks.
	finish func(t *tiler, n *spec.Node, ids []uint64, length int) (*tensor.TiledTensor, error)
	// pieces, when set, makes the probe a 1-D int64 chunk of the lengths
	// of the carry chunks (along the first axis), not their sum, and
	// finishes with those lengths in place of finish.
	pieces func(t *tiler, n *spec.Node, ids []uint64, lens []int) (*tensor.TiledTensor, error)
	// known marks a node whose shape is known and whose probe (a vector,
	// given to pieces) tells the next stage something else: which blocks
	// to read.
	known bool
	// dropsInputs marks a rule whose next stage reads only the carry
	// chunks: its inputs' chunks need not be kept for it (their grids
	// are in tiler.grids).
	dropsInputs bool
	// applies, when set, says whether the rule tiles n, whose inputs are
	// tiled; when it does not, n's one-stage rule does (ruleFor).
	applies func(t *tiler, n *spec.Node) bool
}

// stagedRuleFor returns the rule of an op whose length the data decides.
func stagedRuleFor(op string) (stagedRule, bool) {
	switch op {
	case tensor.OpUnique, tensor.OpUniqueCounts:
		return stagedRule{measure: measureUnique, finish: finishUnique}, true
	case tensor.OpBincount:
		return stagedRule{measure: measureBincount, finish: finishBincount}, true
	case tensor.OpMask:
		return stagedRule{measure: measureMask, pieces: finishMask, dropsInputs: true}, true
	case tensor.OpTake:
		return stagedRule{measure: measureTake, pieces: finishTake, known: true}, true
	case tensor.OpSort, tensor.OpArgsort:
		return stagedRule{measure: measureSampleSort, pieces: finishSampleSort, known: true, dropsInputs: true, applies: sampleSorts}, true
	}
	return stagedRule{}, false
}

// A Stage is one part of the tiling of a graph: the ops that can run before
// the next unknown length is known.
type Stage struct {
	// Graph holds the stage's ops. Graph.Outputs[:Results] are the spec's
	// outputs this stage completes; the rest name the chunks later stages
	// read, which must be kept until the last stage has run.
	Graph   *chunk.Graph
	Results int
	// Probes are the indexes in Graph.Outputs of one-chunk int64 scalars
	// whose values Next needs.
	Probes []int

	next *stager
}

// Last reports whether s is the graph's last stage.
func (s *Stage) Last() bool { return s.next == nil }

// Next tiles the stage after s once s has run. keys holds, for each of
// s.Graph.Outputs[s.Results:], the global IDs of its chunks (in Keys order,
// after whatever renumbering ran the graph), and probes the values of the
// Probes outputs, in order.
func (s *Stage) Next(keys [][]uint64, probes []*tensor.Array) (*Stage, error) {
	if s.next == nil {
		return nil, fmt.Errorf("tile: the last stage has no next")
	}
	if len(keys) != len(s.Graph.Outputs)-s.Results || len(probes) != len(s.Probes) {
		return nil, fmt.Errorf("tile: next stage given %d carried tensors and %d probes, want %d and %d",
			len(keys), len(probes), len(s.Graph.Outputs)-s.Results, len(s.Probes))
	}
	st := s.next
	for i, p := range probes {
		if p == nil || p.DType != tensor.Int64 || len(p.Shape) > 1 || len(p.Shape) == 0 && p.Len() != 1 || slices.ContainsFunc(p.Int64s(), func(v int64) bool { return v < 0 }) {
			return nil, fmt.Errorf("tile: probe %d is not a non-negative int64 scalar or vector", i)
		}
	}
	return st.tile(keys, probes)
}

// Stages tiles the first stage of g (all of g when no length depends on
// the data). env resolves OpInput nodes as for Tile.
func Stages(g *spec.Graph, env spec.Env) (*Stage, error) { return StagesWith(g, env, Options{}) }

// StagesFused is Stages for a graph that FuseExpr optimizes: in
// the first stage, the reductions over elementwise expressions whose
// chunks FuseExpr would fuse column by column, each column into one expr
// op, are tiled into those expr ops at once, without the ops they replace
// (see fuse_tile.go). FuseExpr of the stage's graph is the graph FuseExpr
// makes of TileStages'; run without it, the graph computes the same
// values.
func StagesFused(g *spec.Graph, env spec.Env) (*Stage, error) {
	return StagesWith(g, env, Options{Fused: true})
}

// Options shape a tiling.
type Options struct {
	// Fused tiles as StagesFused does.
	Fused bool
	// MaxOps bounds the ops of each stage, 0 for no bound. A stage that
	// would make more stops as soon as it passes the bound, with an error
	// wrapping ErrTooManyOps: a spec asking for too many chunks costs the
	// process no more memory than the bound, whatever it asked for.
	MaxOps int
	// Owner is the user whose rights the ops reading and writing files
	// act with, put in their arguments: the session's owner.
	Owner chunk.Owner
}

// ErrTooManyOps is wrapped by the error of a tiling that passed its
// Options.MaxOps.
var ErrTooManyOps = errors.New("too many chunk operands")

// ErrDataShape is wrapped by the error of a later stage whose node the
// lengths the data decided make wrong (operands that do not broadcast): a
// shape error only the data can reveal, as NumPy's at run time.
var ErrDataShape = errors.New("shape error of lengths the data decided")

// dataShapeError is such an error: its text is the inference's (NumPy's
// message), and it is ErrDataShape.
type dataShapeError struct{ err error }

func (e dataShapeError) Error() string   { return e.err.Error() }
func (e dataShapeError) Unwrap() []error { return []error{ErrDataShape, e.err} }

// tooManyOps is the panic of an emit past the bound, recovered where the
// stage's tiling began.
type tooManyOps struct{}

// StagesWith is Stages under opt.
func StagesWith(g *spec.Graph, env spec.Env, opt Options) (*Stage, error) {
	st := &stager{g: g, env: env, fuse: opt.Fused, maxOps: opt.MaxOps, owner: opt.Owner, done: make([]bool, len(g.Nodes)), tiled: make([]*tensor.TiledTensor, len(g.Nodes))}
	st.consumers = make([][]int, len(g.Nodes))
	for _, n := range g.Nodes {
		for _, in := range n.Inputs {
			st.consumers[in.ID] = append(st.consumers[in.ID], n.ID)
		}
	}
	return st.tile(nil, nil)
}

// stager carries a graph's tiling from one stage to the next.
type stager struct {
	g         *spec.Graph
	env       spec.Env
	consumers [][]int
	done      []bool                // nodes tiled in an earlier stage
	tiled     []*tensor.TiledTensor // their grids (Keys are of the stage that tiled them)
	stages    int
	fuse      bool   // fuse columns as they are tiled (StagesFused)
	sunk      []bool // the sinks written by a stage so far
	maxOps    int    // Options.MaxOps
	owner     chunk.Owner

	// What the last stage hands on, in the order of its outputs after the
	// results: the nodes whose chunks later stages read, then the carry
	// chunks of the measured nodes.
	carried  []int
	measured []int
}

func (st *stager) tile(keys [][]uint64, probes []*tensor.Array) (s *Stage, err error) {
	g := st.g
	t := &tiler{env: st.env, tiled: make([]*tensor.TiledTensor, len(g.Nodes)), maxOps: st.maxOps, owner: st.owner, grids: st.tiled, readers: st.consumers, nodes: g.Nodes}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(tooManyOps); !ok {
				panic(r)
			}
			s, err = nil, fmt.Errorf("%w: the graph needs more than %d in one stage", ErrTooManyOps, st.maxOps)
		}
	}()
	// The chunks of earlier stages are stored chunks now.
	for i, id := range st.carried {
		prev := st.tiled[id]
		tt := &tensor.TiledTensor{Shape: prev.Shape, DType: prev.DType, Chunks: prev.Chunks}
		grid := tensor.GridShape(prev.Chunks)
		for j, gid := range keys[i] {
			tt.Keys = append(tt.Keys, t.emit(&chunk.Op{Kind: chunk.KindStored, Stored: gid, Shape: tensor.ChunkShape(prev.Chunks, grid, j), DType: prev.DType}))
		}
		t.tiled[id] = tt
	}
	lengths := map[int]int{}
	pieces := map[int][]int{} // of the nodes whose probe is a vector
	carryIDs := map[int][]uint64{}
	for i, id := range st.measured {
		for _, v := range probes[i].Int64s() {
			lengths[id] += int(v)
			if len(probes[i].Shape) == 1 {
				pieces[id] = append(pieces[id], int(v))
			}
		}
		carryIDs[id] = keys[len(st.carried)+i]
	}
	later := st.stages > 0
	st.stages++
	var deferred []*columnFuser // by node: the fuser of the reduction it is tiled with
	if st.fuse && !later {
		t.columns, deferred = planColumns(g, st.consumers)
	}
	var measured []measurement
	progress := false
	for _, n := range g.Nodes {
		if st.done[n.ID] {
			continue
		}
		// A measured node finishes from its carry chunks: its inputs'
		// may not have been carried (stagedRule.dropsInputs).
		_, ready := lengths[n.ID]
		if !ready {
			ready = true
			for _, in := range n.Inputs {
				ready = ready && t.tiled[in.ID] != nil
			}
		}
		if !ready {
			continue
		}
		if deferred != nil && deferred[n.ID] != nil {
			// Its chunks are made in the reduction's columns: its grid
			// has no keys, and only the expression reads it.
			tt := deferred[n.ID].tiled(n)
			t.tiled[n.ID], st.tiled[n.ID], st.done[n.ID] = tt, tt, true
			progress = true
			continue
		}
		t.node = n.ID
		sr, staged := stagedRuleFor(n.Op)
		if l, ok := lengths[n.ID]; ok {
			if !sr.known {
				// The first axis is the data's; the others were known.
				n.Shape = append([]int{l}, n.Shape[1:]...)
			}
			var tt *tensor.TiledTensor
			var err error
			if sr.pieces != nil {
				tt, err = sr.pieces(t, n, carryIDs[n.ID], pieces[n.ID])
			} else {
				tt, err = sr.finish(t, n, carryIDs[n.ID], l)
			}
			if err != nil {
				return nil, fmt.Errorf("tile %s: %w", n.Op, err)
			}
			if err := st.set(t, n, tt); err != nil {
				return nil, err
			}
			progress = true
			continue
		}
		if later {
			// The inputs' shapes are known now: infer again what was
			// inferred over unknown lengths.
			if err := spec.Reinfer(n); err != nil {
				return nil, fmt.Errorf("%s: %w", n.Op, dataShapeError{err})
			}
		}
		if staged && (sr.applies == nil || sr.applies(t, n)) {
			carry, probe, err := sr.measure(t, n)
			if err != nil {
				return nil, fmt.Errorf("tile %s: %w", n.Op, err)
			}
			measured = append(measured, measurement{n.ID, carry, probe})
			progress = true
			continue
		}
		if tensor.HasUnknown(n.Shape) {
			return nil, fmt.Errorf("tile %s: shape %s is not known", n.Op, tensor.FormatShape(n.Shape))
		}
		rule, ok := ruleFor(n.Op)
		if !ok {
			return nil, fmt.Errorf("tile: no rule for op %q", n.Op)
		}
		tt, err := rule(t, n)
		if err != nil {
			return nil, fmt.Errorf("tile %s: %w", n.Op, err)
		}
		if err := st.set(t, n, tt); err != nil {
			return nil, err
		}
		progress = true
	}
	// The files written once their tensor is: each a result, the commit
	// op's chunk, which the runtime does not keep (chunk.IsSink).
	if st.sunk == nil {
		st.sunk = make([]bool, len(g.Sinks))
	}
	var sinks []tensor.TiledTensor
	for i, sink := range g.Sinks {
		tt := t.tiled[sink.Node.ID]
		if st.sunk[i] || tt == nil || !st.done[sink.Node.ID] {
			continue
		}
		key, err := t.tileSink(sink, tt)
		if err != nil {
			return nil, err
		}
		st.sunk[i] = true
		sinks = append(sinks, tensor.TiledTensor{Name: chunk.SinkName(sink.Path), Shape: []int{}, DType: tensor.Bool, Chunks: [][]int{}, Keys: []uint64{key}})
	}
	cg := &chunk.Graph{}
	if t.nops > 0 {
		cg.Ops = make([]*chunk.Op, 0, t.nops)
		for _, b := range t.ops {
			cg.Ops = append(cg.Ops, b...)
		}
	}
	s = &Stage{Graph: cg}
	for _, o := range g.Outputs {
		if tt := t.tiled[o.Node.ID]; tt != nil && st.done[o.Node.ID] && !wasCarried(st.carried, o.Node.ID) {
			out := *tt
			out.Name = o.Name
			cg.Outputs = append(cg.Outputs, out)
		}
	}
	cg.Outputs = append(cg.Outputs, sinks...)
	s.Results = len(cg.Outputs)
	remaining := false
	for _, n := range g.Nodes {
		remaining = remaining || !st.done[n.ID]
	}
	if !remaining {
		prune(cg)
		return s, nil
	}
	if !progress {
		return nil, fmt.Errorf("tile: no node can be tiled in stage %d", st.stages)
	}
	// A node is carried while a node not tiled yet reads it, but for a
	// node measured now whose rule reads only its own carry chunks.
	ownCarry := map[int]bool{}
	for _, m := range measured {
		if sr, _ := stagedRuleFor(g.Nodes[m.node].Op); sr.dropsInputs {
			ownCarry[m.node] = true
		}
	}
	var carried []int
	for _, n := range g.Nodes {
		if !st.done[n.ID] {
			continue
		}
		for _, c := range st.consumers[n.ID] {
			if !st.done[c] && !ownCarry[c] {
				carried = append(carried, n.ID)
				break
			}
		}
	}
	for _, id := range carried {
		cg.Outputs = append(cg.Outputs, *t.tiled[id])
	}
	// A measured node's carry chunks are no tensor (their lengths are not
	// known yet): an output lists them as a 1-D grid of chunks, which keeps
	// them apart from fusion and renumbers their keys with the ops'.
	st.measured = st.measured[:0]
	for _, m := range measured {
		cg.Outputs = append(cg.Outputs, tensor.TiledTensor{Shape: []int{len(m.carry)}, DType: g.Nodes[m.node].DType, Chunks: [][]int{slices.Repeat([]int{1}, len(m.carry))}, Keys: m.carry})
		st.measured = append(st.measured, m.node)
	}
	for _, m := range measured {
		s.Probes = append(s.Probes, len(cg.Outputs))
		probe := tensor.TiledTensor{Shape: []int{}, DType: tensor.Int64, Chunks: [][]int{}, Keys: []uint64{m.probe}}
		if sh := t.opAt(m.probe).Shape; len(sh) == 1 {
			probe.Shape, probe.Chunks = []int{sh[0]}, [][]int{{sh[0]}}
		}
		cg.Outputs = append(cg.Outputs, probe)
	}
	st.carried = carried
	s.next = st
	prune(cg)
	return s, nil
}

// A measurement is what the first step of a node's staged rule emitted.
type measurement struct {
	node  int
	carry []uint64
	probe uint64
}

// set records n's grid, tiled in the current stage.
func (st *stager) set(t *tiler, n *spec.Node, tt *tensor.TiledTensor) error {
	if err := checkTiled(n, tt); err != nil {
		return err
	}
	t.tiled[n.ID] = tt
	st.tiled[n.ID] = tt
	st.done[n.ID] = true
	return nil
}

// wasCarried reports whether node id came into this stage from an earlier
// one (so an earlier stage returned it).
func wasCarried(carried []int, id int) bool { return slices.Contains(carried, id) }

// prune drops the ops of cg that no output needs, renumbering the others
// in order: a rule may read a tensor's chunks in another way than the
// ops its tiling emitted (a product reads x's chunks for x.T), and what
// nothing reads must not run.
func prune(cg *chunk.Graph) {
	needed := make([]bool, len(cg.Ops))
	var stack []int
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			if !needed[k] {
				needed[k] = true
				stack = append(stack, int(k))
			}
		}
	}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, in := range cg.Ops[k].Inputs {
			if !needed[in] {
				needed[in] = true
				stack = append(stack, in)
			}
		}
	}
	if !slices.Contains(needed, false) {
		return
	}
	newKey := make([]int, len(cg.Ops))
	ops := cg.Ops[:0]
	for k, op := range cg.Ops {
		if !needed[k] {
			continue
		}
		newKey[k] = len(ops)
		op.Key = len(ops)
		// Rules share input slices between ops (a merge's two halves):
		// each op gets its own.
		ins := make([]int, len(op.Inputs))
		for i, in := range op.Inputs {
			ins[i] = newKey[in]
		}
		op.Inputs = ins
		ops = append(ops, op)
	}
	clear(cg.Ops[len(ops):])
	cg.Ops = ops
	for i := range cg.Outputs {
		keys := make([]uint64, len(cg.Outputs[i].Keys))
		for j, k := range cg.Outputs[i].Keys {
			keys[j] = uint64(newKey[k])
		}
		cg.Outputs[i].Keys = keys
	}
}
