package tensortest

import (
	"context"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/spec"
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
	f.Fuzz(func(t *testing.T, src string) {
		g, err := spec.ParseText(src, nil)
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
		cg, err := tile.Graph(g, nil)
		if err != nil {
			t.Fatalf("%q: parsed but does not tile: %v", src, err)
		}
		if len(cg.Ops) > 20000 {
			return
		}
		if _, err := Compute(context.Background(), cg, nil); err != nil {
			t.Fatalf("%q: parsed and tiled but does not compute: %v", src, err)
		}
	})
}
