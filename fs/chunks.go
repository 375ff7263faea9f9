package fs

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/tensor"
)

// chunksDir is /sessions/<N>/tensors/<name>/chunks: a directory a chunk,
// named by its grid index ("1_0"), each with data (raw bytes) and meta.
func (s *Server) chunksDir(parent string, t *engine.Tensor) *node {
	dir := join(parent, "chunks")
	tt := t.Tiled()
	grid := tensor.GridShape(tt.Chunks)
	offs := tensor.ChunkOffsets(tt.Chunks)
	return dirNode(parent, "chunks", func(c *conn) ([]*node, error) {
		ents := make([]*node, len(tt.Keys))
		for k := range tt.Keys {
			ents[k] = s.chunkDir(dir, t, k, tensor.Unravel(k, grid), offs)
		}
		return ents, nil
	})
}

// chunkName names a chunk by its grid index; a 0-d tensor's one chunk is 0.
func chunkName(idx []int) string {
	if len(idx) == 0 {
		return "0"
	}
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, "_")
}

// chunkDir is chunk k of t, at grid index idx.
func (s *Server) chunkDir(parent string, t *engine.Tensor, k int, idx []int, offs [][]int) *node {
	name := chunkName(idx)
	dir := join(parent, name)
	tt := t.Tiled()
	shape, start := tensor.ChunkBox(tt.Chunks, offs, idx)
	nbytes := uint64(tensor.NumElements(shape) * tt.DType.Size())
	return dirNode(parent, name, func(c *conn) ([]*node, error) {
		return []*node{
			textFile(dir, "meta", func() (string, error) {
				worker := t.ChunkWorker(k)
				if worker == "" {
					worker = "-"
				}
				return fmt.Sprintf("index %s\nshape %s\noffset %s\ndtype %s\nnbytes %d\nid %d\nworker %s\n",
					tensor.FormatShape(idx), tensor.FormatShape(shape), tensor.FormatShape(start), tt.DType, nbytes, tt.Keys[k], worker), nil
			}),
			{name: "data", path: join(dir, "data"), perm: 0444,
				size: func() uint64 { return nbytes },
				open: func(c *conn, mode p9.OpenFlags) (handle, error) {
					if mode.Mode() != p9.ReadOnly {
						return nil, linux.EACCES
					}
					a, release, err := t.Chunk(c.ctx, k)
					if err != nil {
						return nil, linux.EIO
					}
					return &snapshot{r: bytes.NewReader(a.Data), keep: a, release: release}, nil
				}},
		}, nil
	})
}

// tuple renders ints as the tensor's meta file does: "(2,4)".
