package chunk

import (
	"fmt"
	"strings"

	"marsfs/tensor"
)

// AssembleArgs are the arguments of the "assemble" kernel, which builds one
// output chunk from strided blocks of its input chunks. Rechunking, slicing,
// concatenation and the alignment of elementwise operands all tile to it, so
// only the blocks a chunk needs ever move.
type AssembleArgs struct {
	Pieces []Piece
}

// A Piece copies a strided block of input chunk In (an index into
// Op.Inputs) to offset Dst of the output chunk. Src holds one Slice an
// axis in the input chunk's own coordinates.
type Piece struct {
	In  int
	Src []tensor.Slice
	Dst []int
}

// SplitArgs are the arguments of the "rechunk.split" kernel, a rechunk's
// shuffle map op: it lays the blocks Boxes (one Slice an axis, of unit
// step, in its input chunk's coordinates) of its one input out one after
// the other, each in C order, as a 1-D chunk, so that each new chunk
// reads its block as one run of it (a Range).
type SplitArgs struct {
	Boxes [][]tensor.Slice
}

// ConstArgs are the arguments of the "const" kernel: the bytes of one chunk of
// an uploaded tensor (C order, little-endian, as Array.Data). The chunk
// travels inside its operand, so an upload needs no other storage until the
// operand has run and its chunk is kept like any other.
type ConstArgs struct {
	Data []byte
}

// Creation ops tile to one op a chunk of Node.Chunks. Every op carries its
// chunk's global offset and the tensor's global shape, so that the value of
// an element depends only on its global index: the same tensor comes out of
// any chunking, and any chunk can be recomputed alone.

// GenArgs are the arguments of the creation and random kernels ("full",
// "arange", "linspace", "eye", "rand", "randn", "randint", "uniform",
// "normal").
type GenArgs struct {
	Offset   []int // the chunk's first element, per axis
	Global   []int // the whole tensor's shape
	Value    float64
	IntValue int64
	Start    float64
	Step     float64
	Low      int64
	High     int64
	K        int
	Seed     uint64
}

// Elementwise ops tile to one op an output chunk. Inputs are first rechunked so
// that, along every output axis, they share the common refinement of the
// chunk boundaries of the inputs that are not broadcast along it; an axis an
// input broadcasts (size 1, or missing) stays one chunk of size 1.
//
// A kernel casts its input chunks to a compute dtype, then applies a typed
// loop of the form func(dst, a, b []T) row by row: a row is a run of the
// output's last (coalesced) axis, and an input broadcast along that axis is
// repeated into a scratch row first. When every input already has the
// output's shape the loop runs over whole blocks. Because the loops work on
// plain slices, an expression of several ops can be evaluated block by block.

// ElemArgs are the arguments of the elementwise kernels; Op.Kind names
// the op (OpAdd, OpSqrt, ...).
type ElemArgs struct {
	// Compute is the dtype inputs are cast to before the loop runs: the
	// output dtype for arithmetic, the promoted input dtype for comparisons,
	// bool for logical_and/or and where's condition.
	Compute  tensor.DType
	Decimals int // OpRound
}

// CheckOp reports whether op's output dtype and shape are valid.
func CheckOp(op *Op) error {
	if !op.DType.Valid() {
		return fmt.Errorf("invalid dtype %v", op.DType)
	}
	for _, s := range op.Shape {
		if s < 0 {
			return fmt.Errorf("negative dimension in shape %v", op.Shape)
		}
	}
	return nil
}

// FuseArgs are the arguments of a "fuse" op: a chain of ops run one after
// the other in one kernel call. Members[0] reads the fuse op's inputs (its
// Inputs index them); every later member reads the one before it as its
// Inputs[0] = 0, and any further input i > 0 is the fuse op's input
// Inputs[i]-1 (a chunk read again, fused into the reader that needs it
// besides a mean it waited for: fuse.Reread).
type FuseArgs struct {
	Members []Op
}

// MapsArgs are the arguments of a "maps" op: the map ops of reductions
// that all read one chunk (x.mean(axis=0) and x.var(axis=0)), run by one
// kernel over it. Each member reads the op's one input (Inputs [0]); the
// op's chunk is their partials, of one dtype, packed one after the other
// in member order into a 1-D chunk, and each reader of a member's partial
// reads its run of it (a Range). One op instead of several lets the
// input's maker join it in a chain (the input then never stored), and
// lets the members share work: the mean's sum is the variance's first
// pass.
type MapsArgs struct {
	Members []Op
}

var (
	GenKinds = map[Kind]bool{KindFull: true, KindArange: true, KindLinspace: true, KindEye: true,
		KindRand: true, KindRandn: true, KindRandint: true, KindUniform: true, KindNormal: true}
	// CopiedGens are the generators a group copies rather than shares.
	CopiedGens = map[Kind]bool{KindFull: true, KindArange: true, KindLinspace: true, KindEye: true}
	// RedrawnGens are the random generators a group draws again rather
	// than reads, when their chunk is no output (then it exists anyway).
	RedrawnGens = map[Kind]bool{KindRand: true, KindUniform: true}
)

func isElemOp(op *Op) bool {
	_, ok := op.Args.(ElemArgs)
	return ok && op.Stored == 0 && op.Kind.IsElem()
}

func IsGenOp(op *Op) bool {
	_, ok := op.Args.(GenArgs)
	return ok && op.Stored == 0 && GenKinds[op.Kind] && len(op.Inputs) == 0
}

// ExprMapOp returns the reduction of a map op an expr program can end in.
func ExprMapOp(op *Op) (ReduceArgs, bool) {
	args, ok := op.Args.(ReduceArgs)
	if !ok || op.Stored != 0 || len(op.Inputs) != 1 || !ExprReductions[args.Op] || op.Kind != StepKind(args.Op, StepMap) {
		return args, false
	}
	return args, true
}

// QRFactorArgs are the arguments of "linalg.qr.factor": a leaf factors a
// block of A; an inner node factors the stacked R factors of its inputs.
type QRFactorArgs struct{ Leaf bool }

// QRQArgs are the arguments of "linalg.qr.q", one step of the top-down pass.
// At the root the second input, if any, is the seed (U_r for the SVD;
// without one the seed is the identity); elsewhere the second input is the
// parent's result, of which rows Off... belong to this node.
type QRQArgs struct {
	Root bool
	Off  int
}

// QRQTArgs are the arguments of "linalg.qr.qt", one step of the bottom-up
// product Qᵀb: a leaf applies its Q_iᵀ to its block of b, an inner node to
// the stacked results of its children.
type QRQTArgs struct{ Leaf bool }

// SVDPartArgs are the arguments of "linalg.svd.part": which of U_r (0), S
// (1) and Vᵀ (2) to take from the small SVD, for k singular values.
type SVDPartArgs struct{ Part, K int }

// MatmulArgs are the arguments of a "matmul" op that draws some of its
// blocks itself, or reads parts of its inputs. Blocks, if not nil, holds
// one entry a block the op multiplies, in the order of the pairs (a, b, a,
// b, ...): a generator op (with no inputs) whose chunk the kernel draws,
// or an op of empty Kind for a block read from the op's next input. Views,
// if not nil, holds one entry a block too: the part of its input a read
// block is (a drawn block's entry is ignored). An op without MatmulArgs
// reads every block whole from its inputs.
type MatmulArgs struct {
	Blocks []Op
	Views  []BlockView
}

// A BlockView is the part of a 2-D input chunk a matmul block is: rows
// [R0, R1) and columns [C0, C1) of the chunk as stored, transposed when
// Trans. It lets a product read x.T from x's chunks, and blocks finer than
// its inputs' chunks, without a copy of either.
type BlockView struct {
	Trans          bool
	R0, R1, C0, C1 int
}

// Shape is the shape of the block the view makes.
func (v BlockView) Shape() []int {
	if v.Trans {
		return []int{v.C1 - v.C0, v.R1 - v.R0}
	}
	return []int{v.R1 - v.R0, v.C1 - v.C0}
}

// ReduceArgs are the arguments of the reduction kernels (Kind "<op>.map",
// "<op>.combine", "<op>.final").
type ReduceArgs struct {
	Op       string       // the reduction, OpSum...
	In       tensor.DType // the dtype of the reduced tensor
	Axes     []int        // the reduced axes of the input (all of them for none)
	Flat     bool         // argmin/argmax over all axes: a flat C-order index
	Keepdims bool
	Ddof     int
	Offset   []int // map: the chunk's offset in the input
	Global   []int // map, and a mean's final: the input's shape
	// Gather, for a mean's map of several blocks that are a reshape's
	// (tile.MeanMapGroup), gives each block as the runs of the reshape op
	// that would have made it, over the map's own inputs (the reshape's
	// inputs): the map reads them in place instead of a copy of each
	// block. Nil for a map of its inputs as they are.
	Gather []ReshapeArgs
}

// PartialSpec is the dtype of op's partials and the length of their extra
// axis (1: no extra axis).
//
// A mean's partial is its float64 sums alone: every value counts, so
// the final divides by the count of values along the reduced axes, which
// the input's shape gives (MeanCount), and a (sum, count) pair of each
// (a climate chunk's time mean: 1 MB of partial, every count the same)
// would be twice the bytes to write, combine and move. A nanmean's
// counts differ from element to element: its partial is (sum, count)
// pairs.
func PartialSpec(op string, in, out tensor.DType) (tensor.DType, int) {
	switch op {
	case tensor.OpMean:
		return tensor.Float64, 1
	case tensor.OpNanmean:
		return tensor.Float64, 2
	case tensor.OpVar, tensor.OpStd:
		return tensor.Float64, 3
	case tensor.OpArgmin, tensor.OpArgmax:
		if in.IsFloat() {
			return tensor.Float64, 2
		}
		return tensor.Int64, 2
	case tensor.OpMin, tensor.OpMax, tensor.OpNanmin, tensor.OpNanmax:
		return in, 1
	case tensor.OpAny, tensor.OpAll:
		return tensor.Bool, 1
	case tensor.OpCountNonzero:
		return tensor.Int64, 1
	}
	if out == tensor.Float16 {
		// NumPy accumulates float16 in float32.
		return tensor.Float32, 1
	}
	return out, 1 // sum, prod, nansum accumulate in the result dtype
}

// MeanCount is the count of values a mean's final divides its sums by:
// the product of the input's lengths (a.Global) along the reduced axes
// (the tiler lists them all for a reduction over every axis: none is a
// mean of each value alone), or false when a does not say.
func MeanCount(a ReduceArgs) (float64, bool) {
	if a.Global == nil && len(a.Axes) > 0 {
		return 0, false
	}
	n := 1.0
	for _, ax := range a.Axes {
		if ax < 0 || ax >= len(a.Global) {
			return 0, false
		}
		n *= float64(a.Global[ax])
	}
	return n, true
}

// Scans (cumsum, cumprod) along one axis tile in three kinds of op:
//
//   - "<op>.local" scans each input chunk on its own;
//   - "<op>.carry" makes the running total of the chunks before the next one
//     along the axis, from the previous carry and the last slice of a local
//     scan (a chain of carries, one a chunk, not all-to-all);
//   - "<op>.offset" combines a local scan with the carry of the chunks before
//     it.
//
// The first chunk along the axis needs no offset: its local scan is its
// result.

// ScanArgs are the arguments of the scan kernels.
type ScanArgs struct {
	Op   string // OpCumsum or OpCumprod
	Axis int
	// Seeded makes an offset op scan its input 0, the chunk itself, from
	// the carry (input 1), rather than add the carry to a local scan: a
	// float16 scan, which NumPy rounds to float16 after every addition, is
	// so the same whatever the chunks.
	Seeded bool
	// Half rounds every partial result to float16, as NumPy's float16
	// loops do; the kernels set it on the float32 op they run a float16
	// one as (kernel/widen.go).
	Half bool
}

// Tile rules and kernels for transpose, slicing and concatenation. Reshape
// lives in shape_reshape.go. None of these ops computes anything: they move
// elements, and their rules take care that an element only leaves its chunk
// when the output chunking makes it necessary.

// TransposeArgs are the arguments of the "transpose" kernel: axis ax of the
// output chunk is axis Perm[ax] of the input chunk.
type TransposeArgs struct {
	Perm []int
}

// Reshape keeps C order: element f of the input in C order is element f of
// the output. Chunks do not follow that order (a chunk is a box, not a flat
// range), so a reshape across chunk boundaries has output chunks that gather
// pieces of several input chunks. The rule finds, for each output chunk, the
// runs of elements that are contiguous both in it and in one input chunk,
// and emits one "reshape" op that copies them.

// ReshapeArgs are the arguments of the "reshape" kernel, which fills a chunk
// of shape op.Shape by copying runs of elements from its inputs.
type ReshapeArgs struct {
	Runs []ReshapeRun
}

// A ReshapeRun copies Count blocks of Len contiguous elements from input In
// (an index into Op.Inputs) to the output chunk. Block i starts at
// element Src + i*SrcStride of the input (C order, in elements) and at
// element Dst + i*DstStride of the output. Regular runs, like the rows of
// one input chunk, so take one ReshapeRun.
type ReshapeRun struct {
	In, Src, Dst, Len    int
	Count                int
	SrcStride, DstStride int
}

// Sort tiles as a sorting network over blocks. A sample sort (partition by
// pivots, sort each partition) gives partitions whose sizes depend on the
// data, and marsfs fixes every chunk's shape when it tiles a graph. A
// network of merge-splits keeps every shape fixed: the axis is cut into p
// blocks of equal size (the last may be smaller), each block is sorted on its
// own, and then every comparator (a, b) of Batcher's odd-even merge sort
// network on p wires merges the sorted blocks a < b and gives a the smallest
// len(a) elements and b the rest. By the 0-1 principle (a merge-split is a
// merging comparator network) the result is sorted when the blocks have
// equal sizes; a smaller last block behaves as an equal one padded with +inf,
// which never leaves it since b always keeps the largest elements. The
// network has O(p log² p) comparators in O(log² p) rounds; each op reads two
// blocks and writes one, so no op ever holds more than two blocks.
//
// NaNs sort last, as in NumPy. Argsort carries (key, index) pairs through
// the same network, the key an order-preserving uint64 encoding of the value
// (-0 and +0 equal, every NaN last); comparing pairs by key and then by index
// makes it stable, as NumPy's kind='stable'.

// SortArgs are the arguments of the sort kernels.
type SortArgs struct {
	Pairs  bool // chunks hold (key, index) pairs, for argsort
	Offset int  // "sort.local" with Pairs: the index of the block's first element
	High   bool // "sort.merge": keep the high part
}

// Histogram counts each chunk into the bins on its own ("histogram.count")
// and adds the counts in a tree; without a range, a tree of min/max ops
// finds the data's range first. Bincount counts each chunk and adds them the
// same way. Percentile and median sort the input with the sorting network
// (see sort.go) and read the few elements they need from the blocks that
// hold them: the total length is known when the graph is tiled, so which
// block holds the element of rank r is known too.
//
// Unique (unique.go) is not here: its length depends on the data, so it
// tiles in stages (stage.go); so does bincount, whose length is
// max(minlength, max+1): once a first stage has found it, the tile rule here
// counts with that length.

// HistArgs are the arguments of the histogram kernels.
type HistArgs struct {
	Bins    int
	Range   []float64    // the bins' outer edges, nil when an input holds them
	Combine bool         // "histogram.minmax": the inputs are partial (min, max) pairs
	Edges   tensor.DType // the edges' dtype
}

// BincountArgs are the arguments of "bincount".
type BincountArgs struct{ Minlength int }

// PercentileArgs are the arguments of "percentile": the input blocks of the
// sorted data start at Starts; N is its length.
type PercentileArgs struct {
	Q      []float64
	N      int
	Starts []int
	Median bool
	// SkipNaN takes the percentiles of each row's numbers, its NaNs (last,
	// sorted) left out: the op reads every block of its rows.
	SkipNaN bool
	// Method is NumPy's method= (tensor.QuantileIndexes; "" for linear).
	Method string
}

// Unique and bincount make results whose length the data decides, so they
// tile in two stages (see stage.go).
//
// Unique sorts and deduplicates each chunk on its own ("unique.map") into
// (key, count) pairs, the key the value's sort key (see sortKey), and merges
// the sorted pairs of up to statsCombine chunks at a time in a tree
// ("unique.merge"), adding the counts where keys meet, so that no op reads
// more than a few partial results and none gathers the input. The root's
// length is the probe; "unique.values" and "unique.counts" read the root
// into the values and the counts, which the next stage reads as stored
// chunks of that length. Values come back from their keys: -0 equals +0
// (and comes out +0), and all NaNs are one value, sorted last, as NumPy's
// unique (equal_nan=True) does.
//
// Bincount's length is max(minlength, max(x)+1): a tree of "bincount.len"
// ops finds it, and the next stage counts each chunk with that length and
// adds the counts, as a bincount with minlength does.

// UniqueArgs are the arguments of the unique kernels, whose chunks' lengths
// depend on the data: the op's shape bounds them.
type UniqueArgs struct{}

func (UniqueArgs) boundsLen() {}

// LengthBound marks the arguments of ops whose chunk length (along the
// first axis) the data decides, up to the op's shape.
type LengthBound interface{ boundsLen() }

// BincountLenArgs are the arguments of "bincount.len".
type BincountLenArgs struct {
	Minlength int
	Combine   bool // the inputs are partial lengths
}

// NPYArgs are the arguments of a "from_npy" op: its chunk is the block of
// a .npy file at Offset (in the file's array), read by the worker from the
// file at Path in its data directory. DataOffset is where the file's data
// start; FileShape, Fortran and BigEndian are its header's.
type NPYArgs struct {
	Path       string
	DataOffset int64
	FileShape  []int
	Fortran    bool
	BigEndian  bool
	Offset     []int
	Owner      Owner // whose rights the file is read with
}

// The ops that write a .npy file (to_npy) make no data of their own: each
// makes a 0-d bool, and the graph's chunk output for the file, named by
// SinkName, is the commit op's, which the runtime does not keep.
//
//   - "to_npy.create" makes the file under a temporary name, of its whole
//     size;
//   - "to_npy.write" (inputs: a chunk and the create op) writes its chunk
//     at its place;
//   - "to_npy.commit" (inputs: every write) writes the header, then
//     renames the file into place: a failed or cancelled graph leaves no
//     file that looks complete.
type NPYWriteArgs struct {
	Path       string // the file, relative to the data directory
	Temp       string // its name while it is written
	Overwrite  bool   // replace an existing file
	DataOffset int64  // the header's length
	DType      tensor.DType
	FileShape  []int
	Offset     []int // write: the chunk's place
	Owner      Owner // whose rights the file is written with
}

// sinkPrefix starts the names of the chunk outputs of sinks: no tensor
// name has a colon.
const sinkPrefix = "to_file:"

// SinkName is the name of the chunk output of the sink writing path.
func SinkName(path string) string { return sinkPrefix + path }

// IsSink reports whether a chunk output's name is a sink's.
func IsSink(name string) bool { return strings.HasPrefix(name, sinkPrefix) }

// ZarrArgs are the arguments of a "from_zarr" op: its chunk is the block
// of the Zarr array at Path (its directory, in the data directory) at
// Offset, which the worker assembles from the store chunks that overlap
// it, each read and decoded by itself.
type ZarrArgs struct {
	Path   string
	Array  ZarrArray
	Offset []int
	Owner  Owner // whose rights the store is read with
}

// The ops that write a Zarr array (to_zarr) make no data of their own,
// as to_npy's: each makes a 0-d bool, and the graph's output for the
// array, named by SinkName, is the commit op's.
//
//   - "to_zarr.create" makes the array's directory under a temporary name;
//   - "to_zarr.write" (inputs: the tensor chunks that overlap one store
//     chunk, then the create op) assembles and encodes that store chunk
//     and writes its file: no two ops write one store chunk;
//   - "to_zarr.commit" (inputs: every write) writes the metadata into the
//     directory (a temporary file renamed), then renames the directory
//     into place: a failed or cancelled graph leaves no array that looks
//     complete.
//
// An array inside a group (a path under a directory named NAME.zarr, as
// xarray's datasets are) is a dataset's variable: the create op makes the
// groups on the path that are missing, the commit op writes the array's
// .zattrs (Dims as xarray's _ARRAY_DIMENSIONS, and Attrs) with its
// metadata, and, once the array is in place, the group's consolidated
// .zmetadata anew.
type ZarrWriteArgs struct {
	Path      string // the array's directory, relative to the data directory
	Temp      string // its name while it is written
	Overwrite bool   // replace what is at Path
	Array     ZarrArray
	Index     []int    // write: the store chunk's grid index
	Offsets   [][]int  // write: each input chunk's offset in the array
	Owner     Owner    // whose rights the store is written with
	Dims      []string // the dimensions' names (nil: none written)
	Attrs     string   // the attributes, a JSON object ("": none)
}

// An Owner is the user whose rights a file op acts with: the uid, gid and
// supplementary groups of the session's owner, as its scheduler found
// them in its user database. The zero Owner is no user (an identity with
// no local account): a worker opens no file for it.
type Owner struct {
	Known  bool
	UID    uint32
	GID    uint32
	Groups []uint32
}

// String names o in messages.
func (o Owner) String() string {
	if !o.Known {
		return "no local user"
	}
	return fmt.Sprintf("uid %d gid %d", o.UID, o.GID)
}
