package lang

import (
	"marsfs/tensor/spec"
	"math/rand/v2"

	"marsfs/tensor/spec/syntax"
)

// chunksOf converts a chunks argument for shape: an int (every axis), -1
// (whole axes), "auto" or None (the default), or a tuple with one entry an
// axis, each an int, -1 or None (the whole axis), or a tuple of explicit
// chunk sizes.
func chunksOf(v value, p syntax.SrcPos, shape []int, most int) ([][]int, error) {
	switch v := v.(type) {
	case noneValue:
		return spec.DefaultChunksAt(shape, p)
	case string:
		if v == "auto" {
			return spec.DefaultChunksAt(shape, p)
		}
		return nil, syntax.Errorf(p, "chunks %q not understood: give an int, a tuple, or \"auto\"", v)
	case seqValue:
		if len(v.elts) != len(shape) {
			return nil, syntax.Errorf(p, "chunks have %d entries for the %d axes of shape %s", len(v.elts), len(shape), spec.ShapeString(shape))
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

// checkCount checks that chunks cut shape into at most most chunks.
func checkCount(chunks [][]int, shape []int, p syntax.SrcPos, most int) error {
	n := 1
	for _, cs := range chunks {
		if n = min(n*len(cs), spec.MaxChunks+1); n > most {
			n = 1
			for _, cs := range chunks { // the whole count, for the message
				n = min(n*len(cs), spec.MaxChunks+1)
			}
			return syntax.ErrAt(p, spec.TooManyChunksFor(shape, n, most))
		}
	}
	return nil
}

// axisChunks converts the chunks of one axis of length l, refusing
// more than most of them.
func axisChunks(v value, p syntax.SrcPos, l, most int) ([]int, error) {
	switch v := v.(type) {
	case noneValue:
		return spec.RegularChunks(l, max(l, 1)), nil
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
		return spec.RegularChunks(l, max(l, 1)), nil
	case c <= 0:
		return nil, syntax.Errorf(p, "chunks must be positive (or -1 for a whole axis), got %d", c)
	case (l+c-1)/c > most:
		return nil, syntax.Errorf(p, "chunks of %d cut an axis of length %d into %d chunks, more than the %d this server has the memory for: use larger chunks", c, l, (l+c-1)/c, most)
	}
	return spec.RegularChunks(l, c), nil
}

// freshSeed returns a random seed for a generator the spec gave none.
func freshSeed() uint64 { return rand.Uint64() >> 1 }
