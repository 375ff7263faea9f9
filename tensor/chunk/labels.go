package chunk

import "marsfs/tensor"

// LabelSumsArgs are the arguments of a "label.sums" op, which makes in one
// pass over a band of rows x (of input 0, r x d) what a graph
// would make in six ops and three stored (r x k) chunks (x is rows R0 to
// R1 of input 0):
//
//	m = x @ w                      w: View of input 1, d x k
//	s = score(m, ...)              an elementwise program (Score), or m
//	l = s.argmin(axis=1)           argmax when ArgMax
//	oh = (l[:, None] == arange(Labels)).astype(dtype)
//	oh.T @ x, oh.sum(axis=0)       the sums of each label's rows, its count
//
// The op's chunk is 1-D, of the op's dtype: the Labels x d sums, then the
// Labels counts. It runs over blocks of rows small enough to stay in the
// cache, so that m, s, l and oh exist only a block at a time. A row whose
// scores hold a NaN takes the first NaN's column, and ties the first
// column, as NumPy's argmin does; a label past Labels matches no column,
// as the comparison with arange would.
type LabelSumsArgs struct {
	R0, R1 int       // the band: rows [R0, R1) of input 0, every column
	W      BlockView // the part of input 1 that is w, as a matmul's view
	// Score is the elementwise program over the (rows, k) block of m, or
	// nil when the scores are m. Its value shape is the chunk's (r, k);
	// the kernel runs it a block of rows at a time.
	Score *ExprArgs
	// ScoreIn gives, for each input of Score, -1 for m's block, or the
	// index of the op's input it reads: a chunk of r rows is read a block
	// of rows at a time, any other is broadcast whole.
	ScoreIn    []int
	ScoreDType tensor.DType // the dtype Score makes
	ArgMax     bool
	Labels     int // the length of the arange the labels are compared with
}
