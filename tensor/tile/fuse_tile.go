package tile

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec"
)

// tiled is the grid of node n of the expression, which no op makes: it
// has no keys.
func (cf *columnFuser) tiled(n *spec.Node) *tensor.TiledTensor {
	tt := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: n.Chunks}
	if slices.Equal(n.Shape, cf.nodes[len(cf.nodes)-1].Shape) {
		tt.Chunks = cf.chunks
	}
	return tt
}
