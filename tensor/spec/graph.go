package spec

import (
	"errors"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/codec/zarr"
)

// An Env holds the tensors a session already has, by name, with global
// chunk IDs as their Keys: a snapshot the session takes when a spec comes
// in, which the parser and the tiler read without ever calling back into
// the session. A nil Env has no tensors.
type Env map[string]*tensor.TiledTensor

// Lookup returns the tensor called name, or false if there is none.
func (e Env) Lookup(name string) (*tensor.TiledTensor, bool) {
	t, ok := e[name]
	return t, ok
}

// A Graph is a parsed spec: whole-tensor (tileable) operations with their
// shapes, dtypes and chunkings inferred, and the names the spec outputs.
//
// Graphs are built by Parse (the text form) and ParseJSON (the JSON form) and
// cut into chunk operands by Tile.
type Graph struct {
	// Nodes in topological order: every node's inputs come before it.
	Nodes []*Node
	// Outputs are the fetched names in the order the spec lists them.
	Outputs []Output
	// Sinks are the files the graph writes (to_npy), in the spec's order.
	Sinks []Sink
	// Drops are the session's tensors the spec deletes (del a, b): the
	// graph drops them when it succeeds, as rm -r tensors/a does.
	Drops []string
	// Source is the spec's text as submitted.
	Source string
}

// A Sink is a file a graph writes: the tensor Node, as Format ("npy",
// "zarr"), at
// Path in the data directory. Without Overwrite an existing file is not
// replaced.
type Sink struct {
	Format    string
	Path      string
	Overwrite bool
	Node      *Node
	// Format "zarr": the compressor ("zstd", "blosc", "zlib", "" for
	// none) and the Zarr format (2 or 3).
	Compressor string
	ZarrFormat int
	// Format "zarr": the names of the array's dimensions (xarray's
	// _ARRAY_DIMENSIONS; nil for none) and its attributes, a JSON object
	// ("" for none).
	Dims  []string
	Attrs string
}

// Output names one fetched tensor of a graph.
type Output struct {
	Name string
	Node *Node
}

// A Node is one whole-tensor operation. The parser lowers the spec language's
// conveniences (clip, stack, outer, tensordot, squeeze, .T, linalg.norm, ...)
// onto this smaller set of ops, so that tiling has one rule per Op.
type Node struct {
	ID     int    // index in Graph.Nodes
	Op     string // one of the Op* constants
	Inputs []*Node
	Shape  []int
	DType  tensor.DType
	// Chunks holds the chunk sizes along each axis (like Dask's chunks); the
	// last chunk along an axis may be smaller than the others (ragged). The
	// parser sets it on creation ops (from chunks= or the default chunking),
	// OpScalar (no axes), OpInput (the stored tensor's) and OpRechunk (the
	// target); every other op leaves it nil and its tile rule chooses.
	Chunks [][]int
	// Weak marks a Python scalar literal: in dtype promotion it yields to an
	// array operand of the same kind (NumPy's value-based casting for
	// scalars: float32 array * 2.0 stays float32).
	Weak bool
	// Attrs are the op's parameters; which fields matter depends on Op.
	Attrs Attrs
}

// Attrs are the parameters of a Node. Each op documents the fields it uses
// next to its constant; the rest stay zero.
type Attrs struct {
	Value    float64        // OpFull, OpScalar: the fill value (IntValue for int dtypes)
	IntValue int64          // OpFull, OpScalar with an integer or bool dtype
	Start    float64        // OpArange, OpLinspace: first value; OpUniform: low; OpNormal: loc
	Step     float64        // OpArange, OpLinspace: spacing; OpUniform: high; OpNormal: scale
	Low      int64          // OpRandint: low (inclusive)
	High     int64          // OpRandint: high (exclusive)
	K        int            // OpEye: diagonal offset
	Seed     uint64         // random generators
	Axes     []int          // reductions: sorted axes (nil for all); OpCumsum/OpCumprod/OpConcat: Axes[0]
	Keepdims bool           // reductions
	Ddof     int            // OpVar, OpStd
	Decimals int            // OpRound
	Perm     []int          // OpTranspose
	Slices   []tensor.Slice // OpSlice: one per input axis, normalized (0 <= Start, Step != 0)
	Name     string         // OpInput: the session tensor's name
	Path     string         // OpFromNPY: the file, relative to the data directory, slash-separated

	// OpFromNPY: where the data start in the file, and how they are laid
	// out (read from its header when the spec is parsed).
	FileOffset int64
	Fortran    bool
	BigEndian  bool

	// OpFromZarr: the array's metadata, read when the spec is parsed.
	Zarr *zarr.Array

	Bins      int       // OpHistogram, OpHistEdges: the number of bins
	Range     []float64 // OpHistogram, OpHistEdges: [low, high]; nil for the data's min and max
	Minlength int       // OpBincount: the least output length
	Q         []float64 // OpPercentile: the percentiles, in [0, 100]
	SkipNaN   bool      // OpPercentile, OpMedian: of the numbers of each row, NaNs left out (nanpercentile, nanmedian)
	Data      []byte    // OpArray: the literal's little-endian C-order bytes
	Groups    int       // OpGroupBy: the number of groups (labels 0 .. Groups-1)
	Func      string    // OpGroupBy: the reduction (sum, mean, count, min, max, var, std, prod); OpPercentile: NumPy's method= ("" for linear)

	// Pending holds, for an OpSlice of an input whose shape the data decides,
	// the index as written, one entry an axis; Slices is resolved from it
	// once the lengths are known (see stage.go).
	Pending []PendingSlice
}

// A PendingSlice is one axis of an index on an array whose shape is not
// known yet, as written: lo:hi:step (each may be absent) or an integer.
// The zero PendingSlice is the whole axis.
type PendingSlice struct {
	Lo, Hi, Step          int
	HasLo, HasHi, HasStep bool
	Int                   bool // an integer index, Lo
}

// resolve resolves the index p against an axis of length l.
func (p PendingSlice) resolve(l, ax int) (tensor.Slice, error) {
	switch {
	case p.Int:
		i := p.Lo
		if i < 0 {
			i += l
		}
		if i < 0 || i >= l {
			return tensor.Slice{}, fmt.Errorf("index %d is out of bounds for axis %d with size %d", p.Lo, ax, l)
		}
		return tensor.Slice{Start: i, Step: 1, Len: 1}, nil
	}
	return SliceIndices(p.Lo, p.Hi, p.Step, p.HasLo, p.HasHi, p.HasStep, l), nil
}

// Check verifies the invariants every graph a parser makes keeps: nodes in
// topological order with IDs their indexes, chunks only on the ops that are
// given them, and every node inferring again to its shape and dtype.
func (g *Graph) Check() error {
	var errs []error
	for i, n := range g.Nodes {
		if n.ID != i {
			errs = append(errs, fmt.Errorf("node %d has ID %d", i, n.ID))
		}
		for _, in := range n.Inputs {
			if in.ID >= i || g.Nodes[in.ID] != in {
				errs = append(errs, fmt.Errorf("node %d has input %d out of order", i, in.ID))
			}
		}
		if givenChunks(n.Op) != (n.Chunks != nil) {
			errs = append(errs, fmt.Errorf("node %d (%s) has chunks %v", i, n.Op, n.Chunks))
		}
		if n.Chunks != nil {
			if err := checkChunks(n.Shape, n.Chunks); err != nil {
				errs = append(errs, fmt.Errorf("node %d: %w", i, err))
			}
		}
		if n.Weak && n.Op != tensor.OpScalar {
			errs = append(errs, fmt.Errorf("node %d (%s) is weak", i, n.Op))
		}
		again := *n
		if !givenShape(n.Op) {
			again.Shape = nil
		}
		if !givenDType(n.Op) {
			again.DType = 0
		}
		if err := infer(&again); err != nil {
			errs = append(errs, fmt.Errorf("node %d (%s) does not infer again: %w", i, n.Op, err))
		} else if !slices.Equal(again.Shape, n.Shape) || again.DType != n.DType {
			errs = append(errs, fmt.Errorf("node %d infers again to %s %s, not %s %s", i, ShapeString(again.Shape), again.DType, ShapeString(n.Shape), n.DType))
		}
	}
	if len(g.Outputs) == 0 && len(g.Sinks) == 0 && len(g.Drops) == 0 {
		errs = append(errs, fmt.Errorf("no outputs"))
	}
	return errors.Join(errs...)
}
