package tensortest

import (
	"context"
	"errors"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// FuzzParseTile checks the contract between the parser and the tile rules
// and kernels: every small graph Parse accepts tiles and computes.
func FuzzParseTile(f *testing.F) {
	for _, tc := range e2eCases {
		f.Add(tc.src)
	}
	for _, tc := range catalogueSpecs {
		f.Add(tc.src)
	}
	for _, src := range numpySeeds {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := lang.ParseText(src, nil)
		if err != nil {
			return
		}
		for _, n := range g.Nodes {
			if tensor.NumElements(n.Shape) > 4096 {
				return
			}
			for _, cs := range n.Chunks {
				if len(cs) > 64 {
					return
				}
			}
		}
		// The first stage tiles now; later ones (masks, unique), whose
		// lengths the data decides, as ComputeGraph reaches them.
		s, err := tile.Stages(g, nil)
		if err != nil {
			t.Fatalf("%q: parsed but does not tile: %v", src, err)
		}
		if len(s.Graph.Ops) > 20000 {
			return
		}
		// A kernel's refusal of the data (an SVD of NaNs, as LAPACK's in
		// NumPy), or shapes that the data's lengths make disagree, are
		// answers, not a broken contract.
		if _, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, nil); err != nil && !errors.Is(err, kernel.ErrKernel) && !errors.Is(err, tile.ErrDataShape) {
			t.Fatalf("%q: parsed and tiled but does not compute: %v", src, err)
		}
	})
}
