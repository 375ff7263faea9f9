package tensor

import "math"

// VisitIndices calls f with every index of shape in C order, holding the
// axes in skip at 0. f must not keep idx.
func VisitIndices(shape, skip []int, f func(idx []int)) {
	nd := len(shape)
	idx := make([]int, nd)
	free := make([]int, 0, nd)
	for ax := 0; ax < nd; ax++ {
		skipped := false
		for _, s := range skip {
			skipped = skipped || s == ax
		}
		if !skipped {
			if shape[ax] == 0 {
				return
			}
			free = append(free, ax)
		}
	}
	for {
		f(idx)
		i := len(free) - 1
		for ; i >= 0; i-- {
			ax := free[i]
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if i < 0 {
			return
		}
	}
}

// PercentileIndexes returns the ranks NumPy's linear method interpolates
// between for percentile q of n sorted values, and the weight of the upper.
func PercentileIndexes(q float64, n int) (int, int, float64) {
	qq := q / 100
	v := float64(n)*qq + (1 + qq*(1-1-1)) - 1
	if v >= float64(n-1) {
		// NumPy takes the last element twice, with index -1 in the weight.
		return n - 1, n - 1, v + 1
	}
	if v < 0 {
		return 0, 0, v
	}
	lo := math.Floor(v)
	return int(lo), int(lo) + 1, v - lo
}
