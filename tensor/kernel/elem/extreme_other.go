//go:build !amd64

package elem

// useExtremeAVX2 is never set here (the tests read it): monoid.go's
// scalar loops take every element.
var useExtremeAVX2 = false

func foldWide[T float32 | float64](row []T, run *[laneBytes / 4]T, isMin bool) bool { return false }

func pairWide[T float32 | float64](acc, row []T, isMin bool) {}
