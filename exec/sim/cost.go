package sim

import (
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// The cost model: how long a worker's slot takes to run an op, from its
// kind and sizes. The rates were measured on the development machine
// (2 cores, AVX2 and FMA) with TestCalibrate (go test -run Calibrate
// -calibrate ./exec/sim), which runs the real kernels (kernel.Run) of the
// specs the simulator submits and prints each kind's nanoseconds an
// element; they are fixed here so that a seed gives one run on any
// machine.
var (
	// nsPerElem is the time an output element of each kind takes, by
	// the kind's prefix up to its first dot.
	nsPerElem = map[string]float64{
		"rand":      1.9,
		"ones":      0.3,
		"arange":    0.4,
		"full":      0.3,
		"expr":      0.9,
		"add":       0.7,
		"mul":       0.7,
		"assemble":  0.5,
		"transpose": 1.2,
	}
	// nsPerInputElem is the time a reduction's map takes an input element.
	nsPerInputElem = 0.35
	// nsPerOp is what any op costs besides: taking the slot, the store,
	// the report (measured around kernel.Run on tiny chunks).
	nsPerOp = 6000.0
	// flopsPerNs is the rate of the dense products (54 GFLOP a second on
	// 1000³ products, README).
	flopsPerNs = 54.0
)

// nsPerInstr is the time an instruction of a fused expression takes an
// element: estimated from the unfused kinds' rates (an instruction is
// about an elementwise op's loop, a generator about rand's), not measured
// on its own.
const nsPerInstr = 0.6

// fusedCost is a chain's time: its members' one after the other, the
// first reading the inputs.
func fusedCost(members []chunk.Op, inBytes []int64) int64 {
	var ns int64
	for i := range members {
		var in []int64
		if i == 0 {
			in = inBytes
		}
		ns += opCost(&members[i], in)
	}
	return ns
}

// opCost is the time, in nanoseconds, op takes to run, not counting the
// fetching of its inputs.
func opCost(op *chunk.Op, inBytes []int64) int64 {
	kind := string(op.Kind)
	if i := strings.IndexByte(kind, '.'); i >= 0 {
		kind = kind[:i]
	}
	out := float64(tensor.NumElements(op.Shape))
	ns := nsPerOp
	switch a := op.Args.(type) {
	case *chunk.ExprArgs:
		// A fused expression iterates its value shape (a reduction map's
		// output is one number): each instruction a pass over it.
		return int64(ns + float64(tensor.NumElements(a.Shape))*nsPerInstr*float64(len(a.Code)))
	case chunk.ExprArgs:
		return int64(ns + float64(tensor.NumElements(a.Shape))*nsPerInstr*float64(len(a.Code)))
	case *chunk.FuseArgs:
		return fusedCost(a.Members, inBytes)
	case chunk.FuseArgs:
		return fusedCost(a.Members, inBytes)
	}
	switch {
	case kind == "matmul" || kind == "dot" || kind == "syrk":
		// m×k by k×n: the output's elements times the inner length,
		// which the first input's last dimension gives.
		inner := 1.0
		if len(op.Inputs) > 0 && len(op.Shape) > 0 {
			var in int64
			for _, b := range inBytes {
				in += b
			}
			inner = float64(in) / float64(op.DType.Size()) / max(1, out) / 2
		}
		ns += 2 * out * max(1, inner) / flopsPerNs
	case strings.HasSuffix(string(op.Kind), ".map") || strings.HasSuffix(string(op.Kind), ".combine") || strings.HasSuffix(string(op.Kind), ".agg"):
		var in int64
		for _, b := range inBytes {
			in += b
		}
		ns += float64(in) / 8 * nsPerInputElem
	default:
		r, ok := nsPerElem[kind]
		if !ok {
			r = 1.0
		}
		ns += out * r
	}
	return int64(ns)
}
