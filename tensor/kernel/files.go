package kernel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec"
	"marsfs/tensor/kernel/elem"
)

// The kernels of data on disk read and write files in the data directory
// of the process that runs them, as the user their op names (the
// session's owner, chunk.Owner): the worker hands them, in the context,
// the Files that open the directory as a user (WithFiles), and the kernel
// of the user decides what may be read or written. A worker reads its own
// chunks from the file.

// A Dir is a data directory as one user sees it: os.Root's operations,
// every path relative to the directory and kept inside it, each checked
// by the kernel against that user's rights as it is made.
type Dir interface {
	Open(name string) (*os.File, error)
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	Mkdir(name string, perm fs.FileMode) error
	MkdirAll(name string, perm fs.FileMode) error
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldname, newname string) error
	WriteFile(name string, data []byte, perm fs.FileMode) error
}

// Files opens a data directory as a user: As returns the directory as o
// sees it, or why this process may not act for o.
type Files interface {
	As(o chunk.Owner) (Dir, error)
}

type dataKey struct{}

// WithFiles returns ctx with files, the data directory of the kernels it
// runs, opened as each op's owner.
func WithFiles(ctx context.Context, files Files) context.Context {
	return context.WithValue(ctx, dataKey{}, files)
}

// WithData returns ctx with the data directory data, used with the rights
// of the process itself whoever an op's owner is: for tests and the
// reference executor, never for a server's users (see WithFiles).
func WithData(ctx context.Context, data *os.Root) context.Context {
	return WithFiles(ctx, ownRights{data})
}

type ownRights struct{ root *os.Root }

func (r ownRights) As(chunk.Owner) (Dir, error) { return r.root, nil }

// dataOf returns the data directory as o sees it.
func dataOf(ctx context.Context, o chunk.Owner) (Dir, error) {
	files, ok := ctx.Value(dataKey{}).(Files)
	if !ok || files == nil {
		return nil, errors.New("this worker has no data directory (--data-dir)")
	}
	return files.As(o)
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
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", op.Kind, a.Path, err)
	}
	f, err := data.Open(a.Path)
	if err != nil {
		return nil, fmt.Errorf("from_npy %q: %w", a.Path, err)
	}
	defer f.Close()
	r := f
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
	err = eachRun(ctx, shape, fshape, off, func(pos, run, e int64) error {
		_, err := r.ReadAt(dst[pos*size:(pos+run)*size], a.DataOffset+e*size)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("from_npy %s: %w", a.Path, err)
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

func npyWriteArgs(op *chunk.Op) (chunk.NPYWriteArgs, error) {
	a, ok := op.Args.(chunk.NPYWriteArgs)
	if !ok {
		return a, fmt.Errorf("bad args %T", op.Args)
	}
	if !a.DType.Valid() || a.DataOffset <= 0 || a.Temp == "" || a.Path == "" || a.Temp == a.Path {
		return a, fmt.Errorf("bad file %q (%v%v)", a.Path, a.DType, a.FileShape)
	}
	return a, nil
}

// done is the chunk of the ops that write files: a 0-d true.
func done() *tensor.Array {
	a := tensor.NewArray(tensor.Bool, []int{})
	a.Data[0] = 1
	return a
}

// toNPYCreateKernel makes the file under its temporary name, of its whole
// size (sparse until written), refusing when the file exists and may not
// be replaced. A retry finds the file it made: it starts it again.
func toNPYCreateKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := npyWriteArgs(op)
	if err != nil {
		return nil, err
	}
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", op.Kind, a.Path, err)
	}
	if _, err := data.Stat(a.Path); err == nil && !a.Overwrite {
		return nil, fmt.Errorf("to_npy: %q exists (overwrite=True replaces it)", a.Path)
	}
	f, err := data.OpenFile(a.Temp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("to_npy %q: %w", a.Path, err)
	}
	defer f.Close()
	size := a.DataOffset + int64(tensor.NumElements(a.FileShape)*a.DType.Size())
	if err := f.Truncate(size); err != nil {
		return nil, fmt.Errorf("to_npy %q: %w", a.Path, err)
	}
	return done(), nil
}

// toNPYWriteKernel writes its chunk (input 0) at its place in the file,
// by the runs of it contiguous in the file (pwrite).
func toNPYWriteKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := npyWriteArgs(op)
	if err != nil {
		return nil, err
	}
	nd := len(a.FileShape)
	if len(in) != 2 || in[0] == nil || in[0].Check() != nil || in[0].DType != a.DType || len(in[0].Shape) != nd || len(a.Offset) != nd {
		return nil, fmt.Errorf("to_npy %s: a chunk of %v for a file of %v%v", a.Path, a.DType, a.DType, a.FileShape)
	}
	x := in[0]
	for ax := range nd {
		if a.Offset[ax] < 0 || a.Offset[ax]+x.Shape[ax] > a.FileShape[ax] {
			return nil, fmt.Errorf("to_npy %s: a chunk of %v at %v for a file of %v", a.Path, x.Shape, a.Offset, a.FileShape)
		}
	}
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", op.Kind, a.Path, err)
	}
	f, err := data.OpenFile(a.Temp, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("to_npy %q: %w", a.Path, err)
	}
	defer f.Close()
	err = eachRun(ctx, x.Shape, a.FileShape, a.Offset, func(pos, run, e int64) error {
		size := int64(a.DType.Size())
		_, err := f.WriteAt(x.Data[pos*size:(pos+run)*size], a.DataOffset+e*size)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("to_npy %s: %w", a.Path, err)
	}
	return done(), f.Close()
}

// toNPYCommitKernel writes the header and renames the file into place,
// once every chunk is written (its inputs).
func toNPYCommitKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := npyWriteArgs(op)
	if err != nil {
		return nil, err
	}
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", op.Kind, a.Path, err)
	}
	f, err := data.OpenFile(a.Temp, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("to_npy %q: %w", a.Path, err)
	}
	hdr := codec.NPYHeader(a.DType, a.FileShape)
	if int64(len(hdr)) != a.DataOffset {
		f.Close()
		return nil, fmt.Errorf("to_npy %s: a header of %d bytes, the data at %d", a.Path, len(hdr), a.DataOffset)
	}
	_, err = f.WriteAt(hdr, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("to_npy %s: %w", a.Path, err)
	}
	if _, err := data.Stat(a.Path); err == nil && !a.Overwrite {
		data.Remove(a.Temp)
		return nil, fmt.Errorf("to_npy: %q exists (overwrite=True replaces it)", a.Path)
	}
	if err := data.Rename(a.Temp, a.Path); err != nil {
		return nil, fmt.Errorf("to_npy %q: %w", a.Path, err)
	}
	return done(), nil
}

// eachRun calls f for each run of a block of shape at off in an array of
// fshape (C order) that is contiguous in both: the run's position in the
// block, its length and its position in the array, in elements.
func eachRun(ctx context.Context, shape, fshape, off []int, f func(pos, run, e int64) error) error {
	nd := len(fshape)
	if nd == 0 {
		return f(0, 1, 0)
	}
	if tensor.NumElements(shape) == 0 {
		return nil
	}
	k := nd - 1
	for k > 0 && shape[k] == fshape[k] {
		k--
	}
	run := int64(shape[k])
	for _, s := range fshape[k+1:] {
		run *= int64(s)
	}
	strides := make([]int64, nd)
	st := int64(1)
	for ax := nd - 1; ax >= 0; ax-- {
		strides[ax] = st
		st *= int64(fshape[ax])
	}
	idx := make([]int, k)
	var pos int64
	for n := 0; ; n++ {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e := int64(off[k]) * strides[k]
		for ax, i := range idx {
			e += int64(off[ax]+i) * strides[ax]
		}
		if err := f(pos, run, e); err != nil {
			return err
		}
		pos += run
		ax := k - 1
		for ; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
		if ax < 0 {
			return nil
		}
	}
}
