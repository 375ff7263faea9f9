package tensor

// A ChunkGraph is a Graph cut into chunk operands by Tile. Every operand
// produces exactly one chunk; an operand's key is its index in Ops.
type ChunkGraph struct {
	// Ops in topological order: every op's inputs have smaller keys.
	Ops []*ChunkOp
	// Outputs are the graph's fetched tensors, as grids of chunk keys.
	Outputs []TiledTensor
}

// A ChunkOp is one operand: a kernel applied to the chunks of its inputs.
type ChunkOp struct {
	Key    int    // index in ChunkGraph.Ops
	Kind   string // the kernel, e.g. "rand", "add", "sum.map", "assemble"
	Inputs []int  // keys of the ops whose chunks the kernel reads, in order
	Shape  []int  // the output chunk's shape
	DType  DType  // the output chunk's dtype
	// Args are the kernel's parameters: a value of one of the argument types
	// the tensor package registers with encoding/gob, so an op can be sent to
	// a worker process as it is.
	Args any
	// Stored, when non-zero, marks an op that computes nothing: its chunk
	// already exists in the cluster under this global chunk ID (a tensor kept
	// by an earlier graph of the session). Stored ops have no inputs.
	Stored uint64
	// Node is the ID of the graph node this op was tiled from.
	Node int
}

// NBytes is the size of the op's output chunk.
func (op *ChunkOp) NBytes() int { return NumElements(op.Shape) * op.DType.Size() }

// A TiledTensor is a tensor as a grid of chunks.
type TiledTensor struct {
	Name   string
	Shape  []int
	DType  DType
	Chunks [][]int // chunk sizes along each axis
	// Keys holds one key a chunk, the chunk grid in C order: the chunk at
	// grid index (i, j) of a 2-D tensor is Keys[i*len(Chunks[1])+j].
	// In a ChunkGraph the keys are op keys; in a session they are global
	// chunk IDs.
	Keys []uint64
}

// Env tells the parser and the tiler about the tensors a session already
// holds, so that specs can name them.
type Env interface {
	// Lookup returns the session tensor called name, with global chunk IDs
	// as its Keys, or false if there is none.
	Lookup(name string) (*TiledTensor, bool)
}
