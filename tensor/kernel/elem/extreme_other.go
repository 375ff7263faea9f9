//go:build !amd64

package elem

// extremeWide has no vector loops here: the fold takes every element.
func extremeWide(acc float64, row []float64, isMin bool) (float64, int) { return acc, 0 }

// extremePairWide has no vector loops here: the caller takes every element.
func extremePairWide(acc, row []float64, isMin bool) int { return 0 }

func extremeWide32(acc float32, row []float32, isMin bool) (float32, int) { return acc, 0 }

func extremePairWide32(acc, row []float32, isMin bool) int { return 0 }

// useExtremeAVX2 is never set here; the tests read it.
var useExtremeAVX2 = false
