package spec

import (
	"fmt"
	"math/rand/v2"

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
				return nil, tooManyChunks(shape)
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
			return nil, tooManyChunks(shape)
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
// bounds them by its memory first (Options.MaxChunks).
const MaxChunks = 1<<31 - 1

func tooManyChunks(shape []int) error {
	return fmt.Errorf("shape %s is cut into more than %d chunks", ShapeString(shape), maxDefaultChunks)
}

// tooManyChunksFor is the error of chunks that cut shape into n chunks,
// more than most.
func tooManyChunksFor(shape []int, n, most int) error {
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

// chunksOf converts a chunks argument for shape: an int (every axis), -1
// (whole axes), "auto" or None (the default), or a tuple with one entry an
// axis, each an int, -1 or None (the whole axis), or a tuple of explicit
// chunk sizes.
func chunksOf(v value, p syntax.SrcPos, shape []int, most int) ([][]int, error) {
	switch v := v.(type) {
	case noneValue:
		return defaultChunksAt(shape, p)
	case string:
		if v == "auto" {
			return defaultChunksAt(shape, p)
		}
		return nil, syntax.Errorf(p, "chunks %q not understood: give an int, a tuple, or \"auto\"", v)
	case seqValue:
		if len(v.elts) != len(shape) {
			return nil, syntax.Errorf(p, "chunks have %d entries for the %d axes of shape %s", len(v.elts), len(shape), ShapeString(shape))
		}
		out := make([][]int, len(shape))
		for ax, e := range v.elts {
			cs, err := axisChunks(e, v.pos[ax], shape[ax], most)
			if err != nil {
				return nil, err
			}
			out[ax] = cs
		}
		return out, checkCount(out, shape, p, most)
	}
	out := make([][]int, len(shape))
	for ax, l := range shape {
		cs, err := axisChunks(v, p, l, most)
		if err != nil {
			return nil, err
		}
		out[ax] = cs
	}
	return out, checkCount(out, shape, p, most)
}

func defaultChunksAt(shape []int, p syntax.SrcPos) ([][]int, error) {
	c, err := defaultChunks(shape)
	if err != nil {
		return nil, syntax.ErrAt(p, err)
	}
	return c, nil
}

// checkCount checks that chunks cut shape into at most most chunks.
func checkCount(chunks [][]int, shape []int, p syntax.SrcPos, most int) error {
	n := 1
	for _, cs := range chunks {
		if n = min(n*len(cs), MaxChunks+1); n > most {
			n = 1
			for _, cs := range chunks { // the whole count, for the message
				n = min(n*len(cs), MaxChunks+1)
			}
			return syntax.ErrAt(p, tooManyChunksFor(shape, n, most))
		}
	}
	return nil
}

// axisChunks converts the chunks of one axis of length l, refusing
// more than most of them.
func axisChunks(v value, p syntax.SrcPos, l, most int) ([]int, error) {
	switch v := v.(type) {
	case noneValue:
		return RegularChunks(l, max(l, 1)), nil
	case seqValue:
		if len(v.elts) > most {
			return nil, syntax.Errorf(p, "%d chunks on one axis, more than the %d this server has the memory for", len(v.elts), most)
		}
		sizes, err := ints(v, p)
		if err != nil {
			return nil, err
		}
		if l == 0 && len(sizes) == 1 && sizes[0] == 0 {
			return sizes, nil
		}
		sum := 0
		for _, s := range sizes {
			if s <= 0 {
				return nil, syntax.Errorf(p, "chunk sizes must be positive, got %d", s)
			}
			sum += s
		}
		if sum != l {
			return nil, syntax.Errorf(p, "chunks %v sum to %d, not the axis length %d", sizes, sum, l)
		}
		return sizes, nil
	}
	c, err := toInt(v, p)
	if err != nil {
		return nil, err
	}
	switch {
	case c == -1:
		return RegularChunks(l, max(l, 1)), nil
	case c <= 0:
		return nil, syntax.Errorf(p, "chunks must be positive (or -1 for a whole axis), got %d", c)
	case (l+c-1)/c > most:
		return nil, syntax.Errorf(p, "chunks of %d cut an axis of length %d into %d chunks, more than the %d this server has the memory for: use larger chunks", c, l, (l+c-1)/c, most)
	}
	return RegularChunks(l, c), nil
}

// freshSeed returns a random seed for a generator the spec gave none.
func freshSeed() uint64 { return rand.Uint64() >> 1 }
