package spec

import (
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// defaultChunkElems bounds the elements of a chunk when a creator is given
// no chunks=.
const defaultChunkElems = 4 * 1024 * 1024

// defaultChunks chunks shape so that a chunk holds at most defaultChunkElems
// elements. Trailing axes stay whole while they fit, so chunks are
// contiguous runs of C order; the axis where they stop fitting is cut into
// even chunks (the last no larger than the others), and the axes before it
// into chunks of one.
func defaultChunks(shape []int) ([][]int, error) {
	return chunksWithin(shape, defaultChunkElems)
}

// DefaultChunks is the default chunking of a tensor of shape: chunks of at
// most 4 Mi elements, trailing axes kept whole while they fit, and even
// chunks along the axis where they stop fitting (see defaultChunks). A
// tensor so large that this would make more than 2^20 chunks gets larger
// chunks instead. Chunk sizes count elements, whatever the dtype.
func DefaultChunks(shape []int, dt tensor.DType) [][]int {
	if checkShape(shape) != nil {
		return nil
	}
	for budget := defaultChunkElems; ; budget *= 2 {
		if c, err := chunksWithin(shape, budget); err == nil {
			return c
		}
	}
}

// chunksWithin chunks shape with at most budget elements a chunk.
func chunksWithin(shape []int, budget int) ([][]int, error) {
	out := make([][]int, len(shape))
	if tensor.NumElements(shape) == 0 {
		// An empty tensor is one empty chunk.
		for ax, l := range shape {
			out[ax] = []int{l}
		}
		return out, nil
	}
	count := 1
	for ax := len(shape) - 1; ax >= 0; ax-- {
		l := shape[ax]
		if budget == 1 && l > 1 {
			if count *= l; count > maxDefaultChunks {
				return nil, TooManyChunks(shape)
			}
			out[ax] = RegularChunks(l, 1)
			continue
		}
		if l <= budget {
			out[ax] = RegularChunks(l, max(l, 1))
			if l > 0 {
				budget /= l
			}
			continue
		}
		n := (l + budget - 1) / budget // the fewest chunks that fit
		if count *= n; count > maxDefaultChunks {
			return nil, TooManyChunks(shape)
		}
		out[ax] = RegularChunks(l, (l+n-1)/n)
		budget = 1
	}
	return out, nil
}

// maxDefaultChunks bounds the chunks of the default chunking: a tensor
// that would have more gets larger chunks (DefaultChunks).
const maxDefaultChunks = 1 << 20

// MaxChunks bounds the chunks of one tensor whatever the memory: the
// scheduler's Core numbers a job's operands in int32 columns. A server
// bounds them by its memory first (lang.Options.MaxChunks).
const MaxChunks = 1<<31 - 1

// TooManyChunks refuses a default chunking of more than 2^20 chunks.
func TooManyChunks(shape []int) error {
	return fmt.Errorf("shape %s is cut into more than %d chunks", ShapeString(shape), maxDefaultChunks)
}

// TooManyChunksFor is the error of chunks that cut shape into n chunks,
// more than most, the chunks the server has the memory for.
func TooManyChunksFor(shape []int, n, most int) error {
	return fmt.Errorf("chunks cut shape %s into %d chunks, more than the %d this server has the memory for: use larger chunks", ShapeString(shape), n, most)
}

// RegularChunks cuts an axis of length l into chunks of size c, the last
// smaller when c does not divide l; an empty axis has one empty chunk.
func RegularChunks(l, c int) []int {
	if l == 0 {
		return []int{0}
	}
	n := (l + c - 1) / c
	out := make([]int, n)
	for i := range out {
		out[i] = c
	}
	out[n-1] = l - (n-1)*c
	return out
}

// DefaultChunksAt is the default chunking of shape, its errors reported
// at p.
func DefaultChunksAt(shape []int, p syntax.SrcPos) ([][]int, error) {
	c, err := defaultChunks(shape)
	if err != nil {
		return nil, syntax.ErrAt(p, err)
	}
	return c, nil
}
