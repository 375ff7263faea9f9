//go:build !amd64

package elem

// whereWide has no vector loops here: whereRow does every element.
func whereWide(w int, d, c, x, y []byte) int { return 0 }

// useWhereAVX2 is never set here; the tests read it.
var useWhereAVX2 = false
