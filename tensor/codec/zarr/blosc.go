package zarr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/snappy"
)

// Blosc's frame, as c-blosc 1.x writes it (format version 2):
//
//	0  version (2)        1  inner codec's version
//	2  flags              3  typesize
//	4  nbytes (uncompressed, little-endian int32)
//	8  blocksize         12  cbytes (the whole frame, header included)
//	16 bstarts: one int32 offset a block (absent when memcpyed)
//
// Flags: 0x01 byte shuffle, 0x02 memcpyed (the data follow the header
// raw), 0x04 bit shuffle, 0x10 blocks not split, bits 5-7 the inner codec
// (0 blosclz, 1 lz4 and lz4hc, 2 snappy, 3 zlib, 4 zstd). A block is
// shuffled whole, then cut into typesize streams ("splits", unless 0x10
// or the block is the short last one or too small) compressed apart, each
// stored as an int32 length and its bytes; a stream whose length equals
// its uncompressed size is stored raw.
//
// No maintained pure-Go blosc could be used: the one found
// (mrjoshuak/go-blosc) is refused by the module proxy here, and the others
// wrap the C library with cgo. So the frame is written by hand, checked
// against numcodecs' c-blosc in the tests.
const (
	bloscHeader    = 16
	bloscShuffle   = 0x01
	bloscMemcpyed  = 0x02
	bloscBitShuf   = 0x04
	bloscFuture    = 0x08
	bloscDontSplit = 0x10

	bloscMaxSplits = 16  // c-blosc's MAX_SPLITS
	bloscMinBuffer = 128 // c-blosc's MIN_BUFFERSIZE
)

// The inner codecs' numbers in the flags.
const (
	bloscLZ = iota
	bloscLZ4
	bloscSnappy
	bloscZlib
	bloscZstd
)

var bloscNames = map[string]int{"blosclz": bloscLZ, "lz4": bloscLZ4, "lz4hc": bloscLZ4, "snappy": bloscSnappy, "zlib": bloscZlib, "zstd": bloscZstd}

// bloscFrame is a frame's header, checked against its length.
type bloscFrame struct {
	flags     byte
	typesize  int
	nbytes    int
	blocksize int
	cbytes    int
}

func parseBloscHeader(src []byte) (bloscFrame, error) { return parseBloscHead(src, len(src)) }

// parseBloscHead checks the header at the start of head against a frame
// of size bytes.
func parseBloscHead(src []byte, size int) (bloscFrame, error) {
	var f bloscFrame
	if len(src) < bloscHeader || size < bloscHeader {
		return f, fmt.Errorf("blosc: a frame of %d bytes is shorter than its header", size)
	}
	if v := src[0]; v != 1 && v != 2 {
		return f, fmt.Errorf("blosc: format version %d (this reads 1 and 2)", v)
	}
	f.flags = src[2]
	f.typesize = int(src[3])
	f.nbytes = int(int32(binary.LittleEndian.Uint32(src[4:])))
	f.blocksize = int(int32(binary.LittleEndian.Uint32(src[8:])))
	f.cbytes = int(int32(binary.LittleEndian.Uint32(src[12:])))
	switch {
	case f.flags&bloscFuture != 0:
		return f, errors.New("blosc: flags from a later format (0x08)")
	case f.nbytes < 0 || f.cbytes < bloscHeader:
		return f, fmt.Errorf("blosc: sizes %d and %d in the header", f.nbytes, f.cbytes)
	case f.cbytes > size:
		return f, fmt.Errorf("blosc: the header says %d bytes, the frame has %d", f.cbytes, size)
	case f.nbytes > 0 && (f.typesize == 0 || f.blocksize <= 0):
		return f, fmt.Errorf("blosc: typesize %d and blocksize %d in the header", f.typesize, f.blocksize)
	}
	return f, nil
}

// BloscSize returns the uncompressed size of the blosc frame src.
func BloscSize(src []byte) (int, error) {
	f, err := parseBloscHeader(src)
	return f.nbytes, err
}

// blocks are scratch buffers of a block's size, for the shuffles, kept
// from frame to frame so that they are already mapped and, a block at a
// time, stay in cache. A sync.Pool would drop them at every collection,
// and a worker collects every few chunks: each frame then faulted in a
// fresh block. Release empties the list.
var blocks struct {
	sync.Mutex
	free [][]byte
}

// maxBlocks is the most blocks kept: two a decoding (the bit shuffle's
// steps), for a few decodings at once.
const maxBlocks = 8

func getBlock(n int) []byte {
	blocks.Lock()
	defer blocks.Unlock()
	for i := len(blocks.free) - 1; i >= 0; i-- {
		if b := blocks.free[i]; cap(b) >= n {
			last := len(blocks.free) - 1
			blocks.free[i], blocks.free[last] = blocks.free[last], nil
			blocks.free = blocks.free[:last]
			return b[:n]
		}
	}
	return make([]byte, n)
}

func putBlock(b []byte) {
	blocks.Lock()
	defer blocks.Unlock()
	if len(blocks.free) < maxBlocks {
		blocks.free = append(blocks.free, b)
	}
}

// checkSize says whether frame f can hold a chunk of nbytes: the same
// uncompressed size, and a copied frame exactly its header and its bytes.
func (f bloscFrame) checkSize(nbytes int) error {
	if f.nbytes != nbytes {
		return fmt.Errorf("blosc: the frame holds %d bytes, the chunk is %d", f.nbytes, nbytes)
	}
	if f.flags&bloscMemcpyed != 0 && f.cbytes != bloscHeader+f.nbytes {
		return fmt.Errorf("blosc: a copied frame of %d bytes for %d", f.cbytes, f.nbytes)
	}
	return nil
}

// blockTable gives a compressed frame's inner codec and its number of
// blocks, refusing a codec it does not know or a table of block offsets
// that would not fit the frame.
func (f bloscFrame) blockTable() (inner, nblocks int, err error) {
	inner = int(f.flags >> 5)
	if inner > bloscZstd {
		return 0, 0, fmt.Errorf("blosc: unknown inner codec %d", inner)
	}
	nblocks = (f.nbytes + f.blocksize - 1) / f.blocksize
	if nblocks > (f.cbytes-bloscHeader)/4 {
		return 0, 0, fmt.Errorf("blosc: %d blocks do not fit a frame of %d bytes", nblocks, f.cbytes)
	}
	return inner, nblocks, nil
}

// unshuffleBufs are the pool's buffers a frame's blocks pass through
// between decompression and their output: tmp for a shuffled frame's
// streams, tmp2 for the bit shuffle's steps between them.
type unshuffleBufs struct{ tmp, tmp2 []byte }

func getUnshuffleBufs(f bloscFrame, bs int) unshuffleBufs {
	var u unshuffleBufs
	if f.flags&(bloscShuffle|bloscBitShuf) != 0 {
		u.tmp = getBlock(bs)
	}
	if f.flags&bloscBitShuf != 0 {
		u.tmp2 = getBlock(bs)
	}
	return u
}

func (u unshuffleBufs) put() {
	if u.tmp != nil {
		putBlock(u.tmp)
	}
	if u.tmp2 != nil {
		putBlock(u.tmp2)
	}
}

// bloscDecode decompresses the blosc frame src into dst, whose length
// must be the frame's uncompressed size.
func bloscDecode(dst, src []byte) error {
	f, err := parseBloscHeader(src)
	if err != nil {
		return err
	}
	if err := f.checkSize(len(dst)); err != nil {
		return err
	}
	if f.nbytes == 0 {
		return nil
	}
	src = src[:f.cbytes]
	if f.flags&bloscMemcpyed != 0 {
		copy(dst, src[bloscHeader:])
		return nil
	}
	inner, nblocks, err := f.blockTable()
	if err != nil {
		return err
	}
	// Streams decompress into tmp, unshuffled from there into dst (the
	// bit shuffle's steps use tmp2 between them); unshuffled blocks
	// decompress straight into dst.
	// (No block is larger than the chunk, whatever the header says.)
	u := getUnshuffleBufs(f, min(f.blocksize, f.nbytes))
	defer u.put()
	tmp, tmp2 := u.tmp, u.tmp2
	for b := range nblocks {
		start := int(int32(binary.LittleEndian.Uint32(src[bloscHeader+4*b:])))
		bsize := min(f.blocksize, f.nbytes-b*f.blocksize)
		out := dst[b*f.blocksize : b*f.blocksize+bsize]
		if err := bloscBlock(f, inner, out, tmp, tmp2, src, start, bsize < f.blocksize); err != nil {
			return fmt.Errorf("blosc: block %d: %w", b, err)
		}
	}
	return nil
}

// bloscBlocks decodes the blosc frame src, of nbytes uncompressed bytes,
// a block at a time into one block-sized buffer, which stays in cache,
// and hands each block to visit with its offset in the chunk, in order;
// a copied frame is handed over as it lies in src, in one piece. Every
// offset and length it hands over is a multiple of elem: a frame whose
// blocks are not (a blocksize that is no multiple of the element size)
// is refused before any is visited, with ok false, for the caller to
// decode whole.
func bloscBlocks(src []byte, nbytes, elem int, visit func(off int, block []byte) error) (ok bool, err error) {
	f, err := parseBloscHeader(src)
	if err != nil {
		return true, err
	}
	if err := f.checkSize(nbytes); err != nil {
		return true, err
	}
	if f.nbytes == 0 {
		return true, nil
	}
	src = src[:f.cbytes]
	if f.flags&bloscMemcpyed != 0 {
		return true, visit(0, src[bloscHeader:])
	}
	if elem < 1 || f.blocksize%elem != 0 || f.nbytes%elem != 0 {
		return false, nil
	}
	inner, nblocks, err := f.blockTable()
	if err != nil {
		return true, err
	}
	bs := min(f.blocksize, f.nbytes)
	out := getBlock(bs)
	defer putBlock(out)
	u := getUnshuffleBufs(f, bs)
	defer u.put()
	tmp, tmp2 := u.tmp, u.tmp2
	for b := range nblocks {
		start := int(int32(binary.LittleEndian.Uint32(src[bloscHeader+4*b:])))
		bsize := min(f.blocksize, f.nbytes-b*f.blocksize)
		if err := bloscBlock(f, inner, out[:bsize], tmp, tmp2, src, start, bsize < f.blocksize); err != nil {
			return true, fmt.Errorf("blosc: block %d: %w", b, err)
		}
		if err := visit(b*f.blocksize, out[:bsize]); err != nil {
			return true, err
		}
	}
	return true, nil
}

// bloscBlock decodes one block, starting at offset start of the frame,
// into out.
func bloscBlock(f bloscFrame, inner int, out, tmp, tmp2, src []byte, start int, leftover bool) error {
	bsize := len(out)
	byteShuf := f.flags&bloscShuffle != 0 && f.typesize > 1
	bitShuf := f.flags&bloscBitShuf != 0 && bsize >= f.typesize
	dec := out
	if byteShuf || bitShuf {
		dec = tmp[:bsize]
	}
	splits := 1
	if f.flags&bloscDontSplit == 0 && f.typesize <= bloscMaxSplits && bsize/f.typesize >= bloscMinBuffer && !leftover {
		splits = f.typesize
	}
	n := bsize / splits
	if n*splits != bsize {
		return fmt.Errorf("a block of %d bytes in %d streams", bsize, splits)
	}
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
		in, part := src[pos:pos+cb], dec[s*n:(s+1)*n]
		if cb == n {
			copy(part, in)
		} else if err := bloscInner(inner, part, in); err != nil {
			return fmt.Errorf("stream %d: %w", s, err)
		}
		pos += cb
	}
	switch {
	case byteShuf:
		unshuffle(out, dec, f.typesize)
	case bitShuf:
		bitunshuffle(out, dec, tmp2, f.typesize)
	}
	return nil
}

// bloscInner decompresses src, a stream of the inner codec, into all of
// dst.
func bloscInner(inner int, dst, src []byte) error {
	var n int
	var err error
	switch inner {
	case bloscLZ:
		n, err = blosclzDecode(dst, src)
	case bloscLZ4:
		n, err = lz4Decode(dst, src)
	case bloscSnappy:
		var l int
		if l, err = snappy.DecodedLen(src); err == nil && l != len(dst) {
			return fmt.Errorf("snappy: %d bytes for %d", l, len(dst))
		}
		if err == nil {
			_, err = snappy.Decode(dst, src)
			n = l
		}
	case bloscZlib:
		n, err = inflate(dst, src, false)
	case bloscZstd:
		n, err = unzstd(dst, src)
	}
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("%d bytes decompressed for %d", n, len(dst))
	}
	return nil
}
