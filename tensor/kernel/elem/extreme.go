package elem

import "unsafe"

// The vector folds of max and min over float rows (extreme_amd64.s) keep
// 128 bytes of running values, four registers: 16 float64 or 32 float32.
// What they do not take, the scalar loops of monoid.go do.
const laneBytes = 128

// extremeWide folds the leading elements of row it can, a register's worth
// at a time, into acc with max (or min when isMin), by Go's rules, and
// returns the result and how many elements it took.
func extremeWide[T float32 | float64](acc T, row []T, isMin bool) (T, int) {
	lanes := int(laneBytes / unsafe.Sizeof(acc))
	n := len(row) &^ (lanes - 1)
	if !useExtremeAVX2 || n == 0 || acc != acc {
		return acc, 0
	}
	var run [laneBytes / 4]T // lanes of them used
	for i := range lanes {
		run[i] = acc
	}
	if foldWide(row[:n], &run, isMin) {
		return nanOf(row[:n]), n
	}
	for _, v := range run[:lanes] {
		if isMin {
			acc = min(acc, v)
		} else {
			acc = max(acc, v)
		}
	}
	return acc, n
}

// extremePairWide sets the leading elements of acc it can, a register's
// worth at a time, to the max (or min) of themselves and row's, by Go's
// rules, and returns how many.
func extremePairWide[T float32 | float64](acc, row []T, isMin bool) int {
	var zero T
	n := min(len(acc), len(row)) &^ int(32/unsafe.Sizeof(zero)-1)
	if !useExtremeAVX2 || n == 0 {
		return 0
	}
	pairWide(acc[:n], row[:n], isMin)
	return n
}

// nanOf is the first NaN of row, which has one: the one a scalar fold
// would have kept.
func nanOf[T float32 | float64](row []T) T {
	for _, v := range row {
		if v != v {
			return v
		}
	}
	return row[0]
}
