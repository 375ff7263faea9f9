package chunk

import (
	"marsfs/tensor"
)

// ExprReductions are the reductions whose map op an expr program can end in;
// argmin and argmax, which need global indices, keep their own map kernel.
var ExprReductions = map[string]bool{
	tensor.OpSum: true, tensor.OpNansum: true, tensor.OpProd: true, tensor.OpMin: true, tensor.OpMax: true, tensor.OpNanmin: true,
	tensor.OpNanmax: true, tensor.OpAny: true, tensor.OpAll: true, tensor.OpCountNonzero: true, tensor.OpMean: true,
	tensor.OpNanmean: true, tensor.OpVar: true, tensor.OpStd: true,
}

// ExprBlock is the block length compiled programs use: 4096 elements keep a
// handful of float64 registers (32 KiB each) within the L2 cache, and are
// long enough that the per-block work of the interpreter is negligible.
const ExprBlock = 4096

// ExprArgs are the arguments of an "expr" op: a compiled program. A worker
// validates a program before running it; a malformed one is an error.
//
// A program does not depend on where its chunk lies: the chunk offsets of
// its generators are kept apart, in Offsets, so that the chunks of one
// tensor computed alike share one Code (and one Members) in a graph, and
// only Shape and Offsets are an op's own.
type ExprArgs struct {
	Shape   []int // the value shape the program iterates over
	Block   int   // elements a block: a power of two in [64, 65536]
	Regs    int   // number of registers
	Code    []ExprInstr
	Members []string // the kinds of the fused ops, for plans
	// Offsets holds, for each gen instruction in program order, the offset
	// in its tensor of the chunk it generates: len(Shape) ints a generator.
	// (A gen instruction's Gen.Offset is empty.)
	Offsets []int
}

// The instructions of an expr program (ExprInstr.Op).
const (
	ExprLoad   = "load"   // Dst views input Input's block (same element order: no copy)
	ExprBcast  = "bcast"  // Dst holds input Input broadcast to the value shape
	ExprSplat  = "splat"  // Dst holds input Input's only element, in every slot (once)
	ExprConst  = "const"  // Dst holds the constant of the full generator Gen (once)
	ExprGen    = "gen"    // Dst holds generator Kind's values from their global indices
	ExprCast   = "cast"   // Dst = Src[0] cast to DType
	ExprNaN0   = "nan0"   // Dst = Src[0] with NaNs replaced by zeros
	ExprElem   = "elem"   // Dst = Kind(Src...), Dst -1 being the output chunk's block
	ExprReduce = "reduce" // the partial of reduction Kind over Axes accumulates Src[0] (nanmean: and Src[1])
)

// An ExprInstr is one instruction of an expr program.
type ExprInstr struct {
	Op    string       // ExprLoad, ...
	Kind  string       // elem: the elementwise op; gen: the generator; reduce: the reduction
	Dst   int          // the register written
	Src   []int        // the registers read
	Input int          // load, bcast, splat: index of the op's input
	DType tensor.DType // the dtype Dst holds (reduce: of the accumulator)
	Elem  ElemArgs
	Gen   GenArgs // gen, const: the generator's arguments, but for its Offset
	Shape []int   // const: the full chunk's shape
	Axes  []int   // reduce: the reduced axes of the value shape
}

// GenNative is the dtype a generator computes in before its values are
// cast to the chunk's dtype, as its kernel does.
func GenNative(kind string, dt tensor.DType) tensor.DType {
	switch kind {
	case tensor.OpRand, tensor.OpRandn, tensor.OpUniform, tensor.OpNormal, tensor.OpLinspace:
		return tensor.Float64
	case tensor.OpRandint:
		return tensor.Int64
	case tensor.OpArange:
		switch {
		case dt.IsInteger():
			return tensor.Int64
		case dt == tensor.Float32 || dt == tensor.Float16:
			return tensor.Float32
		}
		return tensor.Float64
	}
	return dt
}

// PartArgs are the arguments of an "expr.part" op: its chunk is the
// elements of its input from Offset on, as many as its shape holds, of its
// dtype. It cuts a sibling reduction's partial out of the packed output of
// the expr op that made them all.
type PartArgs struct {
	Offset int
}
