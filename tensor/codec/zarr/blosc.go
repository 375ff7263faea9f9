package zarr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
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

func parseBloscHeader(src []byte) (bloscFrame, error) {
	var f bloscFrame
	if len(src) < bloscHeader {
		return f, fmt.Errorf("blosc: a frame of %d bytes is shorter than its header", len(src))
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
	case f.cbytes > len(src):
		return f, fmt.Errorf("blosc: the header says %d bytes, the frame has %d", f.cbytes, len(src))
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

// scratch buffers of a block's size, for the shuffles.
var blockPool sync.Pool

func getBlock(n int) []byte {
	if b, ok := blockPool.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]byte, n)
}

func putBlock(b []byte) { blockPool.Put(&b) }

// bloscDecode decompresses the blosc frame src into dst, whose length
// must be the frame's uncompressed size.
func bloscDecode(dst, src []byte) error {
	f, err := parseBloscHeader(src)
	if err != nil {
		return err
	}
	if f.nbytes != len(dst) {
		return fmt.Errorf("blosc: the frame holds %d bytes, the chunk is %d", f.nbytes, len(dst))
	}
	if f.nbytes == 0 {
		return nil
	}
	src = src[:f.cbytes]
	if f.flags&bloscMemcpyed != 0 {
		if f.cbytes != bloscHeader+f.nbytes {
			return fmt.Errorf("blosc: a copied frame of %d bytes for %d", f.cbytes, f.nbytes)
		}
		copy(dst, src[bloscHeader:])
		return nil
	}
	inner := int(f.flags >> 5)
	if inner > bloscZstd {
		return fmt.Errorf("blosc: unknown inner codec %d", inner)
	}
	nblocks := (f.nbytes + f.blocksize - 1) / f.blocksize
	if nblocks > (f.cbytes-bloscHeader)/4 {
		return fmt.Errorf("blosc: %d blocks do not fit a frame of %d bytes", nblocks, f.cbytes)
	}
	shuffled := f.flags&bloscShuffle != 0 && f.typesize > 1 || f.flags&bloscBitShuf != 0
	var tmp []byte
	if shuffled {
		tmp = getBlock(f.blocksize)
		defer putBlock(tmp)
	}
	for b := range nblocks {
		start := int(int32(binary.LittleEndian.Uint32(src[bloscHeader+4*b:])))
		bsize := min(f.blocksize, f.nbytes-b*f.blocksize)
		out := dst[b*f.blocksize : b*f.blocksize+bsize]
		if err := bloscBlock(f, inner, out, tmp, src, start, bsize < f.blocksize); err != nil {
			return fmt.Errorf("blosc: block %d: %w", b, err)
		}
	}
	return nil
}

// bloscBlock decodes one block, starting at offset start of the frame,
// into out.
func bloscBlock(f bloscFrame, inner int, out, tmp, src []byte, start int, leftover bool) error {
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
		bitunshuffle(out, dec, f.typesize)
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
		n, err = lz4.UncompressBlock(src, dst)
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

// bloscEncode compresses src as a blosc frame with the inner codec cname
// at level, byte-shuffled by typesize when shuffle is 1, bit-shuffled when
// 2. It writes what c-blosc reads, more simply than c-blosc: blocks of
// blockSize (the last shorter), never split into streams; a block that
// does not compress is stored raw; a frame that does not compress is
// stored memcpyed.
func bloscEncode(src []byte, cname string, level, shuffle, typesize int) ([]byte, error) {
	inner, ok := bloscNames[cname]
	if !ok || inner == bloscSnappy || inner == bloscLZ {
		return nil, fmt.Errorf("blosc: this writes the inner codecs lz4, zstd and zlib, not %q", cname)
	}
	if typesize < 1 || typesize > 255 {
		return nil, fmt.Errorf("blosc: typesize %d", typesize)
	}
	const blockSize = 256 << 10
	nbytes := len(src)
	flags := byte(bloscDontSplit | inner<<5)
	switch {
	case shuffle == 1 && typesize > 1:
		flags |= bloscShuffle
	case shuffle == 2:
		flags |= bloscBitShuf
	}
	bs := min(blockSize, max(nbytes, 1))
	nblocks := (nbytes + bs - 1) / bs
	out := make([]byte, bloscHeader+4*nblocks, bloscHeader+4*nblocks+nbytes+nbytes/16+64)
	out[0], out[1], out[2], out[3] = 2, 1, flags, byte(typesize)
	binary.LittleEndian.PutUint32(out[4:], uint32(nbytes))
	binary.LittleEndian.PutUint32(out[8:], uint32(bs))
	tmp := getBlock(bs)
	defer putBlock(tmp)
	for b := range nblocks {
		block := src[b*bs : min(nbytes, (b+1)*bs)]
		binary.LittleEndian.PutUint32(out[bloscHeader+4*b:], uint32(len(out)))
		in := block
		if flags&bloscShuffle != 0 {
			in = tmp[:len(block)]
			shuffleBytes(in, block, typesize)
		} else if flags&bloscBitShuf != 0 && len(block) >= typesize {
			in = tmp[:len(block)]
			bitshuffle(in, block, typesize)
		}
		at := len(out)
		out = append(out, 0, 0, 0, 0)
		c, err := compressInner(inner, out, in, level)
		if err != nil {
			return nil, err
		}
		if len(c)-at-4 >= len(in) {
			c = append(c[:at+4], in...) // stored raw
		}
		binary.LittleEndian.PutUint32(c[at:], uint32(len(c)-at-4))
		out = c
		if len(out) >= bloscHeader+nbytes {
			break
		}
	}
	if len(out) >= bloscHeader+nbytes {
		out = append(out[:bloscHeader], src...)
		out[2] = flags | bloscMemcpyed
	}
	binary.LittleEndian.PutUint32(out[12:], uint32(len(out)))
	return out, nil
}

// compressInner appends src compressed by the inner codec to dst.
func compressInner(inner int, dst, src []byte, level int) ([]byte, error) {
	switch inner {
	case bloscLZ4:
		at := len(dst)
		dst = append(dst, make([]byte, lz4.CompressBlockBound(len(src)))...)
		var c lz4.Compressor
		n, err := c.CompressBlock(src, dst[at:])
		if err != nil {
			return nil, err
		}
		if n == 0 { // incompressible: the caller stores it raw
			n = len(src)
			copy(dst[at:], src)
		}
		return dst[:at+n], nil
	case bloscZstd:
		return zstdEncoder(level).EncodeAll(src, dst), nil
	case bloscZlib:
		return deflate(dst, src, level, false)
	}
	return nil, fmt.Errorf("blosc: inner codec %d", inner)
}

// shuffleBytes writes src's elements of typesize bytes byte-plane by
// byte-plane into dst: the first bytes of every element, then the
// second, ...; bytes past the last whole element are copied as they are.
func shuffleBytes(dst, src []byte, typesize int) {
	n := len(src) / typesize
	for j := range typesize {
		plane := dst[j*n : (j+1)*n]
		for i := range plane {
			plane[i] = src[i*typesize+j]
		}
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// unshuffle undoes shuffleBytes.
func unshuffle(dst, src []byte, typesize int) {
	n := len(src) / typesize
	if typesize == 8 {
		p0, p1, p2, p3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		p4, p5, p6, p7 := src[4*n:5*n], src[5*n:6*n], src[6*n:7*n], src[7*n:8*n]
		for i := range n {
			e := dst[i*8 : i*8+8 : i*8+8]
			e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7] = p0[i], p1[i], p2[i], p3[i], p4[i], p5[i], p6[i], p7[i]
		}
	} else {
		for j := range typesize {
			plane := src[j*n : (j+1)*n]
			for i, b := range plane {
				dst[i*typesize+j] = b
			}
		}
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// bitshuffle writes the bits of src's elements plane by plane: for each
// byte j of an element and each bit k of it (least significant first), a
// row of n/8 bytes holding that bit of every element, element i at bit
// i%8 of byte i/8. As c-blosc's, it shuffles only when the number of
// elements n is a multiple of 8, and copies the block as it is otherwise;
// bytes past the last whole element are copied as they are.
func bitshuffle(dst, src []byte, typesize int) {
	n := len(src) / typesize
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	row := n / 8
	for j := range typesize {
		for k := range 8 {
			out := dst[(j*8+k)*row : (j*8+k+1)*row]
			for b := range out {
				var v byte
				for t := range 8 {
					v |= (src[(b*8+t)*typesize+j] >> k & 1) << t
				}
				out[b] = v
			}
		}
	}
	copy(dst[n*typesize:], src[n*typesize:])
}

// bitunshuffle undoes bitshuffle.
func bitunshuffle(dst, src []byte, typesize int) {
	n := len(src) / typesize
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	row := n / 8
	clear(dst[:n*typesize])
	for j := range typesize {
		for k := range 8 {
			in := src[(j*8+k)*row : (j*8+k+1)*row]
			for b, v := range in {
				if v == 0 {
					continue
				}
				for t := range 8 {
					dst[(b*8+t)*typesize+j] |= (v >> t & 1) << k
				}
			}
		}
	}
	copy(dst[n*typesize:], src[n*typesize:])
}
