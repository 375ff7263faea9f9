package tile

import (
	"errors"
	"runtime"
	"slices"
	"testing"

	"marsfs/tensor/spec/lang"
)

func TestMatmulGroups(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want []int
	}{
		{0, []int{0, 0}},
		{1, []int{0, 1}},
		{4, []int{0, 4}},
		{5, []int{0, 2, 5}},
		{9, []int{0, 3, 6, 9}},
		{17, []int{0, 3, 6, 10, 13, 17}},
	} {
		if got := matmulGroups(tc.k, MatmulCombine); !slices.Equal(got, tc.want) {
			t.Errorf("matmulGroups(%d) = %v, want %v", tc.k, got, tc.want)
		}
	}
}

func TestOutputBlocks(t *testing.T) {
	for _, tc := range []struct {
		rows, cols         []int
		limit              int
		wantRows, wantCols []int
	}{
		// Blocks within the limit are kept, uneven chunks too.
		{[]int{4, 4, 2}, []int{4}, 16, []int{4, 4, 2}, []int{4}},
		// x.T @ x with x in bands: one 10 x 10 block is cut to 3 x 5.
		{[]int{10}, []int{10}, 16, []int{2, 3, 2, 3}, []int{5, 5}},
		// Only the chunks longer than the side found are cut.
		{[]int{8, 2}, []int{2}, 8, []int{4, 4, 2}, []int{2}},
		// A long thin output keeps its one row.
		{[]int{1}, []int{100}, 10, []int{1}, []int{10, 10, 10, 10, 10, 10, 10, 10, 10, 10}},
		// Empty axes stay empty.
		{[]int{0}, []int{7}, 4, []int{0}, []int{3, 4}},
	} {
		r, c := outputBlocks(tc.rows, tc.cols, tc.limit)
		if !slices.Equal(r, tc.wantRows) || !slices.Equal(c, tc.wantCols) {
			t.Errorf("outputBlocks(%v, %v, %d) = %v, %v; want %v, %v", tc.rows, tc.cols, tc.limit, r, c, tc.wantRows, tc.wantCols)
		}
	}
}

func TestMatmulGroupSize(t *testing.T) {
	for _, tc := range []struct{ m, n, k, want int }{
		{1000, 1000, 1000, MatmulCombine}, // square blocks
		{1250, 2500, 417, 11},             // x.T @ x, x in bands of 417 rows
		{100, 100, 40000, MatmulCombine},  // a thin output, long k chunks
		{0, 0, 0, MatmulCombine},
	} {
		if got := matmulGroupSize(tc.m, tc.n, tc.k); got != tc.want {
			t.Errorf("matmulGroupSize(%d, %d, %d) = %d, want %d", tc.m, tc.n, tc.k, got, tc.want)
		}
	}
}

// TestMaxOps tiles a product whose operands' chunks do not align, which
// would cut them into 10^8 pieces: with a bound the tiling stops at it
// with ErrTooManyOps, having made no more ops than that.
func TestMaxOps(t *testing.T) {
	g, err := lang.Parse("a = ones((200000, 200000))\nb = a @ a\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = StagesWith(g, nil, Options{MaxOps: 100000})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooManyOps) {
		t.Fatalf("tiling 10^8 ops under a bound of 10^5: %v", err)
	}
	t.Log(err)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 200<<20 {
		t.Errorf("the stopped tiling allocated %d MiB", grew>>20)
	}
	// Within the bound, the same spec with aligned chunks tiles.
	g, err = lang.Parse("a = ones((2000, 2000), chunks=500)\nb = a @ a\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StagesWith(g, nil, Options{MaxOps: 100000}); err != nil {
		t.Fatal(err)
	}
}
