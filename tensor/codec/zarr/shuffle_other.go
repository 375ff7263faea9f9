//go:build !amd64 || purego

package zarr

// useShuffleAVX2 is never set here (the tests read it): shuffle.go's
// loops move every element.
var useShuffleAVX2 = false

func shuffleVector(dst, src []byte, typesize, n int) int { return 0 }

func unshuffleVector(dst, src []byte, typesize, n int) int { return 0 }

func transpose8Vector(b []byte) int { return 0 }

func unshufflePlanesVector(dst []byte, p *[4][]byte, n int) int { return 0 }
