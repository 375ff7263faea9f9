package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sync"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// zarrBufs are the buffers one read of a store chunk needs: its file's
// bytes, its decoded elements, and room to reorder them. They are reused
// from chunk to chunk (fresh pages cost more to touch than to decode).
type zarrBufs struct{ raw, chunk, scratch []byte }

var zarrPool = sync.Pool{New: func() any { return new(zarrBufs) }}

// fromZarrKernel assembles its chunk, a block of a Zarr array, from the
// store chunks that overlap it: each read whole from its file, decoded,
// and its part copied in; a store chunk the store lacks is the fill
// value. A block that is exactly one store chunk is decoded in place.
func fromZarrKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, ok := op.Args.(chunk.ZarrArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	arr := &a.Array
	nd := len(arr.Shape)
	if len(in) != 0 || len(op.Shape) != nd || len(a.Offset) != nd || len(arr.Chunks) != nd || op.DType != arr.DType || !op.DType.Valid() {
		return nil, fmt.Errorf("from_zarr %s: block %v%v at %v of an array of %v%v", a.Path, op.DType, op.Shape, a.Offset, arr.DType, arr.Shape)
	}
	for ax := range nd {
		if a.Offset[ax] < 0 || op.Shape[ax] < 0 || a.Offset[ax]+op.Shape[ax] > arr.Shape[ax] || arr.Chunks[ax] < 1 {
			return nil, fmt.Errorf("from_zarr %s: block %v at %v of an array of %v", a.Path, op.Shape, a.Offset, arr.Shape)
		}
	}
	data, err := dataOf(ctx)
	if err != nil {
		return nil, err
	}
	out := elem.NewOutputAll(ctx, op)
	if out.Len() == 0 {
		return out, nil
	}
	bufs := zarrPool.Get().(*zarrBufs)
	defer zarrPool.Put(bufs)
	lo, hi := arr.Overlapping(op.Shape, a.Offset)
	whole := slices.Equal(op.Shape, arr.Chunks) // a block that may be one store chunk
	idx := slices.Clone(lo)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		key := path.Join(a.Path, arr.Key(idx))
		raw, err := readWhole(data, key, &bufs.raw)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			arr.Overlap(out.Data, op.Shape, a.Offset, idx, nil)
		case err != nil:
			return nil, fmt.Errorf("from_zarr: %w", err)
		case whole && aligned(a.Offset, idx, arr.Chunks):
			if err := arr.Decode(out.Data, raw, &bufs.scratch); err != nil {
				return nil, fmt.Errorf("from_zarr %s: %w", key, err)
			}
		default:
			if cap(bufs.chunk) < arr.ChunkBytes() {
				bufs.chunk = make([]byte, arr.ChunkBytes())
			}
			c := bufs.chunk[:arr.ChunkBytes()]
			if err := arr.Decode(c, raw, &bufs.scratch); err != nil {
				return nil, fmt.Errorf("from_zarr %s: %w", key, err)
			}
			arr.Overlap(out.Data, op.Shape, a.Offset, idx, c)
		}
		ax := nd - 1
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < hi[ax] {
				break
			}
			idx[ax] = lo[ax]
		}
		if ax < 0 {
			return out, nil
		}
	}
}

// aligned reports whether the block at off starts where store chunk idx
// does.
func aligned(off, idx, chunks []int) bool {
	for ax := range off {
		if off[ax] != idx[ax]*chunks[ax] {
			return false
		}
	}
	return true
}

// readWhole reads the file at name in data into *buf, grown as needed,
// and returns its bytes.
func readWhole(data *os.Root, name string, buf *[]byte) ([]byte, error) {
	f, err := data.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	n := int(st.Size())
	if cap(*buf) < n {
		*buf = make([]byte, n+n/8)
	}
	b := (*buf)[:n]
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}
