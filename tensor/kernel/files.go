package kernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec"
	"marsfs/tensor/kernel/elem"
)

// The kernels of data on disk read and write files in the data directory
// of the process that runs them, which its worker hands them in the
// context (WithData): a worker reads its own chunks from the file.

type dataKey struct{}

// WithData returns ctx with the data directory data (an fs.FS that keeps
// every path inside it, as os.Root's does) for the kernels it runs.
func WithData(ctx context.Context, data fs.FS) context.Context {
	return context.WithValue(ctx, dataKey{}, data)
}

func dataOf(ctx context.Context) (fs.FS, error) {
	if d, ok := ctx.Value(dataKey{}).(fs.FS); ok && d != nil {
		return d, nil
	}
	return nil, errors.New("this worker has no data directory (--data-dir)")
}

// fromNPYKernel reads its chunk, a block of a .npy file, by the runs of
// the block that lie contiguous in the file: whole rows of the block's
// trailing axes in C order (its leading axes in Fortran order), each read
// at its offset (pread).
func fromNPYKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, ok := op.Args.(chunk.NPYArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	nd := len(a.FileShape)
	if len(in) != 0 || len(op.Shape) != nd || len(a.Offset) != nd || !op.DType.Valid() || a.DataOffset < 0 {
		return nil, fmt.Errorf("block %v at %v of a file of %v", op.Shape, a.Offset, a.FileShape)
	}
	for ax := range nd {
		if a.Offset[ax] < 0 || op.Shape[ax] < 0 || a.Offset[ax]+op.Shape[ax] > a.FileShape[ax] {
			return nil, fmt.Errorf("block %v at %v of a file of %v", op.Shape, a.Offset, a.FileShape)
		}
	}
	data, err := dataOf(ctx)
	if err != nil {
		return nil, err
	}
	f, err := data.Open(a.Path)
	if err != nil {
		return nil, fmt.Errorf("from_npy: %w", err)
	}
	defer f.Close()
	r, ok := f.(io.ReaderAt)
	if !ok {
		return nil, fmt.Errorf("from_npy %s: the data directory's files do not read at offsets", a.Path)
	}
	out := elem.NewOutputAll(ctx, op)
	if out.Len() == 0 {
		return out, nil
	}
	size := int64(op.DType.Size())
	l := codec.NPYLayout{Kind: npyKind(op.DType), Size: int(size), Big: a.BigEndian}
	if nd == 0 {
		if _, err := r.ReadAt(out.Data, a.DataOffset); err != nil {
			return nil, fmt.Errorf("from_npy %s: %w", a.Path, err)
		}
		l.Convert(out.Data, out.Data)
		return out, nil
	}
	// Work in the file's order: for Fortran order, axes reversed, and
	// the block read into a buffer that is then laid out in C order.
	shape, fshape, off := op.Shape, a.FileShape, a.Offset
	dst := out.Data
	if a.Fortran {
		shape, fshape, off = reversed(shape), reversed(fshape), reversed(off)
		dst = make([]byte, len(out.Data))
	}
	// The trailing axes the block spans whole, and the axis before them,
	// make a run contiguous in the file.
	k := nd - 1
	for k > 0 && shape[k] == fshape[k] {
		k--
	}
	run := int64(shape[k])
	for _, s := range fshape[k+1:] {
		run *= int64(s)
	}
	strides := make([]int64, nd) // of the file, in elements
	st := int64(1)
	for ax := nd - 1; ax >= 0; ax-- {
		strides[ax] = st
		st *= int64(fshape[ax])
	}
	idx := make([]int, k) // over the block's axes before k
	var pos int64
	for n := 0; ; n++ {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e := int64(off[k]) * strides[k]
		for ax, i := range idx {
			e += int64(off[ax]+i) * strides[ax]
		}
		buf := dst[pos*size : (pos+run)*size]
		if _, err := r.ReadAt(buf, a.DataOffset+e*size); err != nil {
			return nil, fmt.Errorf("from_npy %s: %w", a.Path, err)
		}
		pos += run
		// The next run: increment idx as a counter over shape[:k].
		ax := k - 1
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			break
		}
	}
	l.Convert(dst, dst) // byte order, and bools to 0 and 1
	if a.Fortran {
		codec.FortranToC(out, dst)
	}
	return out, nil
}

func reversed(s []int) []int {
	r := make([]int, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

// npyKind is the kind letter of a .npy descr for dt.
func npyKind(dt tensor.DType) byte {
	switch {
	case dt == tensor.Bool:
		return 'b'
	case dt.IsInt():
		return 'i'
	case dt.IsUint():
		return 'u'
	}
	return 'f'
}
