package elem

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

var useExtremeAVX2 = cpu.X86.HasAVX2

//go:noescape
func maxF64AVX2(row []float64, n int, lanes *[16]float64) bool

//go:noescape
func minF64AVX2(row []float64, n int, lanes *[16]float64) bool

//go:noescape
func maxF32AVX2(row []float32, n int, lanes *[32]float32) bool

//go:noescape
func minF32AVX2(row []float32, n int, lanes *[32]float32) bool

//go:noescape
func maxPairF64AVX2(acc, row []float64, n int)

//go:noescape
func minPairF64AVX2(acc, row []float64, n int)

//go:noescape
func maxPairF32AVX2(acc, row []float32, n int)

//go:noescape
func minPairF32AVX2(acc, row []float32, n int)

// foldWide folds all of row (a whole number of rounds) into the running
// values in run, and reports whether it met a NaN.
func foldWide[T float32 | float64](row []T, run *[laneBytes / 4]T, isMin bool) bool {
	switch r := any(row).(type) {
	case []float64:
		l := (*[16]float64)(unsafe.Pointer(run))
		if isMin {
			return minF64AVX2(r, len(r), l)
		}
		return maxF64AVX2(r, len(r), l)
	case []float32:
		l := (*[32]float32)(unsafe.Pointer(run))
		if isMin {
			return minF32AVX2(r, len(r), l)
		}
		return maxF32AVX2(r, len(r), l)
	}
	return false
}

// pairWide sets acc[i] to the max (or min) of acc[i] and row[i], for all
// of acc (a whole number of registers).
func pairWide[T float32 | float64](acc, row []T, isMin bool) {
	switch a := any(acc).(type) {
	case []float64:
		if isMin {
			minPairF64AVX2(a, any(row).([]float64), len(a))
		} else {
			maxPairF64AVX2(a, any(row).([]float64), len(a))
		}
	case []float32:
		if isMin {
			minPairF32AVX2(a, any(row).([]float32), len(a))
		} else {
			maxPairF32AVX2(a, any(row).([]float32), len(a))
		}
	}
}
