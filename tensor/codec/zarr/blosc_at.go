package zarr

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// DecodeBlocksAt is DecodeBlocks of a chunk's stored bytes read from r,
// size bytes long, a block at a time: the frame's header and block
// offsets first, then each block's compressed bytes into one buffer of a
// block's size, decoded from there. The chunk's file is never held whole
// (a climate chunk's 4 MB a slot, for a reader that keeps 0.5 MB), and
// each block is decoded while its bytes are in cache. Blocks are handed
// to visit in order whatever order the frame stores them in (c-blosc's
// threads write them as they finish). ok false, and nothing visited,
// means the chunk cannot be decoded so (see DecodeBlocks): the caller
// reads and decodes it whole.
func (a *Array) DecodeBlocksAt(r io.ReaderAt, size int64, visit func(off int, piece []byte) error) (ok bool, err error) {
	if !a.Blockwise() {
		return false, nil
	}
	nbytes, elem := a.ChunkBytes(), a.DType.Size()
	var hdr [bloscHeader]byte
	if size >= bloscHeader {
		if _, err := r.ReadAt(hdr[:], 0); err != nil {
			return true, fmt.Errorf("blosc: reading the header: %w", err)
		}
	}
	f, err := parseBloscHead(hdr[:], int(min(size, 1<<40)))
	if err != nil {
		return true, err
	}
	if err := f.checkSize(nbytes); err != nil {
		return true, err
	}
	if f.nbytes == 0 {
		return true, nil
	}
	if f.flags&bloscMemcpyed != 0 {
		return true, copiedPieces(r, f.nbytes, visit)
	}
	if elem < 1 || f.blocksize%elem != 0 || f.nbytes%elem != 0 {
		return false, nil
	}
	inner, nblocks, err := f.blockTable()
	if err != nil {
		return true, err
	}
	offs := make([]byte, 4*nblocks)
	if _, err := r.ReadAt(offs, bloscHeader); err != nil {
		return true, fmt.Errorf("blosc: reading the block offsets: %w", err)
	}
	// A block's bytes run from its start to the next block's start in
	// the file, or to the frame's end.
	starts := make([]int, nblocks)
	for b := range starts {
		starts[b] = int(int32(binary.LittleEndian.Uint32(offs[4*b:])))
		if starts[b] < bloscHeader+4*nblocks || starts[b] >= f.cbytes {
			return true, fmt.Errorf("blosc: block %d at offset %d, outside the frame", b, starts[b])
		}
	}
	sorted := slices.Clone(starts)
	slices.Sort(sorted)
	bs := min(f.blocksize, f.nbytes)
	out := getBlock(bs)
	defer putBlock(out)
	u := getUnshuffleBufs(f, bs)
	defer u.put()
	tmp, tmp2 := u.tmp, u.tmp2
	// The compressed block goes after a copy of the header, so that its
	// streams are read at bloscHeader on, bounded by the buffer.
	in := getBlock(bloscHeader + bs + bs/8 + 64)
	defer putBlock(in)
	for b, start := range starts {
		end := f.cbytes
		if i, _ := slices.BinarySearch(sorted, start); i+1 < len(sorted) {
			end = sorted[i+1]
		}
		if bloscHeader+end-start > cap(in) {
			// Larger than any compressor makes a block: refused rather
			// than read into a buffer grown for it.
			return true, fmt.Errorf("blosc: block %d of %d compressed bytes for %d", b, end-start, bs)
		}
		src := in[:bloscHeader+end-start]
		copy(src, hdr[:])
		if _, err := r.ReadAt(src[bloscHeader:], int64(start)); err != nil {
			return true, fmt.Errorf("blosc: reading block %d: %w", b, err)
		}
		bsize := min(f.blocksize, f.nbytes-b*f.blocksize)
		if err := bloscBlock(f, inner, out[:bsize], tmp, tmp2, src, bloscHeader, bsize < f.blocksize); err != nil {
			return true, fmt.Errorf("blosc: block %d: %w", b, err)
		}
		if err := visit(b*f.blocksize, out[:bsize]); err != nil {
			return true, err
		}
	}
	return true, nil
}

// copiedPieces hands a copied frame's nbytes to visit a piece at a time,
// read from r after the header.
func copiedPieces(r io.ReaderAt, nbytes int, visit func(off int, piece []byte) error) error {
	const piece = 512 << 10 // a multiple of every element size
	buf := getBlock(min(piece, nbytes))
	defer putBlock(buf)
	for off := 0; off < nbytes; off += piece {
		p := buf[:min(piece, nbytes-off)]
		if _, err := r.ReadAt(p, int64(bloscHeader+off)); err != nil {
			return fmt.Errorf("blosc: reading a copied frame at %d: %w", off, err)
		}
		if err := visit(off, p); err != nil {
			return err
		}
	}
	return nil
}
