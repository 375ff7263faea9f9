package chunk

import (
	"fmt"

	"marsfs/tensor"
)

// A Range is the part of an input chunk that an op reads: the elements
// from Off (in the chunk's C order) on, as many as Shape holds, read as an
// array of Shape. DType is the chunk's, so that whoever holds only the
// op (a worker admitting it) knows the bytes it reads. It is how a shuffle's reduce op reads its piece of a
// map op's chunk: the map op lays its block out destination by
// destination (a sorted block already is), so that each destination's
// piece is one run, and the reduce op names the run. Then only the piece
// travels between workers (the chunk service sends a run; a co-located
// reader maps the chunk and slices it), and a piece is not an op or a
// chunk of its own: p map ops and p reduce ops a shuffle, not p².
//
// The whole chunk stays the unit of everything else: it is made, kept,
// spilled, freed and made again from lineage whole, so a shuffle's pieces
// survive a lost worker as any chunk does.
type Range struct {
	Off   int
	Shape []int
	DType tensor.DType
}

// Whole reports whether r reads the whole chunk.
func (r Range) Whole() bool { return r.Shape == nil }

// Len is the number of elements r reads.
func (r Range) Len() int { return tensor.NumElements(r.Shape) }

// RangesOf returns rs as an Op's Ranges: nil for none.
func RangesOf(rs []Range) *[]Range {
	if rs == nil {
		return nil
	}
	return &rs
}

// RangeList returns op's ranges, one an input; nil when it reads its
// inputs whole.
func (op *Op) RangeList() []Range {
	if op.Ranges == nil {
		return nil
	}
	return *op.Ranges
}

// InputRange returns the range op reads of its input i; a whole one when
// it reads the whole chunk.
func (op *Op) InputRange(i int) Range {
	if op.Ranges == nil {
		return Range{}
	}
	return (*op.Ranges)[i]
}

// InputBytes is the number of bytes op reads of its input i, a chunk of
// whole bytes.
func (op *Op) InputBytes(i int, whole int64) int64 {
	r := op.InputRange(i)
	if r.Whole() {
		return whole
	}
	return int64(r.Len() * r.DType.Size())
}

// View returns the part r of a, sharing its bytes.
func View(a *tensor.Array, r Range) (*tensor.Array, error) {
	if r.Whole() {
		return a, nil
	}
	if a.DType != r.DType {
		return nil, fmt.Errorf("range of %v in a chunk of %v", r.DType, a.DType)
	}
	n, sz := r.Len(), a.DType.Size()
	if r.Off < 0 || r.Off+n > len(a.Data)/max(sz, 1) {
		return nil, fmt.Errorf("range of %d elements at %d of a chunk of %d", n, r.Off, len(a.Data)/max(sz, 1))
	}
	return &tensor.Array{DType: a.DType, Shape: r.Shape, Data: a.Data[r.Off*sz : (r.Off+n)*sz : (r.Off+n)*sz]}, nil
}

// Views returns op's inputs in as its kernel reads them: each cut to
// its range.
func (op *Op) Views(in []*tensor.Array) error {
	if op.Ranges == nil {
		return nil
	}
	if rs := *op.Ranges; len(rs) != len(in) {
		return fmt.Errorf("%d ranges for %d inputs", len(rs), len(in))
	}
	for i, r := range *op.Ranges {
		v, err := View(in[i], r)
		if err != nil {
			return fmt.Errorf("input %d: %w", i, err)
		}
		in[i] = v
	}
	return nil
}
