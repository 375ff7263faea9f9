package tile

import (
	"slices"
	"testing"
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
		if got := matmulGroups(tc.k); !slices.Equal(got, tc.want) {
			t.Errorf("matmulGroups(%d) = %v, want %v", tc.k, got, tc.want)
		}
	}
}
