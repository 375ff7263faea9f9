package elem

import "golang.org/x/sys/cpu"

var useExtremeAVX2 = cpu.X86.HasAVX2

//go:noescape
func maxF64AVX2(row []float64, n int, lanes *[16]float64) bool

//go:noescape
func minF64AVX2(row []float64, n int, lanes *[16]float64) bool

// extremeWide folds the leading elements of row it can, sixteen at a
// time, into acc with max (or min when isMin), by Go's rules, and returns
// the result and how many elements it took.
func extremeWide(acc float64, row []float64, isMin bool) (float64, int) {
	n := len(row) &^ 15
	if !useExtremeAVX2 || n == 0 || acc != acc {
		return acc, 0
	}
	var lanes [16]float64
	for i := range lanes {
		lanes[i] = acc
	}
	var nan bool
	if isMin {
		nan = minF64AVX2(row, n, &lanes)
	} else {
		nan = maxF64AVX2(row, n, &lanes)
	}
	if nan {
		return nanOf(row[:n]), n
	}
	for _, v := range lanes {
		if isMin {
			acc = min(acc, v)
		} else {
			acc = max(acc, v)
		}
	}
	return acc, n
}

// nanOf is the first NaN of row, which has one: the one a scalar fold
// would have kept.
func nanOf(row []float64) float64 {
	for _, v := range row {
		if v != v {
			return v
		}
	}
	return row[0]
}

//go:noescape
func maxPairF64AVX2(acc, row []float64, n int)

//go:noescape
func minPairF64AVX2(acc, row []float64, n int)

// extremePairWide sets the leading elements of acc it can, four at a
// time, to the max (or min) of themselves and row's, by Go's rules, and
// returns how many.
func extremePairWide(acc, row []float64, isMin bool) int {
	n := min(len(acc), len(row)) &^ 3
	if !useExtremeAVX2 || n == 0 {
		return 0
	}
	if isMin {
		minPairF64AVX2(acc, row, n)
	} else {
		maxPairF64AVX2(acc, row, n)
	}
	return n
}

//go:noescape
func maxF32AVX2(row []float32, n int, lanes *[32]float32) bool

//go:noescape
func minF32AVX2(row []float32, n int, lanes *[32]float32) bool

//go:noescape
func maxPairF32AVX2(acc, row []float32, n int)

//go:noescape
func minPairF32AVX2(acc, row []float32, n int)

// extremeWide32 is extremeWide for float32, 32 values at a time.
func extremeWide32(acc float32, row []float32, isMin bool) (float32, int) {
	n := len(row) &^ 31
	if !useExtremeAVX2 || n == 0 || acc != acc {
		return acc, 0
	}
	var lanes [32]float32
	for i := range lanes {
		lanes[i] = acc
	}
	var nan bool
	if isMin {
		nan = minF32AVX2(row, n, &lanes)
	} else {
		nan = maxF32AVX2(row, n, &lanes)
	}
	if nan {
		for _, v := range row[:n] {
			if v != v {
				return v, n
			}
		}
	}
	for _, v := range lanes {
		if isMin {
			acc = min(acc, v)
		} else {
			acc = max(acc, v)
		}
	}
	return acc, n
}

// extremePairWide32 is extremePairWide for float32, 8 at a time.
func extremePairWide32(acc, row []float32, isMin bool) int {
	n := min(len(acc), len(row)) &^ 7
	if !useExtremeAVX2 || n == 0 {
		return 0
	}
	if isMin {
		minPairF32AVX2(acc, row, n)
	} else {
		maxPairF32AVX2(acc, row, n)
	}
	return n
}
