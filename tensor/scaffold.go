package tensor

// This file holds temporary stand-ins so the layers above tensor build while
// the spec parser and the const kernel land. It is deleted when they do.

import "errors"

// ParseSpec parses a spec in the text or JSON form.
func ParseSpec(src string, env Env) (*Graph, error) {
	return nil, errors.New("spec parser not built yet")
}

// JSON renders g in the spec's JSON form.
func (g *Graph) JSON() ([]byte, error) { return nil, errors.New("spec JSON not built yet") }

// ConstGraph cuts a into chunks as constant ops.
func ConstGraph(name string, a *Array, chunks [][]int) (*ChunkGraph, error) {
	return nil, errors.New("uploads not built yet")
}

// DefaultChunks is the default chunking of a tensor.
func DefaultChunks(shape []int, dt DType) [][]int {
	c := make([][]int, len(shape))
	for i, n := range shape {
		c[i] = []int{n}
	}
	return c
}
