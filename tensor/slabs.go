package tensor

import "sort"

// Slabs lays out a tiled tensor's C-order elements by slab, a slab being
// the chunks that share their index along the first axis: its elements are
// a contiguous range of the C-order tensor, so a reader can stream a
// tensor slab by slab, holding one slab's chunks at a time, without
// gathering it (the files of fs). A 0-d tensor is one slab of one element.
type Slabs struct {
	shape  []int
	chunks [][]int
	// Ends[i] is the element offset where slab i ends.
	Ends []int
	// Inner is the number of chunks in a slab.
	Inner int
	offs  [][]int // chunk offsets along each axis after the first
}

// NewSlabs lays out a tensor of shape cut into chunks.
func NewSlabs(shape []int, chunks [][]int) *Slabs {
	s := &Slabs{shape: shape, chunks: chunks, Inner: 1}
	if len(shape) == 0 {
		s.Ends = []int{1}
		return s
	}
	for _, cs := range chunks[1:] {
		s.Inner *= len(cs)
	}
	s.offs = ChunkOffsets(chunks[1:])
	row := NumElements(shape[1:])
	end := 0
	for _, rows := range chunks[0] {
		end += rows * row
		s.Ends = append(s.Ends, end)
	}
	return s
}

// Find returns the slab holding element e, len(Ends) past the end.
func (s *Slabs) Find(e int) int {
	return sort.Search(len(s.Ends), func(i int) bool { return s.Ends[i] > e })
}

// Start is the element offset where slab i starts.
func (s *Slabs) Start(i int) int {
	if i == 0 {
		return 0
	}
	return s.Ends[i-1]
}

// Locate finds element e of slab i (counted from the slab's start) in the
// slab's chunks: part, the chunk's index in the slab (the chunk grid's
// index i*Inner+part); at, the element's index in the chunk; and run, how
// many elements from there are contiguous in both. Within a chunk, C order
// runs along the last axis cut into several chunks until that chunk ends,
// through every whole axis after it.
func (s *Slabs) Locate(i, e int) (part, at, run int) {
	total := s.Ends[i] - s.Start(i)
	if s.Inner == 1 {
		return 0, e, total - e
	}
	dims := s.shape[1:]
	chunks := s.chunks[1:]
	// The last axis cut into several chunks; those after it are whole.
	k := len(dims) - 1
	for len(chunks[k]) == 1 {
		k--
	}
	trail := NumElements(dims[k+1:]) // elements of the whole axes after k
	// e's index: along the slab's rows, then each axis from the last.
	idx := make([]int, len(dims))
	rest := e
	for a := len(dims) - 1; a >= 0; a-- {
		idx[a] = rest % dims[a]
		rest /= dims[a]
	}
	// The chunk along each axis, and e's index in it.
	at = rest
	for a := range dims {
		offs := s.offs[a]
		c := sort.Search(len(offs), func(j int) bool { return offs[j] > idx[a] }) - 1
		part = part*len(offs) + c
		idx[a] -= offs[c]
		at = at*chunks[a][c] + idx[a]
	}
	inTrail := 0
	for a := k + 1; a < len(dims); a++ {
		inTrail = inTrail*dims[a] + idx[a]
	}
	chunkLen := chunks[k][partAxis(part, chunks, k)]
	run = (chunkLen-idx[k])*trail - inTrail
	return part, at, run
}

// partAxis is the chunk index along axis k of the chunk whose index in
// the grid of chunks is part.
func partAxis(part int, chunks [][]int, k int) int {
	for a := len(chunks) - 1; a > k; a-- {
		part /= len(chunks[a])
	}
	return part % len(chunks[k])
}
