package tensortest

import (
	"context"
	"fmt"
	"math"
	"testing"

	"marsfs/tensor/fuse"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// BenchmarkSortBlocks sorts 4·10⁶ float64 cut into p blocks in this process
// by the merge-split network and by the sample sort (no transfers: what it
// measures is the work and the ops, not the network a cluster would add).
func BenchmarkSortBlocks(b *testing.B) {
	const n = 4_000_000
	defer func(old int) { tile.SampleSortMin = old }(tile.SampleSortMin)
	for _, c := range []struct {
		name string
		min  int
		p    []int
	}{{"network", math.MaxInt, []int{2, 4, 8, 16, 64}}, {"sample", 2, []int{4, 8, 16, 64}}} {
		for _, p := range c.p {
			b.Run(fmt.Sprintf("%s/p=%d", c.name, p), func(b *testing.B) {
				tile.SampleSortMin = c.min
				src := fmt.Sprintf("x = rand(%d, chunks=%d, seed=1)\ny = sort(x)\n", n, n/p)
				for range b.N {
					g, err := lang.ParseText(src, nil)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(8 * n)
			})
		}
	}
}
