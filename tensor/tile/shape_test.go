package tile

import (
	"slices"
	"testing"
)

func TestRefineChunks(t *testing.T) {
	for _, tc := range []struct {
		in   [][]int
		want []int
	}{
		{[][]int{{3, 4}, {2, 2, 3}}, []int{2, 1, 1, 3}},
		{[][]int{{7}, {7}}, []int{7}},
		{[][]int{{0}, {0}}, []int{0}},
		{[][]int{{2, 0, 3}, {5}}, []int{2, 3}},
	} {
		if got := refineChunks(tc.in...); !slices.Equal(got, tc.want) {
			t.Errorf("refineChunks%v = %v, want %v", tc.in, got, tc.want)
		}
	}
}
