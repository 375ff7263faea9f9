//go:build amd64 && !purego

package zarr

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useShuffleAVX2 says whether the CPU and the OS run the kernels of
// shuffle_amd64.s (AVX2, and the OS saving the YMM registers, which
// cpu.X86.HasAVX2 checks). The tests turn it off to check the vector
// paths against the loops of shuffle.go.
var useShuffleAVX2 = cpu.X86.HasAVX2

// The kernels move n elements (n a multiple of 32) between a block of
// elements at elems and byte planes at planes, plane j at planes +
// j*stride.
//
//go:noescape
func shuffle4AVX2(planes, elems unsafe.Pointer, n, stride int)

//go:noescape
func shuffle8AVX2(planes, elems unsafe.Pointer, n, stride int)

//go:noescape
func unshuffle4AVX2(elems, planes unsafe.Pointer, n, stride int)

//go:noescape
func unshuffle8AVX2(elems, planes unsafe.Pointer, n, stride int)

//go:noescape
func transpose8AVX2(b unsafe.Pointer, n int)

// transpose8Vector transposes the bit matrices of b's first words with
// the vector kernel and returns how many bytes it did (a multiple of 32).
func transpose8Vector(b []byte) int {
	m := len(b) &^ 31
	if !useShuffleAVX2 || m == 0 {
		return 0
	}
	transpose8AVX2(unsafe.Pointer(&b[0]), m)
	return m
}

// shuffleVector shuffles the first elements of src (n elements of
// typesize bytes) into dst's planes with a vector kernel, and returns
// how many it did (a multiple of 32, none where there is no kernel).
func shuffleVector(dst, src []byte, typesize, n int) int {
	m := n &^ 31
	if !useShuffleAVX2 || m == 0 {
		return 0
	}
	_ = dst[typesize*n-1]
	_ = src[typesize*n-1]
	switch typesize {
	case 4:
		shuffle4AVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), m, n)
	case 8:
		shuffle8AVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), m, n)
	default:
		return 0
	}
	return m
}

// unshuffleVector undoes shuffleVector.
func unshuffleVector(dst, src []byte, typesize, n int) int {
	m := n &^ 31
	if !useShuffleAVX2 || m == 0 {
		return 0
	}
	_ = dst[typesize*n-1]
	_ = src[typesize*n-1]
	switch typesize {
	case 4:
		unshuffle4AVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), m, n)
	case 8:
		unshuffle8AVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), m, n)
	default:
		return 0
	}
	return m
}

//go:noescape
func unshuffle4PlanesAVX2(elems, p0, p1, p2, p3 unsafe.Pointer, n int)

// unshufflePlanesVector interleaves the first elements of the four byte
// planes p (each at least n bytes) into dst's n float32-sized elements,
// and returns how many it did (a multiple of 32, none where there is no
// kernel).
func unshufflePlanesVector(dst []byte, p *[4][]byte, n int) int {
	m := n &^ 31
	if !useShuffleAVX2 || m == 0 {
		return 0
	}
	_ = dst[4*n-1]
	_, _, _, _ = p[0][n-1], p[1][n-1], p[2][n-1], p[3][n-1]
	unshuffle4PlanesAVX2(unsafe.Pointer(&dst[0]), unsafe.Pointer(&p[0][0]), unsafe.Pointer(&p[1][0]), unsafe.Pointer(&p[2][0]), unsafe.Pointer(&p[3][0]), m)
	return m
}
