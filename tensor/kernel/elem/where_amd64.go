package elem

import "golang.org/x/sys/cpu"

// useWhereAVX2 selects the vector loops of where_amd64.s.
var useWhereAVX2 = cpu.X86.HasAVX2

//go:noescape
func where1AVX2(d, c, x, y []byte, n int)

//go:noescape
func where4AVX2(d, c, x, y []byte, n int)

//go:noescape
func where8AVX2(d, c, x, y []byte, n int)

// whereWide sets the leading elements of d it can, w bytes each, to x's
// where c is nonzero and to y's elsewhere, many at a time, and returns how
// many. The slices are as whereRow checked them: c of n elements, d, x
// and y of n*w bytes.
func whereWide(w int, d, c, x, y []byte) int {
	if !useWhereAVX2 {
		return 0
	}
	var n int
	switch w {
	case 1:
		n = len(c) &^ 31
		if n > 0 {
			where1AVX2(d, c, x, y, n)
		}
	case 4:
		n = len(c) &^ 15
		if n > 0 {
			where4AVX2(d, c, x, y, n)
		}
	case 8:
		n = len(c) &^ 7
		if n > 0 {
			where8AVX2(d, c, x, y, n)
		}
	}
	return n
}
