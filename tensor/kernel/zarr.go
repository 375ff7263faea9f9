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
	"strings"
	"syscall"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec/zarr"
	"marsfs/tensor/kernel/elem"
)

// zarrBufs are a kernel's reused buffers: a store chunk's file (raw), a
// decoded or assembled chunk, the codecs' scratch, and an encoded chunk
// (enc), which a new buffer a chunk would cost more in page faults than
// the codec takes to fill it. zarrKept keeps them from op to op, enough
// sets for a worker's slots with some to spare.
type zarrBufs struct{ raw, chunk, scratch, enc []byte }

var zarrKept = &keptList[*zarrBufs]{max: 4}

func getZarrBufs() *zarrBufs {
	if b, ok := zarrKept.get(); ok {
		return b
	}
	return new(zarrBufs)
}

// fromZarrKernel assembles its chunk, a block of a Zarr array, from the
// store chunks that overlap it: each read whole from its file, decoded,
// and its part copied in; a store chunk the store lacks is the fill
// value. A block that is exactly one store chunk is decoded in place.
func fromZarrKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, ok := op.Args.(chunk.ZarrArgs)
	if !ok {
		return nil, fmt.Errorf("bad args %T", op.Args)
	}
	arr := zarr.FromDesc(&a.Array)
	nd := len(arr.Shape)
	if len(in) != 0 || len(op.Shape) != nd || len(a.Offset) != nd || len(arr.Chunks) != nd || op.DType != arr.DType || !op.DType.Valid() {
		return nil, fmt.Errorf("from_zarr %s: block %v%v at %v of an array of %v%v", a.Path, op.DType, op.Shape, a.Offset, arr.DType, arr.Shape)
	}
	for ax := range nd {
		if a.Offset[ax] < 0 || op.Shape[ax] < 0 || a.Offset[ax]+op.Shape[ax] > arr.Shape[ax] || arr.Chunks[ax] < 1 {
			return nil, fmt.Errorf("from_zarr %s: block %v at %v of an array of %v", a.Path, op.Shape, a.Offset, arr.Shape)
		}
	}
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", op.Kind, a.Path, err)
	}
	out := elem.NewOutputAll(ctx, op)
	if out.Len() == 0 {
		return out, nil
	}
	bufs := getZarrBufs()
	defer zarrKept.put(bufs)
	lo, hi := arr.Overlapping(op.Shape, a.Offset)
	whole := slices.Equal(op.Shape, arr.Chunks) // a block that may be one store chunk
	idx := slices.Clone(lo)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		key := path.Join(a.Path, arr.Key(idx))
		var raw []byte
		var err error
		inPlace := whole && rawInPlace(arr) && aligned(a.Offset, idx, arr.Chunks)
		if inPlace {
			err = readRaw(data, key, out.Data)
		} else {
			raw, err = readWhole(data, key, &bufs.raw)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			arr.Overlap(out.Data, op.Shape, a.Offset, idx, nil)
		case err != nil:
			return nil, fmt.Errorf("from_zarr %q: %w", a.Path, err)
		case inPlace:
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
func readWhole(data Dir, name string, buf *[]byte) ([]byte, error) {
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

func zarrWriteArgs(op *chunk.Op) (chunk.ZarrWriteArgs, error) {
	a, ok := op.Args.(chunk.ZarrWriteArgs)
	if !ok {
		return a, fmt.Errorf("bad args %T", op.Args)
	}
	if !a.Array.DType.Valid() || a.Temp == "" || a.Path == "" || a.Temp == a.Path || len(a.Array.Chunks) != len(a.Array.Shape) {
		return a, fmt.Errorf("bad array %q (%v%v)", a.Path, a.Array.DType, a.Array.Shape)
	}
	return a, nil
}

// toZarrCreateKernel makes the array's directory under its temporary
// name, empty, refusing when the array exists and may not be replaced. A
// retry finds the directory it made: it starts it again.
func toZarrCreateKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := zarrWriteArgs(op)
	if err != nil {
		return nil, err
	}
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", op.Kind, a.Path, err)
	}
	if _, err := data.Stat(a.Path); err == nil && !a.Overwrite {
		return nil, fmt.Errorf("to_zarr: %q exists (overwrite=True replaces it)", a.Path)
	}
	if root, ok := groupOf(a); ok {
		if err := makeGroups(data, root, a.Path); err != nil {
			return nil, fmt.Errorf("to_zarr %q: %w", a.Path, err)
		}
	}
	if err := data.RemoveAll(a.Temp); err != nil {
		return nil, fmt.Errorf("to_zarr %q: %w", a.Path, err)
	}
	if err := data.Mkdir(a.Temp, 0o755); err != nil {
		return nil, fmt.Errorf("to_zarr %q: %w", a.Path, err)
	}
	return done(), nil
}

// toZarrWriteKernel assembles one store chunk from its inputs (the tensor
// chunks that overlap it, then the create op's), encodes it and writes
// its file. A store chunk that is one input whole is encoded as it is.
func toZarrWriteKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := zarrWriteArgs(op)
	if err != nil {
		return nil, err
	}
	arr := zarr.FromDesc(&a.Array)
	nd := len(arr.Shape)
	if len(in) != len(a.Offsets)+1 || len(a.Index) != nd {
		return nil, fmt.Errorf("to_zarr %s: %d inputs for %d chunks", a.Path, len(in), len(a.Offsets))
	}
	origin := make([]int, nd)
	for ax := range nd {
		origin[ax] = a.Index[ax] * arr.Chunks[ax]
	}
	for i, x := range in[:len(a.Offsets)] {
		if x == nil || x.Check() != nil || x.DType != arr.DType || len(x.Shape) != nd || len(a.Offsets[i]) != nd {
			return nil, fmt.Errorf("to_zarr %s: input %d is no chunk of a %v array of %d axes", a.Path, i, arr.DType, nd)
		}
		for ax := range nd {
			if o := a.Offsets[i][ax]; o < 0 || o+x.Shape[ax] > arr.Shape[ax] {
				return nil, fmt.Errorf("to_zarr %s: a chunk of %v at %v of an array of %v", a.Path, x.Shape, a.Offsets[i], arr.Shape)
			}
		}
	}
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", op.Kind, a.Path, err)
	}
	bufs := getZarrBufs()
	defer zarrKept.put(bufs)
	var chunkData []byte
	if len(a.Offsets) == 1 && slices.Equal(in[0].Shape, arr.Chunks) && slices.Equal(a.Offsets[0], origin) {
		chunkData = in[0].Data
	} else {
		if cap(bufs.chunk) < arr.ChunkBytes() {
			bufs.chunk = make([]byte, arr.ChunkBytes())
		}
		chunkData = bufs.chunk[:arr.ChunkBytes()]
		clear(chunkData) // the fill value, 0, past the array's edge
		for i, x := range in[:len(a.Offsets)] {
			zarr.CopyBox(chunkData, arr.Chunks, origin, x.Data, x.Shape, a.Offsets[i], arr.DType.Size())
		}
	}
	enc, err := arr.EncodeTo(bufs.enc, chunkData)
	if err != nil {
		return nil, fmt.Errorf("to_zarr %s: %w", a.Path, err)
	}
	bufs.enc = enc
	if err := writeStoreChunk(data, a, arr, enc); err != nil {
		return nil, err
	}
	return done(), nil
}

// writeStoreChunk writes enc, store chunk a.Index of arr encoded, as its
// file under the array's temporary directory, in one write.
func writeStoreChunk(data Dir, a chunk.ZarrWriteArgs, arr *zarr.Array, enc []byte) error {
	name := path.Join(a.Temp, arr.Key(a.Index))
	if dir := path.Dir(name); dir != a.Temp {
		if err := data.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("to_zarr %q: %w", a.Path, err)
		}
	}
	if err := data.WriteFile(name, enc, 0o644); err != nil {
		return fmt.Errorf("to_zarr %q: %w", a.Path, err)
	}
	return nil
}

// toZarrCommitKernel writes the metadata once every store chunk is
// written (its inputs), into a temporary file renamed into place, and
// then renames the directory to the array's path, moving what was there
// aside and removing it when overwrite was given.
func toZarrCommitKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := zarrWriteArgs(op)
	if err != nil {
		return nil, err
	}
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", op.Kind, a.Path, err)
	}
	arr := zarr.FromDesc(&a.Array)
	meta, err := arr.Metadata()
	if err != nil {
		return nil, fmt.Errorf("to_zarr %s: %w", a.Path, err)
	}
	if a.Dims != nil || a.Attrs != "" {
		attrs, err := zarr.AttrsMeta(a.Dims, []byte(a.Attrs))
		if err != nil {
			return nil, fmt.Errorf("to_zarr %s: %w", a.Path, err)
		}
		if err := writeSynced(data, path.Join(a.Temp, ".zattrs"), attrs); err != nil {
			return nil, fmt.Errorf("to_zarr %q: %w", a.Path, err)
		}
	}
	name := path.Join(a.Temp, arr.MetaName())
	if err := writeSynced(data, name+".part", meta); err != nil {
		return nil, fmt.Errorf("to_zarr %q: %w", a.Path, err)
	}
	if err := data.Rename(name+".part", name); err != nil {
		return nil, fmt.Errorf("to_zarr %q: %w", a.Path, err)
	}
	var old string
	if _, err := data.Lstat(a.Path); err == nil {
		if !a.Overwrite {
			data.RemoveAll(a.Temp)
			return nil, fmt.Errorf("to_zarr: %q exists (overwrite=True replaces it)", a.Path)
		}
		old = strings.TrimSuffix(a.Temp, ".part") + ".old"
		if err := data.Rename(a.Path, old); err != nil {
			return nil, fmt.Errorf("to_zarr %q: %w", a.Path, err)
		}
	}
	if err := data.Rename(a.Temp, a.Path); err != nil {
		return nil, fmt.Errorf("to_zarr %q: %w", a.Path, err)
	}
	if old != "" {
		if err := data.RemoveAll(old); err != nil {
			return nil, fmt.Errorf("to_zarr: the array is written; removing what it replaced: %w", err)
		}
	}
	if root, ok := groupOf(a); ok {
		if err := consolidate(data, root); err != nil {
			return nil, fmt.Errorf("to_zarr: the array is written; the consolidated metadata of %q: %w", root, err)
		}
	}
	return done(), nil
}

// groupOf returns the group the array a writes belongs to, if any: only
// format 2 has xarray's datasets.
func groupOf(a chunk.ZarrWriteArgs) (string, bool) {
	if a.Array.Format != 2 {
		return "", false
	}
	return zarr.GroupRoot(a.Path)
}

// makeGroups makes the groups on the path from root to the array at p
// that are missing: a directory and its .zgroup. Two arrays of one graph
// may make them at once: each step tolerates the other's.
func makeGroups(data Dir, root, p string) error {
	for _, dir := range zarr.GroupsOn(root, p) {
		if err := data.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if _, err := data.Stat(path.Join(dir, ".zarray")); err == nil {
			return fmt.Errorf("%q is a Zarr array, not a group: an array cannot be written inside it", dir)
		}
		if _, err := data.Stat(path.Join(dir, ".zgroup")); errors.Is(err, fs.ErrNotExist) {
			if err := writeSynced(data, path.Join(dir, ".zgroup"), zarr.GroupMeta); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
	}
	return nil
}

// consolidate writes the group root's .zmetadata anew from what is below
// it, holding the group directory's lock (flock): arrays of one dataset
// committed at once by several workers each consolidate in turn, and the
// last sees them all.
func consolidate(data Dir, root string) error {
	d, err := data.Open(root)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %q: %w", root, err)
	}
	defer syscall.Flock(int(d.Fd()), syscall.LOCK_UN)
	meta, err := zarr.Consolidate(dirFS{data}, root)
	if err != nil {
		return err
	}
	name := path.Join(root, ".zmetadata")
	if err := writeSynced(data, name+".marsfs.part", meta); err != nil {
		return err
	}
	return data.Rename(name+".marsfs.part", name)
}

// dirFS is a data directory as an fs.FS, for walking it.
type dirFS struct{ d Dir }

func (f dirFS) Open(name string) (fs.File, error) {
	file, err := f.d.Open(name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

// writeSynced writes b to the file name in data and syncs it.
func writeSynced(data Dir, name string, b []byte) error {
	f, err := data.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
