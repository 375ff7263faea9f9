package expr

import (
	"context"
	"fmt"
	"sync"

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
	return streamKernel(ctx, op, in, streamed, dt, feed, nil)
}

// A Sink takes the output of an elementwise program a piece at a time,
// in order, each piece with its byte offset in the output; it must not
// keep the piece.
type Sink func(off int, piece []byte) error

// StreamKernelTo is StreamKernel for a program with no reductions whose
// output is never made whole either: its blocks are written into a
// buffer of a piece's size and handed to sink as each piece of the
// input has run (to_zarr's encoder of the anomaly x - m, which
// compresses them while in cache), so that neither the input chunk nor
// the output is whole in memory. The values are ExprKernel's to the bit.
// ok false (nothing made, sink not called) as StreamKernel's, or for a
// program with reductions.
func StreamKernelTo(ctx context.Context, op *chunk.Op, in []*tensor.Array, streamed int, dt tensor.DType, feed Feed, sink Sink) (ok bool, err error) {
	if sink == nil {
		return false, nil
	}
	_, ok, err = streamKernel(ctx, op, in, streamed, dt, feed, sink)
	return ok, err
}

func streamKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array, streamed int, dt tensor.DType, feed Feed, sink Sink) (out *tensor.Array, ok bool, err error) {
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
	s := streamer{m: m, es: dt.Size(), sink: sink}
	if sink != nil {
		if !m.windowed(op) {
			return nil, false, nil
		}
		s.out = &tensor.Array{DType: op.DType, Shape: op.Shape}
		win := getWindow()
		defer putWindow(win)
		s.win = win
		defer func() { m.outBase = 0 }()
	} else {
		s.out = elem.NewOutput(ctx, op)
	}
	if err := m.begin(s.out); err != nil {
		return nil, true, err
	}
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
	if sink != nil {
		return nil, true, nil
	}
	return s.out, true, nil
}

// windowed says whether the machine's output can be made a piece at a
// time (StreamKernelTo): a program with no reductions, whose output is
// the value shape and is written by no instruction that runs once.
func (m *exprMachine) windowed(op *chunk.Op) bool {
	if len(m.reds) != 0 || tensor.NumElements(op.Shape) != m.n {
		return false
	}
	writes := false
	for i := range m.steps {
		if st := &m.steps[i]; st.in.Op == chunk.ExprElem && st.in.Dst < 0 {
			if st.invariant {
				return false
			}
			writes = true
		}
	}
	return writes
}

// The windows of StreamKernelTo's outputs: a piece's size (a blosc
// block, 512 KB for a climate chunk), kept from op to op.
var windows sync.Pool

func getWindow() *[]byte {
	if w, ok := windows.Get().(*[]byte); ok {
		return w
	}
	return new([]byte)
}

func putWindow(w *[]byte) { windows.Put(w) }

// A streamer runs a machine's blocks as the pieces of its streamed input
// arrive.
type streamer struct {
	m      *exprMachine
	out    *tensor.Array // the output; its window's, with a sink
	sink   Sink
	win    *[]byte     // with a sink: the window's buffer
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
	oes := s.out.DType.Size()
	if s.sink != nil {
		// The output's elements lo..hi-1 go to the window, from its start.
		if n := (hi - lo) * oes; cap(*s.win) < n {
			*s.win = make([]byte, n)
		}
		s.out.Data = (*s.win)[:(hi-lo)*oes]
		s.m.outBase = lo
	}
	err := s.m.blocks(ctx, s.out, lo, hi)
	for _, st := range s.loads {
		st.src = nil
	}
	s.src.Data = nil
	if s.sink != nil && err == nil {
		err = s.sink(lo*oes, s.out.Data)
	}
	return err
}
