package expr

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// A Feed hands the elements of a streamed input to visit a piece at a
// time, in order, each piece with its byte offset in the input (C order,
// little-endian; every offset and length a multiple of the element
// size): a store chunk decoded a block at a time into a buffer that stays
// in cache (zarr.Array.DecodeBlocks). visit must not keep a piece. ok
// false means the input cannot be handed over so, and nothing was
// visited.
type Feed func(visit func(off int, piece []byte) error) (ok bool, err error)

// StreamKernel runs the expr op op as ExprKernel does, but for its input
// streamed, which is not given (in[streamed] is nil): feed hands it over a
// piece at a time, of dtype dt and the value shape. The program runs its
// blocks as each piece arrives, a block that two pieces share from a copy
// of its elements, so that the input is never whole in memory: a
// climate chunk's 6 MB are decoded 512 KB at a time and read by the
// program while in cache. The blocks are ExprKernel's, so are the values
// and the order the reductions take them in: the results are
// ExprKernel's to the bit. ok false (nothing made) means the program
// reads the input other than block by block (broadcast, a single value)
// or feed could not stream it: the caller runs the op whole.
func StreamKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array, streamed int, dt tensor.DType, feed Feed) (out *tensor.Array, ok bool, err error) {
	args, ok := op.Args.(chunk.ExprArgs)
	if !ok || streamed < 0 || streamed >= len(in) {
		return nil, false, nil
	}
	for i := range args.Code {
		if ins := &args.Code[i]; ins.Input == streamed && (ins.Op == chunk.ExprBcast || ins.Op == chunk.ExprSplat) {
			return nil, false, nil
		}
	}
	ins := make([]*tensor.Array, len(in))
	copy(ins, in)
	ins[streamed] = &tensor.Array{DType: dt, Shape: args.Shape}
	m, err := acquireMachine(op, &args, ins, streamed)
	if err != nil {
		return nil, false, err
	}
	defer releaseMachine(m)
	out = elem.NewOutput(ctx, op)
	if err := m.begin(out); err != nil {
		return nil, true, err
	}
	s := streamer{m: m, out: out, es: dt.Size()}
	for i := range m.steps {
		if st := &m.steps[i]; st.in.Op == chunk.ExprLoad && st.in.Input == streamed {
			s.loads = append(s.loads, st)
		}
	}
	stage := getBlock(m.blk) // 8 bytes an element: room for any dtype
	defer putBlock(m.blk, stage)
	s.stage = *stage
	ok, err = feed(func(off int, piece []byte) error { return s.piece(ctx, off, piece) })
	if !ok {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	if s.next != m.n || s.staged != 0 {
		return nil, true, fmt.Errorf("stream ended at element %d of %d", s.next+s.staged, m.n)
	}
	m.end()
	return out, true, nil
}

// A streamer runs a machine's blocks as the pieces of its streamed input
// arrive.
type streamer struct {
	m      *exprMachine
	out    *tensor.Array
	es     int         // the streamed input's element size
	loads  []*exprStep // the instructions that load it
	stage  []byte      // the elements of a block two pieces share, as they come
	staged int         // elements in stage, of the block from next
	next   int         // the first element whose block has not run
	src    tensor.Array
}

// piece runs every block whose elements it completes.
func (s *streamer) piece(ctx context.Context, off int, p []byte) error {
	m, es, B := s.m, s.es, s.m.args.Block
	if off%es != 0 || len(p)%es != 0 || off/es != s.next+s.staged || off/es+len(p)/es > m.n {
		return fmt.Errorf("a streamed piece of %d bytes at %d, want element %d on", len(p), off, s.next+s.staged)
	}
	e1 := off/es + len(p)/es
	if s.staged > 0 {
		hi := min(s.next+B, m.n)
		take := min(hi-s.next-s.staged, len(p)/es)
		copy(s.stage[s.staged*es:], p[:take*es])
		s.staged += take
		p = p[take*es:]
		if s.next+s.staged < hi {
			return nil
		}
		if err := s.run(ctx, s.stage, s.next, hi); err != nil {
			return err
		}
		s.next, s.staged = hi, 0
	}
	// The blocks wholly in the piece run from it; the last block of the
	// input may be short.
	end := s.next + (e1-s.next)/B*B
	if e1 == m.n {
		end = e1
	}
	if end > s.next {
		if err := s.run(ctx, p, s.next, end); err != nil {
			return err
		}
		p = p[(end-s.next)*es:]
		s.next = end
	}
	s.staged = copy(s.stage, p) / es
	return nil
}

// run runs the blocks of elements lo..hi-1 with the streamed input's
// elements from lo on in data.
func (s *streamer) run(ctx context.Context, data []byte, lo, hi int) error {
	s.src.Data = data
	for _, st := range s.loads {
		st.src, st.base = &s.src, lo
	}
	err := s.m.blocks(ctx, s.out, lo, hi)
	for _, st := range s.loads {
		st.src = nil
	}
	s.src.Data = nil
	return err
}
