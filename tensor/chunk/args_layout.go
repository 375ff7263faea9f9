package chunk

// DiagonalArgs are the arguments of a "diagonal" op: its chunk is the run
// of the diagonal of its one input block that starts at (Row, Col), local
// to the block, and is as long as the op's shape says.
type DiagonalArgs struct {
	Row, Col int
}

// EighArgs are the arguments of a "linalg.eigh" op: which triangle of the
// symmetric matrix it reads.
type EighArgs struct {
	Upper bool
}

// TakeArgs are the arguments of "take.touch" and "take": Offs are the
// offsets along the first axis of the blocks of x the op may read (a
// "take.touch" op: all of them, and the axis' length after them; a "take"
// op: those of its inputs after the index block).
type TakeArgs struct {
	Offs []int
	// Len is the length of x's axis: a negative index counts from it.
	Len int
	// Piece marks a "take" op that reads the pieces cut from the blocks
	// (TakePieceArgs) in place of the blocks.
	Piece bool
}

// TakePieceArgs are the arguments of a "take.piece" op, whose chunk holds
// the rows its indices name in its block of x (which starts at Off along
// the axis), in the indices' order: as many as the data says, up to one
// an index.
type TakePieceArgs struct {
	Off, Len int
}

func (TakePieceArgs) boundsLen() {}

// MaskArgs are the arguments of the ops of boolean masks ("mask.select",
// "mask.count"); the selected chunk's length is the data's, up to the
// op's shape.
type MaskArgs struct{}

func (MaskArgs) boundsLen() {}

// SampleSortArgs are the arguments of the sample sort's ops ("ssort.*"):
// P destinations (the blocks of the result), Dest the one a
// "ssort.merge" merges the pieces of. Their chunks are sort.local's (key, index)
// pairs, ordered by key and then index: a total order, so that ties split
// like any other values and every destination's share stays bounded.
type SampleSortArgs struct {
	P, Dest int
}

func (SampleSortArgs) boundsLen() {}

// NonEmptyArgs are the arguments of a "nonempty" op: the reduction whose
// identity is missing, for the message.
type NonEmptyArgs struct {
	Reduction string
}

// LookupArgs are the arguments of "searchsorted" (side='right' when
// Right) and "isin" ops.
type LookupArgs struct {
	Right bool
}
