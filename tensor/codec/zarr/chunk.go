package zarr

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
)

// Decode turns a chunk's stored bytes src into dst: the chunk's elements,
// C order, little-endian, len(dst) == ChunkBytes(). scratch, when not nil,
// holds a buffer reused from call to call for chunks that must be
// reordered after they are decompressed. Corrupt input is an error that
// says what is wrong, never a panic.
func (a *Array) Decode(dst, src []byte, scratch *[]byte) error {
	if len(dst) != a.ChunkBytes() {
		return fmt.Errorf("zarr: a buffer of %d bytes for a chunk of %d", len(dst), a.ChunkBytes())
	}
	if a.Shard != nil {
		for i := len(a.Codecs) - 1; i >= 0; i-- {
			b, err := a.Codecs[i].decode(src, 4*len(dst)+1<<20)
			if err != nil {
				return err
			}
			src = b
		}
		return a.decodeShard(dst, src)
	}
	direct := a.Perm == nil && !a.BigEndian
	out := dst
	if !direct {
		if scratch == nil {
			scratch = new([]byte)
		}
		if cap(*scratch) < len(dst) {
			*scratch = make([]byte, len(dst))
		}
		out = (*scratch)[:len(dst)]
	}
	// Every codec but the first undone into a buffer of the size its
	// bytes say; the first, into out.
	for i := len(a.Codecs) - 1; i >= 1; i-- {
		// What a codec decodes is the input of the next: never much
		// more than a chunk.
		b, err := a.Codecs[i].decode(src, 2*len(dst)+1<<20)
		if err != nil {
			return err
		}
		src = b
	}
	if len(a.Codecs) == 0 {
		if len(src) != len(out) {
			return fmt.Errorf("zarr: an uncompressed chunk of %d bytes, want %d", len(src), len(out))
		}
		copy(out, src)
	} else if err := a.Codecs[0].decodeInto(out, src); err != nil {
		return err
	}
	size := a.DType.Size()
	if a.BigEndian {
		swapBytes(out, size)
	}
	if a.Perm != nil {
		permute(dst, out, a.storedShape(), a.Perm, size, false)
	} else if !direct {
		copy(dst, out)
	}
	if a.DType == tensor.Bool {
		for i, b := range dst {
			if b > 1 {
				dst[i] = 1
			}
		}
	}
	return nil
}

// DecodeBlocks decodes a chunk's stored bytes src a piece at a time and
// hands each piece of its elements (C order, little-endian) to visit, in
// order, with its byte offset in the chunk: blosc's blocks, each decoded
// into one buffer of a block's size that stays in cache, so that a
// reader that only folds the elements into something small (a
// reduction's sums) never has the whole chunk written to memory and read
// back. visit must not keep a piece. Every offset and length is a
// multiple of the element size. ok is false, and nothing visited, when
// the chunk cannot be decoded so (a codec other than blosc alone, a
// transpose, big-endian or boolean elements, a shard, blocks that split
// elements): the caller decodes it whole with Decode.
func (a *Array) DecodeBlocks(src []byte, visit func(off int, piece []byte) error) (ok bool, err error) {
	if !a.Blockwise() {
		return false, nil
	}
	return bloscBlocks(src, a.ChunkBytes(), a.DType.Size(), visit)
}

// Blockwise reports whether DecodeBlocks can hand a's chunks over a
// piece at a time (blosc alone, little-endian elements in C order, no
// shards, no booleans); a frame whose blocks split elements is still
// refused when it is met.
func (a *Array) Blockwise() bool {
	return a.Shard == nil && a.Perm == nil && !a.BigEndian && a.DType != tensor.Bool &&
		len(a.Codecs) == 1 && a.Codecs[0].ID == "blosc"
}

// Encode returns the stored bytes of a chunk whose elements, C order and
// little-endian, are chunk (len(chunk) == ChunkBytes()).
func (a *Array) Encode(chunk []byte) ([]byte, error) { return a.EncodeTo(nil, chunk) }

// EncodeTo is Encode writing into dst's memory (from dst[:0], grown when
// short): a buffer reused from chunk to chunk spares the writer the new
// pages of each chunk's bytes.
func (a *Array) EncodeTo(dst, chunk []byte) ([]byte, error) {
	if len(chunk) != a.ChunkBytes() {
		return nil, fmt.Errorf("zarr: a chunk of %d bytes, want %d", len(chunk), a.ChunkBytes())
	}
	if a.Shard != nil {
		return nil, fmt.Errorf("zarr: writing shards is not supported")
	}
	b := chunk
	if a.Perm != nil || a.BigEndian {
		b = make([]byte, len(chunk))
		if a.Perm != nil {
			permute(chunk, b, a.storedShape(), a.Perm, a.DType.Size(), true)
		} else {
			copy(b, chunk)
		}
		if a.BigEndian {
			swapBytes(b, a.DType.Size())
		}
	}
	if len(a.Codecs) == 0 {
		return append(dst[:0], b...), nil
	}
	for i, c := range a.Codecs {
		if c.ID == "blosc" && c.Typesize == 0 {
			// Format 2's blosc has no typesize: numcodecs shuffles by
			// the array's element.
			c.Typesize = a.DType.Size()
		}
		var out []byte
		if i == len(a.Codecs)-1 {
			out = dst[:0]
		}
		var err error
		if b, err = c.appendEncode(out, b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// storedShape is the chunk's shape transposed by Perm.
func (a *Array) storedShape() []int {
	s := make([]int, len(a.Perm))
	for k, p := range a.Perm {
		s[k] = a.Chunks[p]
	}
	return s
}

func swapBytes(b []byte, size int) {
	if size < 2 {
		return
	}
	for i := 0; i+size <= len(b); i += size {
		slices.Reverse(b[i : i+size])
	}
}

// permute moves elements of size bytes between a chunk in C order (c)
// and the same chunk transposed by perm in C order (t, of shape tshape:
// t's axis k is the chunk's axis perm[k]). toT chooses the direction.
func permute(c, t []byte, tshape, perm []int, size int, toT bool) {
	// Walk t in C order, finding each element's place in c.
	nd := len(tshape)
	cshape := make([]int, nd)
	for k, p := range perm {
		cshape[p] = tshape[k]
	}
	cstride := make([]int, nd) // in elements, of the chunk in C order
	s := 1
	for ax := nd - 1; ax >= 0; ax-- {
		cstride[ax] = s
		s *= cshape[ax]
	}
	step := make([]int, nd) // in c, for one step along t's axis k
	for k, p := range perm {
		step[k] = cstride[p]
	}
	if s == 0 {
		return
	}
	idx := make([]int, nd)
	inner := tshape[nd-1]
	last := step[nd-1] * size
	ti := 0
	for {
		ci := 0
		for k := 0; k < nd-1; k++ {
			ci += idx[k] * step[k]
		}
		ci *= size
		for range inner {
			if toT {
				copy(t[ti:ti+size], c[ci:ci+size])
			} else {
				copy(c[ci:ci+size], t[ti:ti+size])
			}
			ti += size
			ci += last
		}
		k := nd - 2
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < tshape[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// Overlapping returns the store chunks that overlap the block of shape
// bshape at offset boff of the array: grid indices from lo up to hi,
// exclusive.
func (a *Array) Overlapping(bshape, boff []int) (lo, hi []int) {
	lo, hi = make([]int, len(bshape)), make([]int, len(bshape))
	for ax := range bshape {
		lo[ax] = boff[ax] / a.Chunks[ax]
		hi[ax] = (boff[ax] + bshape[ax] + a.Chunks[ax] - 1) / a.Chunks[ax]
		if bshape[ax] == 0 {
			hi[ax] = lo[ax]
		}
	}
	return lo, hi
}

// Overlap copies into block, the elements (C order) of the block of shape
// bshape at offset boff of the array, the part of the store chunk at grid
// index idx that lies in it: from chunk, the chunk's decoded elements, or
// with chunk nil the fill value.
func (a *Array) Overlap(block []byte, bshape, boff, idx []int, chunk []byte) {
	nd := len(bshape)
	size := a.DType.Size()
	if nd == 0 {
		if chunk == nil {
			copy(block, a.Fill)
		} else {
			copy(block, chunk[:size])
		}
		return
	}
	start, n := make([]int, nd), make([]int, nd)
	for ax := range nd {
		c0 := idx[ax] * a.Chunks[ax]
		s := max(boff[ax], c0)
		e := min(boff[ax]+bshape[ax], c0+a.Chunks[ax], a.Shape[ax])
		if e <= s {
			return
		}
		start[ax], n[ax] = s, e-s
	}
	bstride, cstride := make([]int, nd), make([]int, nd)
	bs, cs := size, size
	for ax := nd - 1; ax >= 0; ax-- {
		bstride[ax], cstride[ax] = bs, cs
		bs *= bshape[ax]
		cs *= a.Chunks[ax]
	}
	run := n[nd-1] * size
	var fill []byte
	if chunk == nil {
		fill = make([]byte, run)
		for i := 0; i < run; i += size {
			copy(fill[i:], a.Fill)
		}
	}
	pos := make([]int, nd) // within the overlap
	for {
		bo, co := 0, 0
		for ax := range nd {
			v := start[ax] + pos[ax]
			bo += (v - boff[ax]) * bstride[ax]
			co += (v - idx[ax]*a.Chunks[ax]) * cstride[ax]
		}
		if chunk == nil {
			copy(block[bo:bo+run], fill)
		} else {
			copy(block[bo:bo+run], chunk[co:co+run])
		}
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if pos[ax]++; pos[ax] < n[ax] {
				break
			}
			pos[ax] = 0
		}
		if ax < 0 {
			return
		}
	}
}

// CopyBox copies, between two blocks of one array (C order, elements of
// size bytes), the elements of src that lie in dst: src has shape sshape
// at offset soff of the array, dst dshape at doff.
func CopyBox(dst []byte, dshape, doff []int, src []byte, sshape, soff []int, size int) {
	nd := len(dshape)
	if nd == 0 {
		copy(dst[:size], src[:size])
		return
	}
	start, n := make([]int, nd), make([]int, nd)
	for ax := range nd {
		s := max(doff[ax], soff[ax])
		e := min(doff[ax]+dshape[ax], soff[ax]+sshape[ax])
		if e <= s {
			return
		}
		start[ax], n[ax] = s, e-s
	}
	dstride, sstride := make([]int, nd), make([]int, nd)
	ds, ss := size, size
	for ax := nd - 1; ax >= 0; ax-- {
		dstride[ax], sstride[ax] = ds, ss
		ds *= dshape[ax]
		ss *= sshape[ax]
	}
	run := n[nd-1] * size
	pos := make([]int, nd)
	for {
		do, so := 0, 0
		for ax := range nd {
			v := start[ax] + pos[ax]
			do += (v - doff[ax]) * dstride[ax]
			so += (v - soff[ax]) * sstride[ax]
		}
		copy(dst[do:do+run], src[so:so+run])
		ax := nd - 2
		for ; ax >= 0; ax-- {
			if pos[ax]++; pos[ax] < n[ax] {
				break
			}
			pos[ax] = 0
		}
		if ax < 0 {
			return
		}
	}
}

// decodeShard decodes the shard src, undone of the codecs after
// sharding, into dst, the whole shard's elements.
func (a *Array) decodeShard(dst, src []byte) error {
	in := &a.Shard.Inner
	grid := in.Grid()
	n := tensor.NumElements(grid)
	ilen := 16 * n
	if a.Shard.IndexCRC {
		ilen += 4
	}
	if len(src) < ilen {
		return fmt.Errorf("zarr: a shard of %d bytes, short of its index of %d", len(src), ilen)
	}
	index := src[len(src)-ilen:]
	if a.Shard.IndexAtStart {
		index = src[:ilen]
	}
	if a.Shard.IndexCRC {
		b, err := Codec{ID: "crc32c"}.decode(index, len(index))
		if err != nil {
			return fmt.Errorf("zarr: shard index: %w", err)
		}
		index = b
	}
	size := a.DType.Size()
	chunk := make([]byte, in.ChunkBytes())
	var fill []byte
	var scratch []byte
	idx := make([]int, len(grid))
	off := make([]int, len(grid))
	zero := make([]int, len(grid))
	for k := range n {
		tensor.UnravelInto(idx, k, grid)
		for ax, i := range idx {
			off[ax] = i * in.Chunks[ax]
		}
		o, l := binary.LittleEndian.Uint64(index[16*k:]), binary.LittleEndian.Uint64(index[16*k+8:])
		if o == math.MaxUint64 && l == math.MaxUint64 {
			if fill == nil {
				fill = make([]byte, len(chunk))
				for i := 0; i < len(fill); i += size {
					copy(fill[i:], a.Fill)
				}
			}
			CopyBox(dst, a.Chunks, zero, fill, in.Chunks, off, size)
			continue
		}
		if o > uint64(len(src)) || l > uint64(len(src))-o {
			return fmt.Errorf("zarr: inner chunk %v at %d, %d bytes, outside a shard of %d", idx, o, l, len(src))
		}
		if err := in.Decode(chunk, src[o:o+l], &scratch); err != nil {
			return fmt.Errorf("zarr: inner chunk %v: %w", idx, err)
		}
		CopyBox(dst, a.Chunks, zero, chunk, in.Chunks, off, size)
	}
	return nil
}
