package expr

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// The chunks of one tensor computed alike share one program (one Code, see
// ExprArgs), and a graph of tiny chunks runs it many thousand times: then
// checking the program and preparing its steps, registers and segment
// layout would cost more than running it. So a machine, once run, waits in
// a pool by its program, and the next op of that program whose shapes,
// dtypes and inputs' shapes are the same takes it over, re-binding only
// its inputs and its generators' offsets. A program is known by its first
// instruction's address, and its code is never changed once built (a
// worker decodes one and runs it as is; the optimizer makes new code): an
// idle machine holds the code, so no other program can take its address.

// maxIdleMachines bounds the machines waiting in the pool. One keeps its
// registers' blocks while they hold at most maxIdleRegBytes, so that the
// pool holds at most a few MiB: a machine of larger blocks gives them back
// to blockPools, which a collection may empty, and takes them again when
// it runs; for such blocks that costs little beside their work.
const (
	maxIdleMachines = 64
	maxIdleRegBytes = 64 << 10
)

var machinePool struct {
	sync.Mutex
	// last is the machine released last, outside idle: a graph of tiny
	// chunks runs one program op after op, and the machine one op gives
	// back the next takes, with no look-up in idle.
	last  *exprMachine
	idle  map[*chunk.ExprInstr][]*exprMachine // by the program's first instruction
	count int                                 // in idle and last
}

// An inputSig is what a machine's steps were checked against in an input.
type inputSig struct {
	dt    tensor.DType
	shape []int
}

// registerLen is the elements a register of a machine running blocks of
// block over n elements holds: no block is longer than n, and a short
// register is cheap to keep and to fill.
func registerLen(block, n int) int {
	if n >= block {
		return block
	}
	r := 64
	if n > 64 {
		r = 1 << bits.Len(uint(n-1))
	}
	return min(r, block)
}

// acquireMachine returns a machine ready to run args over op's inputs in:
// an idle one of the same program made for the same shapes, re-bound, or a
// new one. Input streamed (-1: none) has a dtype and shape but no data
// yet: a stream hands its elements over a piece at a time (stream.go).
func acquireMachine(op *chunk.Op, args *chunk.ExprArgs, in []*tensor.Array, streamed int) (*exprMachine, error) {
	if len(args.Code) == 0 {
		return newExprMachine(op, args, in, streamed)
	}
	key := &args.Code[0]
	machinePool.Lock()
	var m *exprMachine
	if l := machinePool.last; l != nil && &l.own.Code[0] == key {
		m, machinePool.last = l, nil
		machinePool.count--
	} else if ms := machinePool.idle[key]; len(ms) > 0 {
		m = ms[len(ms)-1]
		ms[len(ms)-1] = nil
		// An emptied list stays, so that the release to come appends
		// to it without allocating.
		machinePool.idle[key] = ms[:len(ms)-1]
		machinePool.count--
	}
	machinePool.Unlock()
	if m != nil {
		ok, err := m.rebind(op, args, in, streamed)
		if err != nil {
			return nil, err
		}
		if ok {
			return m, nil
		}
		m.release() // made for other shapes
	}
	return newExprMachine(op, args, in, streamed)
}

// rebind readies m, idle, for op's inputs in, and reports whether it
// could: m's program was checked for the same shapes and dtypes.
func (m *exprMachine) rebind(op *chunk.Op, args *chunk.ExprArgs, in []*tensor.Array, streamed int) (bool, error) {
	a := &m.own
	if len(args.Code) != len(a.Code) || args.Regs != a.Regs || args.Block != a.Block ||
		op.DType != m.opDT || !slices.Equal(op.Shape, m.opShape) ||
		!slices.Equal(args.Shape, a.Shape) || len(in) != len(m.ins) ||
		len(args.Offsets) != len(a.Offsets) {
		return false, nil
	}
	for i, x := range in {
		if x == nil || x.DType != m.ins[i].dt || !slices.Equal(x.Shape, m.ins[i].shape) {
			return false, nil
		}
	}
	for i, x := range in {
		if err := checkInput(x, i == streamed); err != nil {
			return false, fmt.Errorf("input %d: %w", i, err)
		}
	}
	if !slices.Equal(args.Offsets, a.Offsets) {
		// The generators fill from other global indices.
		nd, g := len(args.Shape), 0
		for i := range m.steps {
			st := &m.steps[i]
			if st.in.Op != chunk.ExprGen {
				continue
			}
			fill, _, base, err := newGenFill(st.in, args.Shape, args.Offsets[g*nd:(g+1)*nd])
			if err != nil {
				return false, err
			}
			st.fill = fill
			m.lay.base[st.seg] = base
			g++
		}
	}
	m.own = *args
	for i := range m.steps {
		st := &m.steps[i]
		switch st.in.Op {
		case chunk.ExprLoad, chunk.ExprBcast, chunk.ExprSplat:
			st.src, st.base = in[st.in.Input], 0
		}
	}
	for _, r := range m.reds {
		if r.cascade != nil {
			*r.cascade = sumCascade{}
		}
	}
	return true, nil
}

// releaseMachine puts m, run, in the pool, dropping what it holds of the
// op it ran; or, the pool being full, frees its registers.
func releaseMachine(m *exprMachine) {
	for i := range m.steps {
		st := &m.steps[i]
		// Only what was set is cleared: with the collector running,
		// every pointer written costs a write barrier.
		if st.src != nil {
			st.src = nil
		}
		clear(st.srcs)
		if st.in.Op == chunk.ExprCast {
			st.dstA, st.srcA = tensor.Array{}, tensor.Array{}
		}
	}
	clear(m.views)
	clear(m.parts)
	for _, r := range m.reds {
		r.acc, r.counts = nil, nil
	}
	if len(m.own.Code) == 0 {
		m.release()
		return
	}
	held := 0
	for _, b := range m.bufs {
		if b != nil {
			held += len(*b)
		}
	}
	if held > maxIdleRegBytes {
		m.release()
	}
	key := &m.own.Code[0]
	var evicted []*exprMachine
	machinePool.Lock()
	if machinePool.idle == nil {
		machinePool.idle = make(map[*chunk.ExprInstr][]*exprMachine)
	}
	if machinePool.last == nil {
		machinePool.last = m
		machinePool.count++
		machinePool.Unlock()
		return
	}
	if machinePool.count >= maxIdleMachines {
		// The program running now is likely to run again, a program of
		// another graph less so: make room by dropping some other
		// program's machines.
		for k, ms := range machinePool.idle {
			if len(ms) == 0 {
				delete(machinePool.idle, k)
				continue
			}
			if k != key {
				evicted = ms
				delete(machinePool.idle, k)
				machinePool.count -= len(ms)
				break
			}
		}
	}
	if machinePool.count < maxIdleMachines {
		machinePool.idle[key] = append(machinePool.idle[key], m)
		machinePool.count++
		m = nil
	}
	machinePool.Unlock()
	for _, e := range evicted {
		e.release()
	}
	if m != nil {
		m.release()
	}
}
