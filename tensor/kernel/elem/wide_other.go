//go:build !amd64

package elem

// useWideAVX2 is never set here: wide.go's scalar loops take every
// column.
var useWideAVX2 = false

func addWideF32AVX2(acc *float64, rows **float32, k, n int) {}

func sqDevWideF32AVX2(m2, mean *float64, rows **float32, k, n int) {}
