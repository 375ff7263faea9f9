package tensor

import (
	"context"
	"fmt"
	"math"
	"math/bits"
)

// Random generators are counter-based: element i (its flat C-order index in
// the whole tensor) takes its bits from a hash of (seed, i) alone, never from
// a neighbour. So a tensor is the same under any chunking and worker count,
// and a lost chunk recomputes to the same values.
//
// The hash is one round of the SplitMix64 finalizer (Stafford's mix13)
// over the counter times the golden-ratio increment, offset by a key drawn
// from the seed: value i of a seed is output i of a SplitMix64 sequence
// started at a seed-dependent state. SplitMix64 passes BigCrush and
// PractRand on exactly this input (a counter stepped by the golden
// increment), and the finalizer is a bijection that spreads every counter
// bit over the whole word, so it stays a proper hash of the counter.
//
// The choice is one of cost: one round is two 64-bit multiplies a value,
// six 32-bit ones on AVX2 (which has no 64-bit multiply), where two rounds
// took twice that, and Philox4x32-10, the design built for 32-bit
// multipliers, ten 32-bit multiplies and as many shuffles a 64-bit value.
// On a 2-vCPU EPYC a value takes about 0.8 ns with AVX2 and 1.5 ns in Go
// (two rounds: 2.3 and 2.7 ns). Two seeds give windows of one 2^64-long
// sequence at a random distance apart: tensors of up to 2^40 values
// overlap with a chance below 2^-23.

const golden = 0x9E3779B97F4A7C15

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// A randStream is the keyed generator of one seed: k is the SplitMix64
// state of counter 0.
type randStream struct{ k uint64 }

// newRandStream returns stream sub of seed. The key is a hash of both, so
// that nearby seeds (and a seed's sub-streams) start far apart.
func newRandStream(seed, sub uint64) randStream {
	s := mix64(seed ^ mix64(sub+0x632BE59BD9B4E019))
	return randStream{k: mix64(s ^ 0xD1B54A32D192ED03)}
}

// bits returns the 64 random bits of counter ctr.
func (s randStream) bits(ctr uint64) uint64 {
	return mix64(ctr*golden + s.k)
}

// uniform returns a float64 in [0, 1) with 53 random bits. (They convert
// exactly through int64, which spares the unsigned conversion's branch.)
func (s randStream) uniform(ctr uint64) float64 {
	return float64(int64(s.bits(ctr)>>11)) * (1.0 / (1 << 53))
}

// normal returns a standard normal value by Box–Muller from the two counters
// 2i and 2i+1.
func (s randStream) normal(i uint64) float64 {
	u1 := 1 - s.uniform(2*i) // in (0, 1]: the log is finite
	u2 := s.uniform(2*i + 1)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// maxRetries bounds randint's rejection loop; the chance of needing even a
// second draw is below n/2^64.
const maxRetries = 64

// intn returns an unbiased integer in [0, n), n > 0, by Lemire's
// multiply-and-reject method; redraws take fresh streams, so element i still
// depends on (seed, i) only.
func intn(streams []randStream, i, n uint64) uint64 {
	for _, s := range streams {
		hi, lo := bits.Mul64(s.bits(i), n)
		if lo >= n || lo >= -n%n {
			return hi
		}
	}
	// Unreachable in practice; stay unbiased enough and deterministic.
	return streams[0].bits(i) % n
}

// forGlobalRows calls fn for each run of the last axis of a chunk of shape at
// offset in a tensor of shape global: local is the run's first element in
// the chunk, flat its global C-order index; the run has n elements with
// consecutive global indices. It stops early, with ctx's error, once ctx is
// done.
func forGlobalRows(ctx context.Context, shape, offset, global []int, fn func(local, flat, n int)) error {
	nd := len(shape)
	if NumElements(shape) == 0 {
		return nil
	}
	if nd == 0 {
		fn(0, 0, 1)
		return nil
	}
	gidx := make([]int, nd)
	idx := make([]int, nd)
	rowLen := shape[nd-1]
	done := 0
	for local := 0; ; local += rowLen {
		if done += rowLen; done >= elemBlock {
			if err := ctx.Err(); err != nil {
				return err
			}
			done = 0
		}
		for ax := range idx {
			gidx[ax] = idx[ax] + offset[ax]
		}
		fn(local, ravel(gidx, global), rowLen)
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return nil
		}
	}
}

func randomKernel(ctx context.Context, op *ChunkOp, in []*Array) (*Array, error) {
	args, err := genArgs(op, in)
	if err != nil {
		return nil, err
	}
	s := newRandStream(args.Seed, 0)
	var src *Array
	if op.Kind == OpRandint {
		if args.High <= args.Low {
			return nil, fmt.Errorf("randint: low %d >= high %d", args.Low, args.High)
		}
		width := uint64(args.High - args.Low)
		streams := make([]randStream, maxRetries)
		for j := range streams {
			streams[j] = newRandStream(args.Seed, uint64(j))
		}
		src = randOutput(ctx, op, Int64)
		d := src.Int64s()
		err = forGlobalRows(ctx, op.Shape, args.Offset, args.Global, func(local, flat, n int) {
			for j := range n {
				d[local+j] = args.Low + int64(intn(streams, uint64(flat+j), width))
			}
		})
	} else {
		src = randOutput(ctx, op, Float64)
		d := src.Float64s()
		// rand and randn are uniform and normal with (0, 1): 0 + 1*x is x.
		loc, scale := 0.0, 1.0
		switch op.Kind {
		case OpRand, OpRandn:
		case OpUniform:
			loc, scale = args.Start, args.Step-args.Start
		case OpNormal:
			loc, scale = args.Start, args.Step
			if scale < 0 {
				return nil, fmt.Errorf("normal: scale %v < 0", scale)
			}
		default:
			return nil, fmt.Errorf("unknown generator %q", op.Kind)
		}
		normal := op.Kind == OpRandn || op.Kind == OpNormal
		err = forGlobalRows(ctx, op.Shape, args.Offset, args.Global, func(local, flat, n int) {
			row := d[local : local+n]
			if normal {
				for j := range row {
					row[j] = loc + scale*s.normal(uint64(flat+j))
				}
				return
			}
			// uniformFill's values are s.uniform's, bit for bit.
			uniformFill(row, s, uint64(flat))
			if op.Kind != OpRand {
				for j, v := range row {
					row[j] = loc + scale*v
				}
			}
		})
	}
	if err != nil {
		return nil, err
	}
	return castArray(src, op.DType), nil
}

// randOutput is the array a generator draws into: the op's own output (in
// the store, when the worker gives one) when the op's dtype is the one the
// generator draws, else a heap array castArray converts afterwards.
func randOutput(ctx context.Context, op *ChunkOp, drawn DType) *Array {
	if op.DType == drawn {
		return newOutputAll(ctx, op)
	}
	return NewArray(drawn, op.Shape)
}
