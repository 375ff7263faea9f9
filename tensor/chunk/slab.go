package chunk

import (
	"slices"
)

// A graph of a million chunks is a few million small objects: ops, their
// inputs and shapes. Cutting them from larger blocks costs one allocation a
// block instead of one an object, and spares the collector the scanning of
// each. The ops and slices of one graph live and die together, so a block
// held alive by a few of them is no great loss.

// Blocks start small, for the many small graphs, and double up to a
// bound.
func NextBlock(last, least, most int) int { return min(max(2*last, least), most) }

// An OpSlab hands out ops cut from larger blocks.
type OpSlab struct {
	buf  []Op
	size int // of the last block
}

// Take returns a zeroed op.
func (s *OpSlab) Take() *Op {
	if len(s.buf) == 0 {
		s.size = NextBlock(s.size, 16, 1024)
		s.buf = make([]Op, s.size)
	}
	op := &s.buf[0]
	s.buf = s.buf[1:]
	return op
}

// An IntSlab hands out small int slices cut from larger blocks.
type IntSlab struct {
	buf  []int
	size int // of the last block
}

// Take returns a zeroed slice of n ints whose capacity is n, so that an
// append to it never writes into its neighbour.
func (s *IntSlab) Take(n int) []int {
	if n > len(s.buf) || s.buf == nil {
		if n > 256 {
			return make([]int, n)
		}
		s.size = NextBlock(s.size, 256, 4096)
		s.buf = make([]int, s.size)
	}
	r := s.buf[:n:n]
	s.buf = s.buf[n:]
	return r
}

// Clone returns a copy of v cut from the slab.
func (s *IntSlab) Clone(v []int) []int {
	r := s.Take(len(v))
	copy(r, v)
	return r
}

// A ShapeCache hands out the chunk shapes of a graph, the same slice for
// equal shapes met one after the other, as the chunks of a grid mostly are:
// a chunk's shape is never modified once its op is made.
type ShapeCache struct {
	last []int
	ints IntSlab
}

// Shape returns a slice equal to s, which the caller may reuse afterwards.
func (c *ShapeCache) Shape(s []int) []int {
	if c.last == nil || !slices.Equal(c.last, s) {
		c.last = c.ints.Clone(s)
	}
	return c.last
}

// An OpStack holds ops in blocks, to be taken back last first: every push
// comes before the first pop, as an op popped still lives in its block.
type OpStack struct {
	blocks [][]Op
	size   int // of the last block
}

// Push returns a zeroed op on top of the stack.
func (s *OpStack) Push() *Op {
	if n := len(s.blocks); n == 0 || len(s.blocks[n-1]) == cap(s.blocks[n-1]) {
		s.size = NextBlock(s.size, 16, 1024)
		s.blocks = append(s.blocks, make([]Op, 0, s.size))
	}
	b := &s.blocks[len(s.blocks)-1]
	*b = append(*b, Op{})
	return &(*b)[len(*b)-1]
}

// Pop takes the op on top of the stack.
func (s *OpStack) Pop() *Op {
	b := &s.blocks[len(s.blocks)-1]
	op := &(*b)[len(*b)-1]
	if *b = (*b)[:len(*b)-1]; len(*b) == 0 {
		s.blocks = s.blocks[:len(s.blocks)-1]
	}
	return op
}
