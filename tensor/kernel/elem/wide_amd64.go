package elem

import "golang.org/x/sys/cpu"

// useWideAVX2 selects the vector loops of wide_amd64.s; the tests turn it
// off to check them against the scalar ones.
var useWideAVX2 = cpu.X86.HasAVX2

// addWideF32AVX2 does AddWideRows' first n columns (a multiple of 16) of
// the k rows whose starts are rows[0..k-1].
//
//go:noescape
func addWideF32AVX2(acc *float64, rows **float32, k, n int)

// sqDevWideF32AVX2 does AddSqDevWideRows' first n columns (a multiple of
// 16).
//
//go:noescape
func sqDevWideF32AVX2(m2, mean *float64, rows **float32, k, n int)
