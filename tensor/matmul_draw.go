package tensor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// A block product reads each of its blocks once and does 2n flops with each
// element (n the other extent of the product), some n/20 ns at this
// machine's DGEMM rate; drawing a random element costs about a nanosecond
// into memory already mapped. Storing a random block, on the other hand,
// writes it to fresh pages (slower than drawing it on a VM), holds it until
// its last reader runs, and may send it to another worker. So a random
// block that only matmul ops read is drawn again by each of them, as
// expression fusion redraws the random chunks of elementwise groups, and
// never stored: the matmul ops that read only random blocks then depend on
// nothing and all start at once.

// maxMatmulDraws bounds the matmul ops that draw one random block: past
// it, reading a stored block costs less even against the products. A block
// of A is read by one op a chunk column of B and a group of matmulCombine
// chunks along k.
const maxMatmulDraws = 16

// MatmulArgs are the arguments of a "matmul" op that draws some of its
// blocks itself. Blocks holds one entry a block the op multiplies, in the
// order of the pairs (a, b, a, b, ...): a generator op (with no inputs)
// whose chunk the kernel draws, or an op of empty Kind for a block read
// from the op's next input. An op without MatmulArgs reads every block
// from its inputs.
type MatmulArgs struct {
	Blocks []ChunkOp
}

// drawnName returns the name of a matmul op that draws blocks, as plans
// show it: "matmul(8 rand)".
func drawnName(op *ChunkOp) (string, bool) {
	a, ok := op.Args.(MatmulArgs)
	if op.Kind != "matmul" || !ok {
		return "", false
	}
	kinds := map[string]int{}
	var order []string
	for i := range a.Blocks {
		k := a.Blocks[i].Kind
		if k == "" {
			continue
		}
		if kinds[k] == 0 {
			order = append(order, k)
		}
		kinds[k]++
	}
	s := "matmul("
	for i, k := range order {
		if i > 0 {
			s += "+"
		}
		s += strconv.Itoa(kinds[k]) + " " + k
	}
	return s + ")", true
}

// DrawMatmulBlocks returns cg with the random blocks (rand and uniform
// chunks) that only matmul ops read, at most maxMatmulDraws of them and
// none an output of the graph, drawn by each of those ops rather than
// stored: the blocks' ops leave the graph, and keys are renumbered. cg is
// returned as it is when no block qualifies; it is never modified.
func DrawMatmulBlocks(cg *ChunkGraph) *ChunkGraph {
	if !slices.ContainsFunc(cg.Ops, func(op *ChunkOp) bool { return op.Kind == "matmul" }) {
		return cg // most graphs: no product, nothing to count
	}
	n := len(cg.Ops)
	uses := make([]int32, n)
	others := make([]bool, n) // read by an op that is no plain matmul
	for _, op := range cg.Ops {
		plain := op.Kind == "matmul" && op.Args == nil && op.Stored == 0
		for _, in := range op.Inputs {
			uses[in]++
			others[in] = others[in] || !plain
		}
	}
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			others[k] = true
		}
	}
	drawn := make([]bool, n)
	found := false
	for k, op := range cg.Ops {
		if uses[k] > 0 && uses[k] <= maxMatmulDraws && !others[k] && isGenOp(op) && redrawnGens[op.Kind] {
			drawn[k], found = true, true
		}
	}
	if !found {
		return cg
	}
	out := &ChunkGraph{Ops: make([]*ChunkOp, 0, n)}
	newKey := make([]int32, n)
	for k, op := range cg.Ops {
		if drawn[k] {
			newKey[k] = -1
			continue
		}
		c := *op
		c.Key = len(out.Ops)
		newKey[k] = int32(c.Key)
		c.Inputs = make([]int, 0, len(op.Inputs))
		var blocks []ChunkOp
		for i, in := range op.Inputs {
			if drawn[in] {
				if blocks == nil {
					blocks = make([]ChunkOp, len(op.Inputs))
				}
				g := *cg.Ops[in]
				g.Key, g.Inputs = 0, nil
				blocks[i] = g
				continue
			}
			c.Inputs = append(c.Inputs, int(newKey[in]))
		}
		if blocks != nil {
			c.Args = MatmulArgs{Blocks: blocks}
		}
		out.Ops = append(out.Ops, &c)
	}
	out.Outputs = remapOutputs(cg.Outputs, newKey)
	return out
}

// A blockSource gives a matmul op the blocks it multiplies: its inputs, when
// it draws none, else its inputs and the drawn blocks in the order of
// args.Blocks. A drawn block is made only when get is called, into a buffer
// of the scratch pool that get's release gives back.
type blockSource struct {
	ctx  context.Context
	in   []*Array
	args *MatmulArgs
	at   []int // the input of each block, or -1 for a drawn one
}

func newBlockSource(ctx context.Context, op *ChunkOp, in []*Array) (*blockSource, int, error) {
	s := &blockSource{ctx: ctx, in: in}
	a, ok := op.Args.(MatmulArgs)
	if !ok {
		if op.Args != nil {
			return nil, 0, fmt.Errorf("bad args %T", op.Args)
		}
		return s, len(in), nil
	}
	s.args = &a
	s.at = make([]int, len(a.Blocks))
	next := 0
	for i := range a.Blocks {
		b := &a.Blocks[i]
		if b.Kind == "" {
			if next >= len(in) {
				return nil, 0, fmt.Errorf("%d inputs for %d read blocks", len(in), next+1)
			}
			s.at[i] = next
			next++
			continue
		}
		if !isGenOp(b) || !redrawnGens[b.Kind] || len(b.Shape) != 2 {
			return nil, 0, fmt.Errorf("block %d: %s of shape %v is no random 2-D block", i, b.Kind, b.Shape)
		}
		s.at[i] = -1
	}
	if next != len(in) {
		return nil, 0, fmt.Errorf("%d inputs for %d read blocks", len(in), next)
	}
	return s, len(a.Blocks), nil
}

// shape returns the shape of block i without making it.
func (s *blockSource) shape(i int) []int {
	if s.args == nil || s.at[i] >= 0 {
		return s.in[s.inputOf(i)].Shape
	}
	return s.args.Blocks[i].Shape
}

func (s *blockSource) inputOf(i int) int {
	if s.args == nil {
		return i
	}
	return s.at[i]
}

// get returns block i, drawing it into a scratch buffer when it is drawn;
// release gives the buffer back once the block is no longer read.
func (s *blockSource) get(i int) (a *Array, release func(), err error) {
	if s.args == nil || s.at[i] >= 0 {
		return s.in[s.inputOf(i)], func() {}, nil
	}
	g := &s.args.Blocks[i]
	buf := scratch.take(g.DType, g.Shape)
	ctx := WithAlloc(s.ctx, func(dt DType, shape []int, zero bool) *Array {
		if dt != buf.DType || NumElements(shape) != buf.Len() {
			return nil
		}
		if zero {
			clear(buf.Data)
		}
		return buf
	})
	a, err = Run(ctx, g, nil)
	if err != nil {
		scratch.put(buf)
		return nil, nil, err
	}
	return a, func() { scratch.put(buf) }, nil
}

// scratch keeps the buffers matmul ops draw blocks into, so that the next
// op writes to pages already mapped: touching fresh ones costs more than
// drawing the values.
var scratch = &scratchPool{limit: 64 << 20}

// A scratchPool holds freed buffers up to limit bytes.
type scratchPool struct {
	mu    sync.Mutex
	free  [][]byte
	bytes int
	limit int
}

// take returns an array of dtype dt and the given shape whose contents are
// undefined.
func (p *scratchPool) take(dt DType, shape []int) *Array {
	n := NumElements(shape) * dt.Size()
	p.mu.Lock()
	for i, b := range p.free {
		if cap(b) >= n {
			last := len(p.free) - 1
			p.free[i], p.free[last] = p.free[last], nil
			p.free = p.free[:last]
			p.bytes -= cap(b)
			p.mu.Unlock()
			return &Array{DType: dt, Shape: append([]int(nil), shape...), Data: b[:n]}
		}
	}
	p.mu.Unlock()
	return NewArray(dt, shape)
}

// put gives a's buffer back to the pool, or to the collector when the
// pool is full.
func (p *scratchPool) put(a *Array) {
	b := a.Data[:cap(a.Data)]
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+cap(b) > p.limit {
		return
	}
	p.free = append(p.free, b)
	p.bytes += cap(b)
}

// ScratchBytes is the memory op's kernel holds besides its inputs and its
// output: for a matmul op that draws blocks (alone or in a fused chain),
// the largest pair it draws, which it holds while multiplying them.
func ScratchBytes(op *ChunkOp) int64 {
	switch a := op.Args.(type) {
	case FuseArgs:
		var most int64
		for i := range a.Members {
			most = max(most, ScratchBytes(&a.Members[i]))
		}
		return most
	case MatmulArgs:
		var most int64
		for p := 0; p+1 < len(a.Blocks); p += 2 {
			var pair int64
			for _, b := range a.Blocks[p : p+2] {
				if b.Kind != "" {
					pair += int64(b.NBytes())
				}
			}
			most = max(most, pair)
		}
		return most
	}
	return 0
}
