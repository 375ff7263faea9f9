//go:build !amd64

package elem

// extremeWide has no vector loops here: the fold takes every element.
func extremeWide(acc float64, row []float64, isMin bool) (float64, int) { return acc, 0 }

// extremePairWide has no vector loops here: the caller takes every element.
func extremePairWide(acc, row []float64, isMin bool) int { return 0 }
