package tile

import (
	"crypto/rand"
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec"
	"marsfs/tensor/codec/zarr"
	"marsfs/tensor/spec"
)

// tileFromNPY cuts a .npy file read in place into "from_npy" ops, one a
// chunk, each reading its block of the file: no byte of it passes through
// the process that tiles.
func tileFromNPY(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Chunks) != len(n.Shape) {
		return nil, fmt.Errorf("%d chunk axes for shape %v", len(n.Chunks), n.Shape)
	}
	a := n.Attrs
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: n.Chunks}
	grid := tensor.GridShape(n.Chunks)
	offs := tensor.ChunkOffsets(n.Chunks)
	idx := make([]int, len(grid))
	for k := range tensor.NumElements(grid) {
		tensor.UnravelInto(idx, k, grid)
		off := make([]int, len(idx))
		shape := make([]int, len(idx))
		for ax, i := range idx {
			off[ax], shape[ax] = offs[ax][i], n.Chunks[ax][i]
		}
		args := chunk.NPYArgs{Path: a.Path, DataOffset: a.FileOffset, FileShape: slices.Clone(n.Shape),
			Fortran: a.Fortran, BigEndian: a.BigEndian, Offset: off, Owner: t.owner}
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindFromNPY, Shape: shape, DType: n.DType, Args: args}))
	}
	return out, nil
}

// tileFromZarr cuts a Zarr array read in place into "from_zarr" ops, one a
// chunk, each assembling its block from the store chunks that overlap it:
// no byte of them passes through the process that tiles.
func tileFromZarr(t *tiler, n *spec.Node) (*tensor.TiledTensor, error) {
	if len(n.Chunks) != len(n.Shape) || n.Attrs.Zarr == nil {
		return nil, fmt.Errorf("from_zarr: %d chunk axes for shape %v", len(n.Chunks), n.Shape)
	}
	out := &tensor.TiledTensor{Shape: n.Shape, DType: n.DType, Chunks: n.Chunks}
	grid := tensor.GridShape(n.Chunks)
	offs := tensor.ChunkOffsets(n.Chunks)
	idx := make([]int, len(grid))
	for k := range tensor.NumElements(grid) {
		tensor.UnravelInto(idx, k, grid)
		off := make([]int, len(idx))
		shape := make([]int, len(idx))
		for ax, i := range idx {
			off[ax], shape[ax] = offs[ax][i], n.Chunks[ax][i]
		}
		args := chunk.ZarrArgs{Path: n.Attrs.Path, Array: n.Attrs.Zarr.Desc(), Offset: off, Owner: t.owner}
		out.Keys = append(out.Keys, t.emit(&chunk.Op{Kind: chunk.KindFromZarr, Shape: shape, DType: n.DType, Args: args}))
	}
	return out, nil
}

// tileSink emits the ops that write tt, the tiled tensor of sink, to its
// file (see chunk.NPYWriteArgs), and returns the key of the op that
// commits it.
func (t *tiler) tileSink(sink spec.Sink, tt *tensor.TiledTensor) (uint64, error) {
	if sink.Format == "zarr" {
		return t.tileZarrSink(sink, tt)
	}
	if sink.Format != "npy" {
		return 0, fmt.Errorf("sink %q: unknown format %q", sink.Path, sink.Format)
	}
	var token [8]byte
	rand.Read(token[:])
	base := chunk.NPYWriteArgs{Path: sink.Path, Temp: fmt.Sprintf("%s.marsfs-%x.part", sink.Path, token), Overwrite: sink.Overwrite,
		DataOffset: int64(len(codec.NPYHeader(tt.DType, tt.Shape))), DType: tt.DType, FileShape: slices.Clone(tt.Shape), Owner: t.owner}
	done := []int{}
	create := t.emit(&chunk.Op{Kind: chunk.KindToNPYCreate, Shape: done, DType: tensor.Bool, Args: base})
	grid := tensor.GridShape(tt.Chunks)
	offs := tensor.ChunkOffsets(tt.Chunks)
	idx := make([]int, len(grid))
	var writes []int
	for k, key := range tt.Keys {
		tensor.UnravelInto(idx, k, grid)
		args := base
		args.Offset = make([]int, len(idx))
		for ax, i := range idx {
			args.Offset[ax] = offs[ax][i]
		}
		writes = append(writes, int(t.emit(&chunk.Op{Kind: chunk.KindToNPYWrite, Inputs: []int{int(key), int(create)}, Shape: done, DType: tensor.Bool, Args: args})))
	}
	if len(writes) == 0 {
		writes = []int{int(create)} // no chunk: the file is the header
	}
	return t.emit(&chunk.Op{Kind: chunk.KindToNPYCommit, Inputs: writes, Shape: done, DType: tensor.Bool, Args: base}), nil
}

// tileZarrSink emits the ops that write tt as the Zarr array of sink (see
// chunk.ZarrWriteArgs) and returns the key of the op that commits it.
// The store's chunks are the tensor's when they are regular (every chunk
// of an axis as long as the first but the last); otherwise each axis is
// cut in its longest chunk's length, and each store chunk is assembled
// from the tensor chunks that overlap it, so that no two ops write one
// store chunk.
func (t *tiler) tileZarrSink(sink spec.Sink, tt *tensor.TiledTensor) (uint64, error) {
	nd := len(tt.Shape)
	store := make([]int, nd)
	for ax, cs := range tt.Chunks {
		store[ax] = 1
		for _, c := range cs {
			store[ax] = max(store[ax], c)
		}
	}
	arr, err := zarr.New(tt.Shape, store, tt.DType, sink.ZarrFormat, sink.Compressor)
	if err != nil {
		return 0, fmt.Errorf("to_zarr %q: %w", sink.Path, err)
	}
	if sink.Dims != nil {
		arr.UseDatasetFill() // a dataset's variable, as xarray reads it
	}
	var token [8]byte
	rand.Read(token[:])
	base := chunk.ZarrWriteArgs{Path: sink.Path, Temp: fmt.Sprintf("%s.marsfs-%x.part", sink.Path, token), Overwrite: sink.Overwrite, Array: arr.Desc(), Owner: t.owner,
		Dims: sink.Dims, Attrs: sink.Attrs}
	done := []int{}
	create := t.emit(&chunk.Op{Kind: chunk.KindToZarrCreate, Shape: done, DType: tensor.Bool, Args: base})
	// The tensor chunks by the store chunks they overlap.
	grid := tensor.GridShape(tt.Chunks)
	offs := tensor.ChunkOffsets(tt.Chunks)
	sgrid := arr.Grid()
	type part struct {
		key uint64
		off []int
	}
	parts := make(map[int][]part)
	idx := make([]int, nd)
	for k, key := range tt.Keys {
		tensor.UnravelInto(idx, k, grid)
		off, shape := make([]int, nd), make([]int, nd)
		for ax, i := range idx {
			off[ax], shape[ax] = offs[ax][i], tt.Chunks[ax][i]
		}
		lo, hi := arr.Overlapping(shape, off)
		eachIndex(lo, hi, func(s []int) {
			flat := 0
			for ax, v := range s {
				flat = flat*sgrid[ax] + v
			}
			parts[flat] = append(parts[flat], part{key, off})
		})
	}
	var writes []int
	for flat := range tensor.NumElements(sgrid) {
		ps := parts[flat]
		if len(ps) == 0 {
			continue // an empty array has no chunk
		}
		args := base
		args.Index = make([]int, nd)
		tensor.UnravelInto(args.Index, flat, sgrid)
		inputs := make([]int, 0, len(ps)+1)
		for _, p := range ps {
			inputs = append(inputs, int(p.key))
			args.Offsets = append(args.Offsets, p.off)
		}
		inputs = append(inputs, int(create))
		writes = append(writes, int(t.emit(&chunk.Op{Kind: chunk.KindToZarrWrite, Inputs: inputs, Shape: done, DType: tensor.Bool, Args: args})))
	}
	if len(writes) == 0 {
		writes = []int{int(create)} // no chunk: the array is its metadata
	}
	return t.emit(&chunk.Op{Kind: chunk.KindToZarrCommit, Inputs: writes, Shape: done, DType: tensor.Bool, Args: base}), nil
}

// eachIndex calls f with every index from lo up to hi (exclusive), in C
// order; f must not keep its argument.
func eachIndex(lo, hi []int, f func([]int)) {
	for ax := range lo {
		if hi[ax] <= lo[ax] {
			return
		}
	}
	idx := slices.Clone(lo)
	for {
		f(idx)
		ax := len(idx) - 1
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < hi[ax] {
				break
			}
			idx[ax] = lo[ax]
		}
		if ax < 0 {
			return
		}
	}
}
