package kernel

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// histMinMaxKernel finds (count, min, max) of a chunk or combines such
// triples. NaNs propagate to both min and max, as NumPy's min and max do.
func histMinMaxKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.HistArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	cnt, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	add := func(v float64) {
		if v != v || lo != lo {
			lo, hi = math.NaN(), math.NaN()
			return
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	for _, a := range in {
		if args.Combine {
			d := a.Float64s()
			if d[0] > 0 {
				cnt += d[0]
				add(d[1])
				add(d[2])
			}
			continue
		}
		for i := range a.Len() {
			add(a.Float64At(i))
		}
		cnt += float64(a.Len())
	}
	out := tensor.NewArray(tensor.Float64, op.Shape)
	copy(out.Float64s(), []float64{cnt, lo, hi})
	return out, nil
}

// histRangeKernel turns the data's (count, min, max) into the bins' outer
// edges as NumPy does: [0, 1] for no data, widened by 0.5 each way when
// min == max.
func histRangeKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	d := in[0].Float64s()
	first, last := d[1], d[2]
	if d[0] == 0 {
		first, last = 0, 1
	} else if math.IsNaN(first) || math.IsInf(first, 0) || math.IsInf(last, 0) {
		return nil, fmt.Errorf("autodetected range of [%v, %v] is not finite", tensor.FormatPyFloat(first), tensor.FormatPyFloat(last))
	}
	if first == last {
		first, last = first-0.5, last+0.5
	}
	out := tensor.NewArray(tensor.Float64, op.Shape)
	copy(out.Float64s(), []float64{first, last})
	return out, nil
}

// histBounds returns the outer edges, from the arguments or the last input.
func histBounds(args chunk.HistArgs, in []*tensor.Array) (float64, float64) {
	if args.Range != nil {
		first, last := args.Range[0], args.Range[1]
		if first == last {
			first, last = first-0.5, last+0.5
		}
		return first, last
	}
	d := in[len(in)-1].Float64s()
	return d[0], d[1]
}

// histEdges computes the Bins+1 edges as numpy.linspace does, rounded to
// the edges' dtype.
func histEdges(args chunk.HistArgs, first, last float64) []float64 {
	e := make([]float64, args.Bins+1)
	step := (last - first) / float64(args.Bins)
	for i := range e {
		if step == 0 {
			e[i] = float64(i)/float64(args.Bins)*(last-first) + first
		} else {
			e[i] = float64(i)*step + first
		}
	}
	e[args.Bins] = last
	if args.Edges == tensor.Float32 {
		for i, v := range e {
			e[i] = float64(float32(v))
		}
	}
	return e
}

func histEdgesKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.HistArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	first, last := histBounds(args, in)
	return fromFloat64(histEdges(args, first, last), op.DType, op.Shape), nil
}

// histCountKernel counts a chunk into the bins with NumPy's rule for equal
// bins: the index from the value's offset, corrected by comparison with the
// edges; values outside [first, last] (and NaNs) are not counted, and the
// last bin includes its right edge.
func histCountKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.HistArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	first, last := histBounds(args, in)
	edges := histEdges(args, first, last)
	bins := args.Bins
	norm := float64(bins) / (last - first)
	out := tensor.NewArray(tensor.Int64, op.Shape)
	counts := out.Int64s()
	a := in[0]
	for i := range a.Len() {
		v := a.Float64At(i)
		if args.Edges == tensor.Float32 {
			v = float64(float32(v))
		}
		if !(v >= first && v <= last) {
			continue
		}
		k := int((v - first) * norm)
		if k == bins {
			k--
		}
		if v < edges[k] {
			k--
		}
		if k != bins-1 && v >= edges[k+1] {
			k++
		}
		counts[k]++
	}
	return out, nil
}

func bincountKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a := in[0]
	if len(in) == 2 {
		// Weighted: each value's sum of its weights, float64.
		w := in[1]
		if op.DType != tensor.Float64 || len(op.Shape) != 1 || w.Len() != a.Len() {
			return nil, fmt.Errorf("bincount of %d values with %d weights into %v%v", a.Len(), w.Len(), op.DType, op.Shape)
		}
		out := tensor.NewArray(tensor.Float64, op.Shape)
		sums := out.Float64s()
		for i := range a.Len() {
			v, err := binAt(a, i)
			if err != nil {
				return nil, err
			}
			if v >= int64(len(sums)) {
				return nil, fmt.Errorf("value %d is not below the length %d of the counts", v, len(sums))
			}
			sums[v] += w.Float64At(i)
		}
		return out, nil
	}
	out := tensor.NewArray(tensor.Int64, op.Shape)
	counts := out.Int64s()
	for i := range a.Len() {
		v, err := binAt(a, i)
		if err != nil {
			return nil, err
		}
		if v >= int64(len(counts)) {
			return nil, fmt.Errorf("value %d is not below the length %d of the counts", v, len(counts))
		}
		counts[v]++
	}
	return out, nil
}

func percentileKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.PercentileArgs)
	if !ok || len(args.Starts) != len(in) || len(in) == 0 {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	rows, _ := RowsOf(in[0].Shape, false)
	// at returns the array holding rank r of row i and the element's index.
	at := func(i, r int) (*tensor.Array, int, error) {
		for k, a := range in {
			_, cols := RowsOf(a.Shape, false)
			if r >= args.Starts[k] && r < args.Starts[k]+cols {
				return a, i*cols + r - args.Starts[k], nil
			}
		}
		return nil, 0, fmt.Errorf("no input holds rank %d", r)
	}
	nq := len(args.Q)
	if args.Median {
		nq = 1
	}
	res := make([]float64, nq*rows)
	if len(res) != tensor.NumElements(op.Shape) {
		return nil, fmt.Errorf("%d results for shape %v", len(res), op.Shape)
	}
	// A method that picks a value of integers copies its bytes (float64
	// would round int64 beyond 2^53); integers have no NaN rows.
	var picked *tensor.Array
	discrete := tensor.QuantileMethods[args.Method]
	if discrete && !op.DType.IsFloat() {
		if op.DType != in[0].DType {
			return nil, fmt.Errorf("percentile of %v as %v", in[0].DType, op.DType)
		}
		picked = &tensor.Array{DType: op.DType, Shape: slices.Clone(op.Shape), Data: make([]byte, len(res)*op.DType.Size())}
	}
	for i := range rows {
		n := args.N
		if args.SkipNaN {
			// The row's numbers, before its NaNs (sorted last).
			n = sort.Search(args.N, func(r int) bool {
				a, j, err := at(i, r)
				return err != nil || math.IsNaN(a.Float64At(j))
			})
			if n == 0 {
				for q := range nq {
					res[q*rows+i] = math.NaN()
				}
				continue
			}
		}
		last, li, err := at(i, n-1)
		if err != nil {
			return nil, err
		}
		if last.DType.IsFloat() && math.IsNaN(last.Float64At(li)) {
			for q := range nq {
				res[q*rows+i] = math.NaN()
			}
			continue
		}
		if args.Median {
			a, j, err := at(i, (n-1)/2)
			if err != nil {
				return nil, err
			}
			b, k, err := at(i, n/2)
			if err != nil {
				return nil, err
			}
			switch {
			case n%2 == 1:
				res[i] = a.Float64At(j)
			case a.DType == tensor.Float32:
				res[i] = float64((a.Float32s()[j] + b.Float32s()[k]) / 2)
			default:
				res[i] = (a.Float64At(j) + b.Float64At(k)) / 2
			}
			continue
		}
		for q, v := range args.Q {
			lo, hi, g := tensor.QuantileIndexes(args.Method, v, n)
			a, j, err := at(i, lo)
			if err != nil {
				return nil, err
			}
			b, k, err := at(i, hi)
			if err != nil {
				return nil, err
			}
			switch {
			case picked != nil:
				sz := a.DType.Size()
				copy(picked.Data[(q*rows+i)*sz:(q*rows+i+1)*sz], a.Data[j*sz:(j+1)*sz])
				continue
			case discrete:
				// The value itself: lerp would add 0 to a -0.0.
				res[q*rows+i] = a.Float64At(j)
				continue
			}
			res[q*rows+i] = lerp(a, j, b, k, g)
		}
	}
	if picked != nil {
		return picked, nil
	}
	return fromFloat64(res, op.DType, op.Shape), nil
}

// lerp interpolates between element i of a and element j of b with weight
// g as NumPy's _lerp does: the difference is taken in the data's dtype, and
// from the upper end when g >= 0.5.
func lerp(a *tensor.Array, i int, b *tensor.Array, j int, g float64) float64 {
	var x, y, diff float64
	switch a.DType {
	case tensor.Int32:
		x, y = float64(a.Int32s()[i]), float64(b.Int32s()[j])
		diff = float64(b.Int32s()[j] - a.Int32s()[i])
	case tensor.Int64:
		x, y = float64(a.Int64s()[i]), float64(b.Int64s()[j])
		diff = float64(b.Int64s()[j] - a.Int64s()[i])
	case tensor.Uint64:
		x, y = float64(a.Uint64s()[i]), float64(b.Uint64s()[j])
		diff = float64(b.Uint64s()[j] - a.Uint64s()[i])
	case tensor.Float32:
		x, y = float64(a.Float32s()[i]), float64(b.Float32s()[j])
		diff = float64(b.Float32s()[j] - a.Float32s()[i])
	default:
		x, y = a.Float64At(i), b.Float64At(j)
		diff = y - x
	}
	if g >= 0.5 {
		return y - diff*(1-g)
	}
	return x + diff*g
}

// binAt returns element i of bincount's input a: a non-negative integer.
func binAt(a *tensor.Array, i int) (int64, error) {
	var v int64
	switch a.DType {
	case tensor.Bool:
		v = int64(a.Data[i])
	case tensor.Int32:
		v = int64(a.Int32s()[i])
	case tensor.Int64:
		v = a.Int64s()[i]
	case tensor.Uint64:
		if u := a.Uint64s()[i]; u > math.MaxInt64 {
			return 0, fmt.Errorf("the input has a value too large to count (%d)", u)
		} else {
			v = int64(u)
		}
	default:
		return 0, fmt.Errorf("input of dtype %v is not integer", a.DType)
	}
	if v < 0 {
		return 0, fmt.Errorf("the input has a negative value (%d)", v)
	}
	return v, nil
}
