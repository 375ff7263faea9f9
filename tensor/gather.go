package tensor

import (
	"fmt"
	"sort"
)

// GatherIndex gathers from the chunked tensor t the elements at the cross
// product of per-axis indices sel (sel[ax] lists indices of axis ax), into
// an array of shape (len(sel[0]), len(sel[1]), ...). fetch returns chunk i
// of t.Keys; it is called once for each chunk holding a selected element
// and for no other, so a few elements of a large tensor cost a few chunks.
func GatherIndex(t *TiledTensor, sel [][]int, fetch func(i int) (*Array, error)) (*Array, error) {
	if len(sel) != len(t.Shape) {
		return nil, fmt.Errorf("gather %s: %d index lists for %d axes", t.Name, len(sel), len(t.Shape))
	}
	shape := make([]int, len(sel))
	for ax, s := range sel {
		shape[ax] = len(s)
		for _, i := range s {
			if i < 0 || i >= t.Shape[ax] {
				return nil, fmt.Errorf("gather %s: index %d out of range for axis %d of length %d", t.Name, i, ax, t.Shape[ax])
			}
		}
	}
	out := NewArray(t.DType, shape)
	if out.Len() == 0 {
		return out, nil
	}
	// Where each selected index falls: its chunk along the axis and its
	// place in that chunk.
	offs := ChunkOffsets(t.Chunks)
	grid := GridShape(t.Chunks)
	chunkOf := make([][]int, len(sel))
	localOf := make([][]int, len(sel))
	for ax, s := range sel {
		chunkOf[ax] = make([]int, len(s))
		localOf[ax] = make([]int, len(s))
		for j, i := range s {
			c := sort.Search(len(offs[ax]), func(c int) bool { return offs[ax][c] > i }) - 1
			chunkOf[ax][j], localOf[ax][j] = c, i-offs[ax][c]
		}
	}
	gridStrides := ElemStrides(grid)
	parts := map[int]*Array{}
	size := t.DType.Size()
	idx := make([]int, len(shape))
	for o := 0; o < out.Len(); o++ {
		key, local := 0, 0
		for ax, j := range idx {
			key += chunkOf[ax][j] * gridStrides[ax]
		}
		p, ok := parts[key]
		if !ok {
			var err error
			if p, err = fetch(key); err != nil {
				return nil, err
			}
			if p == nil || p.DType != t.DType || len(p.Shape) != len(t.Shape) {
				return nil, fmt.Errorf("gather %s: missing or mistyped chunk %d", t.Name, key)
			}
			for ax, j := range idx {
				if p.Shape[ax] != t.Chunks[ax][chunkOf[ax][j]] {
					return nil, fmt.Errorf("gather %s: chunk %d has shape %v", t.Name, key, p.Shape)
				}
			}
			parts[key] = p
		}
		stride := 1
		for ax := len(idx) - 1; ax >= 0; ax-- {
			local += localOf[ax][idx[ax]] * stride
			stride *= p.Shape[ax]
		}
		copy(out.Data[o*size:(o+1)*size], p.Data[local*size:(local+1)*size])
		for ax := len(idx) - 1; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
	}
	return out, nil
}

// Gather assembles the chunks of t (one array a chunk, in t.Keys order) into
// one array of t's shape.
func Gather(t *TiledTensor, parts []*Array) (*Array, error) {
	if len(parts) != len(t.Keys) {
		return nil, fmt.Errorf("gather %s: %d chunks for a grid of %d", t.Name, len(parts), len(t.Keys))
	}
	out := NewArray(t.DType, t.Shape)
	offs := ChunkOffsets(t.Chunks)
	grid := GridShape(t.Chunks)
	idx := make([]int, len(grid))
	for _, p := range parts {
		if p == nil || p.DType != t.DType {
			return nil, fmt.Errorf("gather %s: missing or mistyped chunk", t.Name)
		}
		dst := make([]int, len(idx))
		for ax, i := range idx {
			dst[ax] = offs[ax][i]
			if p.Shape[ax] != t.Chunks[ax][i] {
				return nil, fmt.Errorf("gather %s: chunk %v has shape %v", t.Name, idx, p.Shape)
			}
		}
		CopyStrided(out, dst, p, Whole(p.Shape))
		for ax := len(idx) - 1; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < grid[ax] {
				break
			}
			idx[ax] = 0
		}
	}
	return out, nil
}
