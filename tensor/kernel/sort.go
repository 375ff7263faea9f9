package kernel

import (
	"context"
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// keyIndex is one element of argsort's pair chunks: an int64 chunk of shape
// [..., 2].
type keyIndex struct {
	key uint64
	idx int64
}

// LessFloat orders floats with NaNs last.
func LessFloat[T float32 | float64](a, b T) bool { return a < b || (b != b && a == a) }

func lessOrdered[T int32 | int64 | uint64 | uint8](a, b T) bool { return a < b }

func lessPair(a, b keyIndex) bool { return a.key < b.key || (a.key == b.key && a.idx < b.idx) }

// RowsOf is the number of rows of a block of shape (1 for a 1-D block) and
// the length of each; pairs blocks have a trailing axis of 2.
func RowsOf(shape []int, pairs bool) (int, int) {
	if pairs {
		shape = shape[:len(shape)-1]
	}
	if len(shape) == 1 {
		return 1, shape[0]
	}
	return shape[0], shape[1]
}

// sortOrdered sorts each row of d (rows of cols) with the standard library's
// sort of ordered values, which puts NaNs first, and then moves the NaNs to
// the end, where NumPy puts them.
func sortOrdered[T uint8 | int32 | int64 | uint64 | float32 | float64](d []T, rows, cols int) {
	for r := range rows {
		row := d[r*cols : (r+1)*cols]
		slices.Sort(row)
		nan := 0
		for nan < len(row) && row[nan] != row[nan] {
			nan++
		}
		if nan > 0 {
			nans := slices.Clone(row[:nan])
			copy(row, row[nan:])
			copy(row[len(row)-nan:], nans)
		}
	}
}

// sortKey maps element i of a to a uint64 whose order is NumPy's sort order
// of the values: -0 and +0 map to one key, and every NaN to the largest.
func sortKey(a *tensor.Array, i int) uint64 {
	switch a.DType {
	case tensor.Bool:
		return uint64(a.Data[i])
	case tensor.Int32:
		return uint64(int64(a.Int32s()[i])) ^ 1<<63
	case tensor.Int64:
		return uint64(a.Int64s()[i]) ^ 1<<63
	case tensor.Uint64:
		return a.Uint64s()[i]
	}
	v := a.Float64At(i)
	if v != v {
		return math.MaxUint64
	}
	if v == 0 {
		v = 0
	}
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func sortLocalKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.SortArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	x := in[0]
	rows, cols := RowsOf(x.Shape, false)
	if args.Pairs {
		out := tensor.NewArray(tensor.Int64, op.Shape)
		d := tensor.View[keyIndex](out.Data)
		for r := range rows {
			for j := range cols {
				d[r*cols+j] = keyIndex{sortKey(x, r*cols+j), int64(args.Offset + j)}
			}
		}
		for r := range rows {
			radixSortPairs(d[r*cols : (r+1)*cols])
		}
		return out, nil
	}
	out := &tensor.Array{DType: x.DType, Shape: slices.Clone(x.Shape), Data: slices.Clone(x.Data)}
	switch x.DType {
	case tensor.Bool:
		sortOrdered(out.Data, rows, cols)
	case tensor.Int32:
		sortOrdered(out.Int32s(), rows, cols)
	case tensor.Int64:
		sortOrdered(out.Int64s(), rows, cols)
	case tensor.Uint64:
		sortOrdered(out.Uint64s(), rows, cols)
	case tensor.Float32:
		sortOrdered(out.Float32s(), rows, cols)
	case tensor.Float64:
		sortOrdered(out.Float64s(), rows, cols)
	default:
		return nil, fmt.Errorf("invalid dtype %v", x.DType)
	}
	return out, nil
}

// mergeSplit merges the sorted rows a and b into out, which takes the
// len(out) smallest elements (or the largest when high). Ties go to a first,
// so that merging is stable.
func mergeSplit[T any](out, a, b []T, high bool, less func(x, y T) bool) {
	if !high {
		i, j := 0, 0
		for k := range out {
			if j >= len(b) || (i < len(a) && !less(b[j], a[i])) {
				out[k] = a[i]
				i++
			} else {
				out[k] = b[j]
				j++
			}
		}
		return
	}
	i, j := len(a)-1, len(b)-1
	for k := len(out) - 1; k >= 0; k-- {
		if i < 0 || (j >= 0 && !less(b[j], a[i])) {
			out[k] = b[j]
			j--
		} else {
			out[k] = a[i]
			i--
		}
	}
}

func mergeRows[T any](out, a, b []T, rows, ca, cb, co int, high bool, less func(x, y T) bool) {
	for r := range rows {
		mergeSplit(out[r*co:(r+1)*co], a[r*ca:(r+1)*ca], b[r*cb:(r+1)*cb], high, less)
	}
}

func sortMergeKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	args, ok := op.Args.(chunk.SortArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	if len(in) != 2 {
		return nil, fmt.Errorf("%d inputs, want 2", len(in))
	}
	a, b := in[0], in[1]
	rows, ca := RowsOf(a.Shape, args.Pairs)
	rb, cb := RowsOf(b.Shape, args.Pairs)
	ro, co := RowsOf(op.Shape, args.Pairs)
	if rb != rows || ro != rows || co > ca+cb || a.DType != op.DType || b.DType != op.DType {
		return nil, fmt.Errorf("blocks %v%v and %v%v for a block of %v", a.DType, a.Shape, b.DType, b.Shape, op.Shape)
	}
	out := tensor.NewArray(op.DType, op.Shape)
	h := args.High
	switch {
	case args.Pairs:
		mergeRows(tensor.View[keyIndex](out.Data), tensor.View[keyIndex](a.Data), tensor.View[keyIndex](b.Data), rows, ca, cb, co, h, lessPair)
	case op.DType == tensor.Bool:
		mergeRows(out.Data, a.Data, b.Data, rows, ca, cb, co, h, lessOrdered[uint8])
	case op.DType == tensor.Int32:
		mergeRows(out.Int32s(), a.Int32s(), b.Int32s(), rows, ca, cb, co, h, lessOrdered[int32])
	case op.DType == tensor.Int64:
		mergeRows(out.Int64s(), a.Int64s(), b.Int64s(), rows, ca, cb, co, h, lessOrdered[int64])
	case op.DType == tensor.Uint64:
		mergeRows(out.Uint64s(), a.Uint64s(), b.Uint64s(), rows, ca, cb, co, h, lessOrdered[uint64])
	case op.DType == tensor.Float32:
		mergeRows(out.Float32s(), a.Float32s(), b.Float32s(), rows, ca, cb, co, h, LessFloat[float32])
	case op.DType == tensor.Float64:
		mergeRows(out.Float64s(), a.Float64s(), b.Float64s(), rows, ca, cb, co, h, LessFloat[float64])
	default:
		return nil, fmt.Errorf("invalid dtype %v", op.DType)
	}
	return out, nil
}

func argsortIndicesKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	src := tensor.View[keyIndex](in[0].Data)
	out := tensor.NewArray(tensor.Int64, op.Shape)
	d := out.Int64s()
	if len(src) != len(d) {
		return nil, fmt.Errorf("%d pairs for %d indices", len(src), len(d))
	}
	for i, p := range src {
		d[i] = p.idx
	}
	return out, nil
}
