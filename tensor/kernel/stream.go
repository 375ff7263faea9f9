package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec/zarr"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
)

// A store chunk read only to be reduced need not be made. The fused op
// fuse(from_zarr+mean.map) (or +maps(mean.map+var.map), or std's map
// alone) of a blosc chunk is run here a block at a time: each block's
// compressed bytes are read from the file (never the whole file into a
// buffer: zarr.Array.DecodePiecesAt) and decoded, a float32 block 16 KB
// at a time (else a block's size, 512 KB for a climate store's 6 MB
// chunk), into a buffer which stays in cache, and folded there into the
// partial's sums (a mean's straight into the op's output), so that the chunk is never written to memory and read back (the
// decode's stores and the map's loads were a third of a worker's CPU in
// CLIM-MEAN). The plan does not choose this: the chain fuser already made
// the op, and the kernel takes this way whenever the op's shape allows it,
// else the general one (streamable says which).
//
// The sums are those of the general path to the bit: each accumulator
// starts at zero and adds its values widened to float64, in the order of
// the reduced axes, as wideSums does. A var or std map, which the general
// path makes in two passes over the chunk (the mean, then the squared
// deviations), is one pass here: the squared deviations from the chunk's
// first row along the reduced axes (a sample of the same values, so that
// the deviations are of the data's spread, not its magnitude), corrected
// to the mean at the end, M2 = S2 - n (mean - first)^2: as accurate, in
// float64, but not the same bits.

// A streamPlan is what a streamed chunk's op reads and makes: the store
// chunk, and the map ops (the maps op's members, or the one map).
type streamPlan struct {
	zarr  chunk.ZarrArgs
	arr   *zarr.Array
	maps  []*chunk.Op
	inner int  // accumulators: the kept axes' elements
	outer int  // values an accumulator adds: the reduced axes' elements
	m2    bool // a var or std map needs the squared deviations
}

// streamable returns the plan of a fuse op of members that a block-wise
// read can run, or false.
func streamable(op *chunk.Op, members []chunk.Op) (*streamPlan, bool) {
	if len(members) != 2 || len(op.Inputs) != 0 {
		return nil, false
	}
	za, arr, ok := leadingStoreChunk(&members[0])
	if !ok || len(arr.Chunks) < 2 || (arr.DType != tensor.Float32 && arr.DType != tensor.Float64) {
		return nil, false
	}
	nd := len(arr.Chunks)
	xshape := members[0].Shape
	p := &streamPlan{zarr: za, arr: arr}
	m := &members[1]
	if m.Kind == chunk.KindMaps {
		ma, ok := m.Args.(chunk.MapsArgs)
		if !ok {
			return nil, false
		}
		for i := range ma.Members {
			p.maps = append(p.maps, &ma.Members[i])
		}
	} else {
		p.maps = []*chunk.Op{m}
	}
	if len(m.Inputs) != 1 || m.Inputs[0] != 0 || m.Ranges != nil {
		return nil, false
	}
	var axes []int
	for i, mo := range p.maps {
		a, ok := mo.Args.(chunk.ReduceArgs)
		if !ok || a.Gather != nil || a.In != arr.DType || mo.Kind != chunk.StepKind(a.Op, chunk.StepMap) || mo.Ranges != nil {
			return nil, false
		}
		switch a.Op {
		case tensor.OpMean:
		case tensor.OpVar, tensor.OpStd:
			p.m2 = true
		case tensor.OpSum:
			if mo.DType != tensor.Float64 {
				return nil, false
			}
		default:
			return nil, false
		}
		if i == 0 {
			axes = slices.Sorted(slices.Values(a.Axes))
		} else if !slices.Equal(axes, slices.Sorted(slices.Values(a.Axes))) {
			return nil, false
		}
	}
	// The reduced axes lead: value e of the chunk adds into accumulator
	// e mod inner.
	if len(axes) == 0 || len(axes) >= nd {
		return nil, false
	}
	for i, ax := range axes {
		if ax != i {
			return nil, false
		}
	}
	p.outer, p.inner = 1, 1
	for ax, s := range xshape {
		if ax < len(axes) {
			p.outer *= s
		} else {
			p.inner *= s
		}
	}
	// Rows shorter than a vector's worth gain nothing from the blocks.
	if p.inner < 64 || p.outer < 1 {
		return nil, false
	}
	pshape := slices.Clone(xshape)
	for ax := range axes {
		pshape[ax] = 1
	}
	for _, mo := range p.maps {
		a := mo.Args.(chunk.ReduceArgs)
		pdt, fields := chunk.PartialSpec(a.Op, arr.DType, mo.DType)
		want := pshape
		if fields > 1 {
			want = append(slices.Clone(pshape), fields)
		}
		if mo.DType != pdt || !slices.Equal(mo.Shape, want) {
			return nil, false
		}
	}
	return p, true
}

// wholeStoreChunk returns the arguments and array of x, a from_zarr op,
// when it reads one whole store chunk (not an edge chunk cut short by the
// array's end), or false.
func wholeStoreChunk(x *chunk.Op) (chunk.ZarrArgs, *zarr.Array, bool) {
	za, arr, ok := storeRead(x)
	if !ok || !slices.Equal(x.Shape, arr.Chunks) {
		return za, nil, false
	}
	nd := len(arr.Chunks)
	for ax := range nd {
		if za.Offset[ax]%arr.Chunks[ax] != 0 || za.Offset[ax] < 0 || za.Offset[ax]+x.Shape[ax] > arr.Shape[ax] {
			return za, nil, false
		}
	}
	return za, arr, true
}

// storeRead returns the arguments and array of x when it is a from_zarr
// op of the array's dtype whose shape, offset and array all have the
// array's chunks' rank, or false.
func storeRead(x *chunk.Op) (chunk.ZarrArgs, *zarr.Array, bool) {
	if x.Kind != chunk.KindFromZarr || len(x.Inputs) != 0 {
		return chunk.ZarrArgs{}, nil, false
	}
	za, ok := x.Args.(chunk.ZarrArgs)
	if !ok {
		return za, nil, false
	}
	arr := zarr.FromDesc(&za.Array)
	nd := len(arr.Chunks)
	if x.DType != arr.DType || len(x.Shape) != nd || len(za.Offset) != nd || len(arr.Shape) != nd {
		return za, nil, false
	}
	return za, arr, true
}

// leadingStoreChunk is wholeStoreChunk for a read of the leading rows
// of a store chunk too: the array's last chunk along its first axis,
// cut short by the array's end (a climate store's 12 last time steps of
// 24). The stored chunk is whole (Zarr pads an edge chunk), and the
// read's elements are its first ones in C order, so a streamed
// reduction takes them and stops; the general path decoded the whole
// chunk into fresh scratch (30 ms of CPU for one such chunk of the
// climate store, against 4 for a streamed chunk).
func leadingStoreChunk(x *chunk.Op) (chunk.ZarrArgs, *zarr.Array, bool) {
	if za, arr, ok := wholeStoreChunk(x); ok {
		return za, arr, true
	}
	za, arr, ok := storeRead(x)
	nd := len(x.Shape)
	if !ok || nd == 0 {
		return za, nil, false
	}
	for ax := range nd {
		if za.Offset[ax] < 0 || za.Offset[ax]%arr.Chunks[ax] != 0 {
			return za, nil, false
		}
		switch {
		case ax == 0:
			if x.Shape[0] < 1 || x.Shape[0] > arr.Chunks[0] || za.Offset[0]+x.Shape[0] != arr.Shape[0] {
				return za, nil, false
			}
		case x.Shape[ax] != arr.Chunks[ax] || za.Offset[ax]+x.Shape[ax] > arr.Shape[ax]:
			return za, nil, false
		}
	}
	return za, arr, true
}

// errEnough stops a streamed read once it has the elements it reads.
var errEnough = errors.New("the read's elements are all in")

// openStoreChunk opens the file of the whole store chunk za names, for
// zarr.Array.DecodeBlocksAt to read a block at a time: a 4 MB climate
// chunk is never read whole into a buffer (4.5 MB a slot, of each
// worker's peak), and each block is decoded while its bytes are in cache.
// ok false means it could not (no file: the fill value; or a failure the
// general path will name).
func openStoreChunk(ctx context.Context, za chunk.ZarrArgs, arr *zarr.Array) (f *os.File, size int64, key string, ok bool) {
	data, err := dataOf(ctx, za.Owner)
	if err != nil {
		return nil, 0, "", false
	}
	idx := make([]int, len(arr.Chunks))
	for ax := range idx {
		idx[ax] = za.Offset[ax] / arr.Chunks[ax]
	}
	key = path.Join(za.Path, arr.Key(idx))
	if f, err = data.Open(key); err != nil {
		return nil, 0, "", false // the general path opens it again, and says what failed
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, "", false
	}
	return f, st.Size(), key, true
}

// A streamHead is the head of a fuse op that streamExpr can run: a
// from_zarr of a whole blosc chunk read by an expr program.
type streamHead struct {
	zarr chunk.ZarrArgs
	arr  *zarr.Array
}

// streamExprHead returns the head of a fuse op of members whose first two
// streamExpr can run, or false.
func streamExprHead(members []chunk.Op) (streamHead, bool) {
	if len(members) < 2 || members[1].Kind != chunk.KindExpr || len(members[1].Inputs) == 0 {
		return streamHead{}, false
	}
	za, arr, ok := wholeStoreChunk(&members[0])
	if !ok || !arr.Blockwise() {
		return streamHead{}, false
	}
	return streamHead{za, arr}, true
}

// streamExpr runs the first two members of a fuse op, a from_zarr of a
// whole blosc chunk and an expr program that reads it (its first input,
// which the program loads block by block), a block of the store chunk
// at a time: the program takes each decoded block while it is in cache
// (expr.StreamKernel), so that the chunk is never written whole and read
// back (the global mean's x * w[:, None] of a climate chunk, the
// anomaly's x - m). The expr member's chunk is ExprKernel's to the bit.
// ok false means the members could not run so (a program that reads the
// chunk out of order, no file, a frame whose blocks split elements), and
// nothing was made.
func streamExpr(ctx context.Context, h streamHead, members []chunk.Op, in []*tensor.Array) (out *tensor.Array, ok bool, err error) {
	e := &members[1]
	ins, err := memberInputs(e, 1, in, nil) // its first, the chunk, is streamed
	if err != nil {
		return nil, false, nil // the general path says what is wrong
	}
	f, size, key, ok := openStoreChunk(ctx, h.zarr, h.arr)
	if !ok {
		return nil, false, nil
	}
	defer f.Close()
	out, ok, err = expr.StreamKernel(ctx, e, ins, 0, h.arr.DType, func(visit func(int, []byte) error) (bool, error) {
		return h.arr.DecodePiecesAt(f, size, streamPiece, visit)
	})
	if err != nil {
		return nil, ok, fmt.Errorf("from_zarr %s: %w", key, err)
	}
	return out, ok, nil
}

// streamPiece is the bytes of a streamed reduction's piece: a float32
// block is unshuffled 16 KB at a time into a buffer that stays in L1,
// which the sums read back at once (zarr.Array.DecodePiecesAt).
const streamPiece = 16 << 10

// streamSums are the accumulators of a streamed chunk.
type streamSums struct {
	sum   []float64 // the values' sums
	first []float64 // m2: the first value each accumulator met
	s2    []float64 // m2: the squared deviations from first
}

// streamReduce runs the streamable fuse op op; ok false means the chunk
// could not be read so (no file: the fill value; a codec other than
// blosc), and nothing was made: the caller runs the op's members.
func streamReduce(ctx context.Context, op *chunk.Op, p *streamPlan) (out *tensor.Array, ok bool, err error) {
	f, fsize, key, ok := openStoreChunk(ctx, p.zarr, p.arr)
	if !ok {
		return nil, false, nil
	}
	defer f.Close()
	var s streamSums
	if len(p.maps) == 1 && !p.m2 && p.arr.Blockwise() && op.DType == tensor.Float64 && slices.Equal(op.Shape, p.maps[0].Shape) {
		// A mean's or a sum's partial is the sums themselves: they are
		// folded straight into the op's output (shared memory, in a
		// worker), not into scratch copied there after (0.15 ms of a
		// climate chunk's 0.5 MB).
		out = tensor.AllocArray(ctx, op.DType, op.Shape, false)
		s.sum = out.Float64s()[:p.inner]
	} else {
		s.sum = takeF64(p.inner)
		defer putF64(s.sum)
	}
	clear(s.sum)
	if p.m2 {
		s.first, s.s2 = takeF64(p.inner), takeF64(p.inner)
		clear(s.s2)
		defer putF64(s.first)
		defer putF64(s.s2)
	}
	size := p.arr.DType.Size()
	limit := p.outer * p.inner * size // the read's bytes: all of the chunk's, or its leading rows'
	ok, err = p.arr.DecodePiecesAt(f, fsize, streamPiece, func(off int, piece []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if off >= limit {
			return errEnough
		}
		piece = piece[:min(len(piece), limit-off)]
		if p.arr.DType == tensor.Float32 {
			s.addF32(off/size, tensor.View[float32](piece), p.inner)
		} else {
			s.addF64(off/size, tensor.View[float64](piece), p.inner)
		}
		return nil
	})
	if !ok {
		return nil, false, nil
	}
	if err != nil && !errors.Is(err, errEnough) {
		return nil, true, fmt.Errorf("from_zarr %s: %w", key, err)
	}
	if out != nil {
		return out, true, nil
	}
	return s.partials(ctx, op, p), true, nil
}

// addF32 folds v, the values from element e of the chunk on, into the
// accumulators, a run of one row along the kept axes at a time.
func (s *streamSums) addF32(e int, v []float32, inner int) {
	var rows [1][]float32
	for len(v) > 0 {
		r := e % inner
		n := min(inner-r, len(v))
		rows[0] = v[:n]
		if e < inner && s.first != nil {
			first := s.first[r : r+n]
			for j, x := range v[:n] {
				first[j] = float64(x)
			}
		}
		elem.AddWideRows(s.sum[r:r+n], rows[:])
		if e >= inner && s.first != nil {
			elem.AddSqDevWideRows(s.s2[r:r+n], s.first[r:r+n], rows[:])
		}
		e += n
		v = v[n:]
	}
}

// addF64 is addF32 for float64 values.
func (s *streamSums) addF64(e int, v []float64, inner int) {
	for len(v) > 0 {
		r := e % inner
		n := min(inner-r, len(v))
		row := v[:n]
		sum := s.sum[r : r+n]
		elem.AddLoop(sum, sum, row)
		if s.first != nil {
			first, s2 := s.first[r:r+n], s.s2[r:r+n]
			if e < inner {
				copy(first, row)
			} else {
				for j, x := range row {
					d := x - first[j]
					s2[j] += d * d
				}
			}
		}
		e += n
		v = v[n:]
	}
}

// partials makes the op's chunk: the one map's partial, or the maps'
// one after the other, as mapsKernel packs them.
func (s *streamSums) partials(ctx context.Context, op *chunk.Op, p *streamPlan) *tensor.Array {
	out := tensor.AllocArray(ctx, op.DType, op.Shape, false) // every element is set below
	d := out.Float64s()
	n := float64(p.outer)
	for _, mo := range p.maps {
		switch mo.Args.(chunk.ReduceArgs).Op {
		case tensor.OpVar, tensor.OpStd:
			for i, v := range s.sum {
				mean := v / n
				dev := mean - s.first[i]
				d[3*i], d[3*i+1], d[3*i+2] = n, mean, max(s.s2[i]-n*dev*dev, 0)
			}
			d = d[3*len(s.sum):]
		default: // a mean's sums, or a float64 sum
			d = d[copy(d, s.sum):]
		}
	}
	return out
}

// streamWrite runs a fuse op of three members, a from_zarr of a whole
// blosc chunk, an elementwise expr program that reads it and a
// to_zarr.write of the program's chunk as one store chunk of a blosc
// array (the anomaly x - m written with to_zarr), a block at a time end
// to end: each block of x is decoded into a buffer that stays in cache,
// the program runs over it into a window of a block's size
// (expr.StreamKernelTo), and the window's bytes go to the encoder
// (zarr.ChunkEncoder), which compresses each block of the output once
// it is whole. Neither chunk is made whole: the general path decoded x
// into 6 MB of scratch and wrote x - m into 6 MB more, a slot's, before
// encoding it. The file is written as toZarrWriteKernel writes it, and
// its bytes are the same (the program's values are ExprKernel's, the
// frame Encode's). ok false means the members could not run so, and
// nothing was written: the caller runs them as it would have.
func streamWrite(ctx context.Context, h streamHead, members []chunk.Op, in []*tensor.Array) (ok bool, err error) {
	if len(members) != 3 || members[2].Kind != chunk.KindToZarrWrite {
		return false, nil
	}
	e, w := &members[1], &members[2]
	a, err := zarrWriteArgs(w)
	if err != nil {
		return false, nil // the general path says what is wrong
	}
	arr := zarr.FromDesc(&a.Array)
	nd := len(arr.Shape)
	// The program's chunk is the store chunk whole: its one chunk, at
	// the store chunk's origin, of its shape and dtype.
	if len(a.Offsets) != 1 || len(w.Inputs) != 2 || w.Inputs[0] != 0 || len(a.Index) != nd ||
		e.DType != arr.DType || !slices.Equal(e.Shape, arr.Chunks) || len(a.Offsets[0]) != nd {
		return false, nil
	}
	for ax := range nd {
		if a.Offsets[0][ax] != a.Index[ax]*arr.Chunks[ax] || a.Offsets[0][ax]+arr.Chunks[ax] > arr.Shape[ax] {
			return false, nil
		}
	}
	ins, err := memberInputs(e, 1, in, nil) // its first, the chunk, is streamed
	if err != nil {
		return false, nil
	}
	data, err := dataOf(ctx, a.Owner)
	if err != nil {
		return false, nil
	}
	bufs := getZarrBufs()
	defer zarrKept.put(bufs)
	enc, ok := arr.ChunkEncoder(bufs.enc)
	if !ok {
		return false, nil
	}
	f, size, key, ok := openStoreChunk(ctx, h.zarr, h.arr)
	if !ok {
		enc.Finish()
		return false, nil
	}
	defer f.Close()
	next := 0
	ok, err = expr.StreamKernelTo(ctx, e, ins, 0, h.arr.DType, func(visit func(int, []byte) error) (bool, error) {
		return h.arr.DecodePiecesAt(f, size, streamPiece, visit)
	}, func(off int, piece []byte) error {
		if off != next {
			return fmt.Errorf("a piece of the output at byte %d, want %d", off, next)
		}
		next += len(piece)
		return enc.Write(piece)
	})
	frame, ferr := enc.Finish()
	bufs.enc = frame
	switch {
	case !ok:
		return false, nil
	case err != nil:
		return true, fmt.Errorf("from_zarr %s: %w", key, err)
	case errors.Is(ferr, zarr.ErrNotStreamed):
		// blosc stores this chunk copied, which takes it whole: the
		// general path makes it so (and reads x again).
		return false, nil
	case ferr != nil:
		return true, fmt.Errorf("to_zarr %s: %w", a.Path, ferr)
	}
	return true, writeStoreChunk(data, a, arr, frame)
}
