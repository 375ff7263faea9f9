package tile

import (
	"fmt"
	"testing"

	"marsfs/tensor/chunk"
	"marsfs/tensor/spec/lang"
)

// TestRechunkShuffle checks how a rechunk between strips reads its
// source chunks: column strips to row strips read one run of every
// column strip (a Range) and no split; row strips to column strips split
// every row strip once and read runs of the splits; in both, no op reads
// more bytes than its chunk holds.
func TestRechunkShuffle(t *testing.T) {
	const n, p = 60, 6
	for _, tc := range []struct {
		from, to string
		splits   int
	}{
		{fmt.Sprintf("(%d, %d)", n, n/p), fmt.Sprintf("(%d, %d)", n/p, n), 0},
		{fmt.Sprintf("(%d, %d)", n/p, n), fmt.Sprintf("(%d, %d)", n, n/p), p},
	} {
		src := fmt.Sprintf("x = ones((%d, %d), chunks=%s) * 2\ny = x.rechunk(%s)\n", n, n, tc.from, tc.to)
		g, err := lang.ParseText(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		cg, err := Graph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[chunk.Kind]int{}
		for _, op := range cg.Ops {
			kinds[op.Kind]++
			if op.Kind != chunk.KindAssemble {
				continue
			}
			read := int64(0)
			for i, in := range op.Inputs {
				read += op.InputBytes(i, int64(cg.Ops[in].NBytes()))
			}
			if read != int64(op.NBytes()) || op.Ranges == nil {
				t.Errorf("%s to %s: assemble op %d reads %d bytes (ranges %v) for a chunk of %d", tc.from, tc.to, op.Key, read, op.RangeList(), op.NBytes())
			}
			for i, in := range op.Inputs {
				if op.InputRange(i).Whole() {
					t.Errorf("op %d reads chunk %d whole", op.Key, in)
				}
				if k := cg.Ops[in].Kind; tc.splits > 0 && k != "rechunk.split" {
					t.Errorf("op %d reads a %s, not a split", op.Key, k)
				}
			}
		}
		if kinds["assemble"] != p || kinds["rechunk.split"] != tc.splits {
			t.Errorf("%s to %s: %d assembles and %d splits, want %d and %d", tc.from, tc.to, kinds["assemble"], kinds["rechunk.split"], p, tc.splits)
		}
	}
}
