package tensor

// This file holds temporary stand-ins so the layers above tensor build while
// the const kernel lands. It is deleted when it does.

import "errors"

// ConstGraph cuts a into chunks as constant ops.
func ConstGraph(name string, a *Array, chunks [][]int) (*ChunkGraph, error) {
	return nil, errors.New("uploads not built yet")
}
