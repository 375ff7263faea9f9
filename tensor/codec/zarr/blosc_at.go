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
	return a.DecodePiecesAt(r, size, 0, visit)
}

// DecodePiecesAt is DecodeBlocksAt handing the chunk to visit in pieces
// of at most piece bytes (a multiple of the element size and of 128; 0:
// a block a piece). A float32 block stored byte-shuffled is unshuffled a
// piece at a time into the first piece bytes of the block buffer,
// straight from its four byte planes where they lie (a plane blosc
// stored raw is read in the frame's bytes, not copied beside the others
// first), so that a reader that folds each piece away (a streamed sum)
// reads it from L1 rather than 512 KB of it back from L2. Other frames
// are handed over a block at a time, as DecodeBlocksAt does.
func (a *Array) DecodePiecesAt(r io.ReaderAt, size int64, piece int, visit func(off int, piece []byte) error) (ok bool, err error) {
	if piece < 0 || piece%128 != 0 {
		return false, fmt.Errorf("blosc: pieces of %d bytes", piece)
	}
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
		if piece > 0 && elem == 4 && f.typesize == 4 && f.flags&bloscShuffle != 0 {
			var planes [4][]byte
			if err := bloscPlanes(f, inner, &planes, tmp, src, bloscHeader, bsize); err != nil {
				return true, fmt.Errorf("blosc: block %d: %w", b, err)
			}
			for o := 0; o < bsize; o += piece {
				k := min(piece, bsize-o)
				i := o / 4
				p := [4][]byte{planes[0][i:], planes[1][i:], planes[2][i:], planes[3][i:]}
				unshufflePlanes(out[:k], &p)
				if err := visit(b*f.blocksize+o, out[:k]); err != nil {
					return true, err
				}
			}
			continue
		}
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

// bloscPlanes decompresses the streams of a byte-shuffled block of
// float32 elements, bsize bytes starting at offset start of src, and
// points planes at its four byte planes: in tmp for a stream that was
// compressed, in src itself for one stored raw. The streams are
// bloscBlock's (splits the same way, the same checks).
func bloscPlanes(f bloscFrame, inner int, planes *[4][]byte, tmp, src []byte, start, bsize int) error {
	splits := 1
	if f.flags&bloscDontSplit == 0 && f.typesize <= bloscMaxSplits && bsize/f.typesize >= bloscMinBuffer && bsize >= f.blocksize {
		splits = f.typesize
	}
	n := bsize / splits
	if n*splits != bsize || bsize%4 != 0 {
		return fmt.Errorf("a block of %d bytes in %d streams", bsize, splits)
	}
	var streams [4][]byte
	pos := start
	for s := range splits {
		if pos < bloscHeader || pos > len(src)-4 {
			return fmt.Errorf("stream %d at offset %d, outside the frame", s, pos)
		}
		cb := int(int32(binary.LittleEndian.Uint32(src[pos:])))
		pos += 4
		if cb < 0 || cb > len(src)-pos {
			return fmt.Errorf("stream %d of %d bytes at offset %d, past the frame", s, cb, pos)
		}
		in := src[pos : pos+cb]
		if cb == n {
			streams[s] = in
		} else {
			part := tmp[s*n : (s+1)*n]
			if err := bloscInner(inner, part, in); err != nil {
				return fmt.Errorf("stream %d: %w", s, err)
			}
			streams[s] = part
		}
		pos += cb
	}
	// Plane j is bytes j*ne on of the block: stream j when the block
	// was split in four, a quarter of the one stream when it was not.
	ne := bsize / 4
	for j := range planes {
		s, o := j*ne/n, j*ne%n
		planes[j] = streams[s][o : o+ne]
	}
	return nil
}

// unshufflePlanes interleaves the first len(dst)/4 bytes of the four
// byte planes p into dst's float32-sized elements.
func unshufflePlanes(dst []byte, p *[4][]byte) {
	n := len(dst) / 4
	p0, p1, p2, p3 := p[0][:n], p[1][:n], p[2][:n], p[3][:n]
	for i := unshufflePlanesVector(dst, p, n); i < n; i++ {
		dst[4*i], dst[4*i+1], dst[4*i+2], dst[4*i+3] = p0[i], p1[i], p2[i], p3[i]
	}
}
