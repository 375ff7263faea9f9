package zarr

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/snappy"
)

// bloscEncode compresses src as a blosc frame with the inner codec cname
// at level (0-9; 0 stores it copied), byte-shuffled by typesize when
// shuffle is 1, bit-shuffled when 2. It lays the frame out as c-blosc
// 1.x does, so that its size and speed are c-blosc's: the same block
// size for the level, codec and typesize (bloscBlocksize), blocks of the
// fast codecs split into typesize streams (one a byte plane, which
// compress better apart), lz4 at c-blosc's acceleration for the level; a
// stream that does not compress is stored raw, and a frame that does not
// fit in 16 bytes more than src is stored copied.
//
// The frame is appended to dst.
func bloscEncode(dst, src []byte, cname string, level, shuffle, typesize int) ([]byte, error) {
	l, err := bloscLayoutOf(len(src), cname, level, shuffle, typesize)
	if err != nil {
		return nil, err
	}
	base := len(dst)
	out := grow(dst, l.room())[:base]
	stored := false
	if l.compresses() {
		e := getBloscEnc(l.bs)
		defer bloscEncs.Put(e)
		out = out[:base+l.start()]
		stored = true
		for b := range l.nblocks {
			var ok bool
			if out, ok, err = l.putBlock(e, out, base, b, src[b*l.bs:min(l.nbytes, (b+1)*l.bs)]); err != nil {
				return nil, err
			}
			if !ok {
				stored = false // does not compress
				break
			}
		}
	}
	if !stored {
		out = append(out[:base+bloscHeader], src...)
	}
	l.header(out[base:], stored)
	return out, nil
}

// A bloscLayout is how a frame of nbytes is laid out, as c-blosc 1.x
// lays it: the block size, the blocks, the flags, the room it may take.
type bloscLayout struct {
	inner, level, typesize int
	nbytes, bs, nblocks    int
	flags                  byte
	split                  bool
}

// bloscLayoutOf checks bloscEncode's arguments and lays out its frame.
func bloscLayoutOf(nbytes int, cname string, level, shuffle, typesize int) (bloscLayout, error) {
	inner, ok := bloscNames[cname]
	if !ok {
		return bloscLayout{}, fmt.Errorf("blosc: unknown inner codec %q", cname)
	}
	if typesize < 1 {
		return bloscLayout{}, fmt.Errorf("blosc: typesize %d", typesize)
	}
	if typesize > 255 { // as c-blosc: a stream of bytes
		typesize = 1
	}
	if shuffle < 0 || shuffle > 2 {
		return bloscLayout{}, fmt.Errorf("blosc: shuffle %d (0, 1 or 2)", shuffle)
	}
	if nbytes > maxChunk-bloscHeader {
		return bloscLayout{}, fmt.Errorf("blosc: a chunk of %d bytes (at most %d)", nbytes, maxChunk-bloscHeader)
	}
	l := bloscLayout{inner: inner, level: min(max(level, 0), 9), typesize: typesize, nbytes: nbytes, nblocks: 1}
	l.bs = bloscBlocksize(inner, l.level, typesize, nbytes)
	if l.bs > 0 {
		l.nblocks = (nbytes + l.bs - 1) / l.bs
	}
	l.flags = byte(inner << 5)
	switch shuffle {
	case 1:
		l.flags |= bloscShuffle
	case 2:
		l.flags |= bloscBitShuf
	}
	l.split = bloscSplits(inner, typesize, l.bs)
	if !l.split {
		l.flags |= bloscDontSplit
	}
	return l, nil
}

// compresses says whether the frame's blocks are compressed at all (else
// it is stored copied).
func (l *bloscLayout) compresses() bool {
	return l.level > 0 && l.nbytes >= bloscMinBuffer && 4*l.nblocks < l.nbytes
}

// room is what the frame is given past dst's end: c-blosc's room, and
// past it the compressors' worst case of a stream, so that none has to
// grow out (a copy of the frame).
func (l *bloscLayout) room() int { return l.nbytes + bloscHeader + l.bs/4 + 64 }

// start is where the first block's bytes go: past the header and the
// blocks' offsets.
func (l *bloscLayout) start() int { return bloscHeader + 4*l.nblocks }

// putBlock appends block b, the bytes block, to the frame out begun at
// base, and its offset to the frame's table; false means it does not fit
// in c-blosc's room (numcodecs gives it no more), and the frame is to be
// stored copied.
func (l *bloscLayout) putBlock(e *bloscEnc, out []byte, base, b int, block []byte) ([]byte, bool, error) {
	binary.LittleEndian.PutUint32(out[base+bloscHeader+4*b:], uint32(len(out)-base))
	return e.block(out, block, l.inner, l.level, l.flags, l.typesize, l.split && len(block) == l.bs, base+l.nbytes+bloscHeader)
}

// header writes the frame's header at h, the frame whole; stored false
// means its blocks were not compressed and the chunk follows copied.
func (l *bloscLayout) header(h []byte, stored bool) {
	flags := l.flags
	if !stored {
		flags |= bloscMemcpyed
	}
	h[0], h[1], h[2], h[3] = 2, bloscVersions[l.inner], flags, byte(l.typesize)
	binary.LittleEndian.PutUint32(h[4:], uint32(l.nbytes))
	binary.LittleEndian.PutUint32(h[8:], uint32(l.bs))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(h)))
}

// bloscVersions are the inner codecs' format versions c-blosc writes in
// a frame's second byte.
var bloscVersions = [...]byte{bloscLZ: 1, bloscLZ4: 1, bloscSnappy: 1, bloscZlib: 1, bloscZstd: 1}

// bloscBlocksize is c-blosc 1.x's block size for a chunk of nbytes: 32
// KiB (64 for the codecs made for ratio, zlib and zstd) scaled by the
// level, 1/2 at level 1 to 8x from level 6 (16x for zlib and zstd at 9);
// for blocks split into streams, a stream's worth times typesize, from
// 64 KiB to 1 MiB; never more than the chunk, and a multiple of
// typesize.
func bloscBlocksize(inner, level, typesize, nbytes int) int {
	if nbytes < typesize {
		return 1
	}
	bs := nbytes
	if nbytes >= 32<<10 {
		bs = 32 << 10
		hcr := inner == bloscZlib || inner == bloscZstd
		if hcr {
			bs *= 2
		}
		switch level {
		case 0:
			bs /= 4
		case 1:
			bs /= 2
		case 2:
		case 3:
			bs *= 2
		case 4, 5:
			bs *= 4
		default: // 6 to 9
			bs *= 8
			if level == 9 && hcr {
				bs *= 2
			}
		}
	}
	if level > 0 && bloscSplits(inner, typesize, bs) {
		bs = min(bs, 1<<18) * typesize
		bs = min(max(bs, 1<<16), 1<<20)
	}
	bs = min(bs, nbytes)
	if bs > typesize {
		bs = bs / typesize * typesize
	}
	return bs
}

// bloscSplits says whether c-blosc (in its default, forward-compatible
// mode) splits blocks of bs bytes into typesize streams: for every
// codec but zstd, and elements of 16 bytes at most, 128 of them a block
// at least.
func bloscSplits(inner, typesize, bs int) bool {
	return inner != bloscZstd && typesize <= bloscMaxSplits && bs/typesize >= bloscMinBuffer
}

// A bloscEnc is what encoding a frame reuses from block to block: the
// shuffled block, the bit shuffle's scratch, lz4's table, a block
// staged.
type bloscEnc struct {
	shuf, tmp []byte
	stage     []byte // ChunkEncoder's: a block whose bytes came in pieces
	lz4       lz4Table
	lz        blosclzTable
}

var bloscEncs sync.Pool

func getBloscEnc(bs int) *bloscEnc {
	e, _ := bloscEncs.Get().(*bloscEnc)
	if e == nil {
		e = new(bloscEnc)
	}
	if cap(e.shuf) < bs {
		e.shuf, e.tmp = make([]byte, bs), make([]byte, bs)
	}
	return e
}

// block appends block, shuffled and compressed in one stream or (split)
// typesize, to out, within limit bytes; it says false when that does
// not fit.
func (e *bloscEnc) block(out, block []byte, inner, level int, flags byte, typesize int, split bool, limit int) ([]byte, bool, error) {
	in := block
	switch {
	case flags&bloscShuffle != 0 && typesize > 1:
		in = e.shuf[:len(block)]
		shuffleBytes(in, block, typesize)
	case flags&bloscBitShuf != 0 && len(block) >= typesize:
		in = e.shuf[:len(block)]
		bitshuffle(in, block, e.tmp, typesize)
	}
	splits := 1
	if split {
		splits = typesize
	}
	n := len(in) / splits
	for s := range splits {
		stream := in[s*n : (s+1)*n]
		at := len(out)
		if at+4 >= limit {
			return out, false, nil
		}
		out = append(out, 0, 0, 0, 0)
		var err error
		if out, err = e.compress(out, stream, inner, level); err != nil {
			return nil, false, err
		}
		if c := len(out) - at - 4; c >= n || c == 0 {
			if at+4+n > limit {
				return out, false, nil
			}
			out = append(out[:at+4], stream...) // stored raw
		}
		if len(out) > limit {
			return out, false, nil
		}
		binary.LittleEndian.PutUint32(out[at:], uint32(len(out)-at-4))
	}
	return out, true, nil
}

// compress appends stream compressed by the inner codec to out; what
// comes out no shorter than stream is stored raw by the caller.
func (e *bloscEnc) compress(out, stream []byte, inner, level int) ([]byte, error) {
	switch inner {
	case bloscLZ4:
		// c-blosc's acceleration for lz4 (and plain lz4 for lz4hc,
		// which decoders read alike).
		out = grow(out, lz4Bound(len(stream)))
		return lz4Compress(out, stream, 10-level, &e.lz4), nil
	case bloscLZ:
		out = grow(out, len(stream)+len(stream)/32+16)
		return blosclzCompress(out, stream, &e.lz), nil
	case bloscSnappy:
		at := len(out)
		out = grow(out, snappy.MaxEncodedLen(len(stream)))
		c := snappy.Encode(out[at:cap(out)], stream)
		return out[:at+len(c)], nil
	case bloscZstd:
		// c-blosc's zstd levels: 2 clevel - 1 below 9.
		return zstdEncoder(min(2*level-1, 19), false).EncodeAll(stream, out), nil
	case bloscZlib:
		return deflate(out, stream, level, false)
	}
	return nil, fmt.Errorf("blosc: inner codec %d", inner)
}

// grow makes room for n more bytes past len(b).
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}
