package zarr

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// A Codec is one bytes-to-bytes step of a chunk's pipeline: a compressor
// (format 2's "compressor", format 3's codecs after "bytes") or a
// checksum.
type Codec struct {
	// ID names it: "zlib", "gzip", "zstd", "lz4", "blosc" or "crc32c".
	ID    string
	Level int // the compression level written
	// Blosc: the inner codec ("lz4", "zstd", "zlib", "blosclz", ...), the
	// shuffle (0 none, 1 bytes, 2 bits) and the element size shuffled.
	Cname    string
	Shuffle  int
	Typesize int
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decodeInto undoes c on src, filling all of dst.
func (c Codec) decodeInto(dst, src []byte) error {
	var n int
	var err error
	switch c.ID {
	case "zlib":
		n, err = inflate(dst, src, false)
	case "gzip":
		n, err = inflate(dst, src, true)
	case "zstd":
		n, err = unzstd(dst, src)
	case "lz4":
		if len(src) < 4 {
			return fmt.Errorf("lz4: %d bytes, short of the 4-byte size", len(src))
		}
		if size := int(int32(binary.LittleEndian.Uint32(src))); size != len(dst) {
			return fmt.Errorf("lz4: the size prefix says %d bytes, the chunk is %d", size, len(dst))
		}
		n, err = lz4Decode(dst, src[4:])
	case "blosc":
		return bloscDecode(dst, src)
	default:
		b, err := c.decode(src, len(dst))
		if err != nil {
			return err
		}
		if len(b) != len(dst) {
			return fmt.Errorf("%s: %d bytes for a chunk of %d", c.ID, len(b), len(dst))
		}
		copy(dst, b)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.ID, err)
	}
	if n != len(dst) {
		return fmt.Errorf("%s: %d bytes decompressed for a chunk of %d", c.ID, n, len(dst))
	}
	return nil
}

// decode undoes c on src, of a size only its bytes say, up to limit
// bytes: what is longer is an error (a few bytes of zstd or deflate can
// say gigabytes).
func (c Codec) decode(src []byte, limit int) ([]byte, error) {
	switch c.ID {
	case "crc32c":
		if len(src) < 4 {
			return nil, fmt.Errorf("crc32c: %d bytes, short of the checksum", len(src))
		}
		body := src[:len(src)-4]
		if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(src[len(body):]); got != want {
			return nil, fmt.Errorf("crc32c: checksum %08x, the chunk says %08x", got, want)
		}
		return body, nil
	case "lz4":
		if len(src) < 4 {
			return nil, fmt.Errorf("lz4: %d bytes, short of the 4-byte size", len(src))
		}
		return c.sized(src, int(int32(binary.LittleEndian.Uint32(src))), limit)
	case "blosc":
		n, err := BloscSize(src)
		if err != nil {
			return nil, err
		}
		return c.sized(src, n, limit)
	case "zstd", "zlib", "gzip":
		var h zstd.Header
		if c.ID == "zstd" && h.Decode(src) == nil && h.HasFCS && h.FrameContentSize <= maxChunk {
			return c.sized(src, int(h.FrameContentSize), limit)
		}
		var r io.Reader
		var err error
		if c.ID == "zstd" {
			var d *zstd.Decoder
			if d, err = zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1)); err == nil {
				defer d.Close()
				r = d
			}
		} else {
			r, err = newInflater(bytes.NewReader(src), c.ID == "gzip")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.ID, err)
		}
		b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
		if err == nil && len(b) > limit {
			err = fmt.Errorf("more than %d bytes", limit)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.ID, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown codec %q", c.ID)
}

// maxChunk bounds a chunk's decoded size, as c-blosc and numcodecs do.
const maxChunk = 1<<31 - 1

func (c Codec) sized(src []byte, n, limit int) ([]byte, error) {
	if n < 0 || n > limit {
		return nil, fmt.Errorf("%s: a chunk of %d bytes from %d", c.ID, n, len(src))
	}
	dst := make([]byte, n)
	return dst, c.decodeInto(dst, src)
}

// encode applies c to src.
func (c Codec) encode(src []byte) ([]byte, error) { return c.appendEncode(nil, src) }

// appendEncode appends src, c applied to it, to dst: a dst reused from
// chunk to chunk spares the pages of a new one (fresh pages cost more
// to touch than lz4 takes to fill them).
func (c Codec) appendEncode(dst, src []byte) ([]byte, error) {
	switch c.ID {
	case "zlib":
		return deflate(dst, src, c.Level, false)
	case "gzip":
		return deflate(dst, src, c.Level, true)
	case "zstd":
		return zstdEncoder(c.Level, len(src) < 256).EncodeAll(src, grow(dst, len(src)/2+64)), nil
	case "lz4":
		// numcodecs' framing: the size, then one block, compressed as
		// liblz4's default (acceleration 1) does.
		dst = binary.LittleEndian.AppendUint32(grow(dst, 4+lz4Bound(len(src))), uint32(len(src)))
		t := lz4Tables.Get().(*lz4Table)
		defer lz4Tables.Put(t)
		return lz4Compress(dst, src, 1, t), nil
	case "blosc":
		return bloscEncode(dst, src, c.Cname, c.Level, c.Shuffle, c.Typesize)
	case "crc32c":
		return binary.LittleEndian.AppendUint32(append(dst, src...), crc32.Checksum(src, castagnoli)), nil
	}
	return nil, fmt.Errorf("unknown codec %q", c.ID)
}

var lz4Tables = sync.Pool{New: func() any { return new(lz4Table) }}

// The zstd decoder and encoders are shared by a process's kernels, and
// they keep what they grew: a decoder's history of a single-segment frame
// is as large as the frame's content (a store chunk: 80 MB), one a
// decoder of the pool. Release drops them when the process goes quiet.
var (
	zstdMu   sync.Mutex
	zstdDec  *zstd.Decoder
	zstdEncs = map[int]*zstd.Encoder{}
)

// zstdDecoder is shared: its DecodeAll is safe for concurrent use.
func zstdDecoder() *zstd.Decoder {
	zstdMu.Lock()
	defer zstdMu.Unlock()
	if zstdDec == nil {
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxChunk))
	}
	return zstdDec
}

// Release lets the collector take the shared zstd decoder and encoders
// and the buffers they grew; the next use makes new ones. A kernel still
// using one keeps it until it is done: they are dropped, not closed (used
// only through DecodeAll and EncodeAll, they run no goroutines).
func Release() {
	zstdMu.Lock()
	defer zstdMu.Unlock()
	zstdDec = nil
	zstdEncs = map[int]*zstd.Encoder{}
}

// unzstd decodes the zstd frames of src into dst, refusing a frame that
// says it is bigger than dst before it allocates.
func unzstd(dst, src []byte) (int, error) {
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return 0, err
	}
	if h.HasFCS && h.FrameContentSize > uint64(len(dst)) {
		return 0, fmt.Errorf("a frame of %d bytes for %d", h.FrameContentSize, len(dst))
	}
	if !h.HasFCS || h.FrameContentSize != uint64(len(dst)) {
		// Of a size the frame does not say (or one frame of several):
		// read no more than dst holds.
		b, err := Codec{ID: "zstd"}.decode(src, len(dst))
		return copy(dst, b), err
	}
	// Straight into dst. The decoder uses room past len(dst) when cap
	// gives it (up to zstdSlack bytes, copies of 16 at a time), and
	// takes a careful path at the end when not; were it ever to grow a
	// buffer of its own instead, what it wrote is copied.
	out, err := zstdDecoder().DecodeAll(src, dst[:0])
	if err != nil {
		return 0, err
	}
	if len(out) != len(dst) {
		return len(out), nil
	}
	if len(dst) > 0 && &out[0] != &dst[0] {
		copy(dst, out)
	}
	return len(out), nil
}

// zstdSlack is the room past its end the zstd decoder wants in its output
// (klauspost/compress' compressedBlockOverAlloc, with a margin).
const zstdSlack = 64

// zstdEncoder returns the shared encoder of numcodecs' level (1 to 22;
// 0 and below as libzstd's default, 3).
//
// A frame of under 256 bytes is written as a single segment: only then
// does its header carry the content size (zstd omits it from a small
// frame with a window), and numcodecs, which sizes its output from the
// header, refuses a frame without it ("Zstd decompression error: invalid
// input data"). Larger frames always carry it.
func zstdEncoder(level int, small bool) *zstd.Encoder {
	zstdMu.Lock()
	defer zstdMu.Unlock()
	key := 2 * level
	if small {
		key++
	}
	if e, ok := zstdEncs[key]; ok {
		return e
	}
	l := level
	if l <= 0 {
		l = 3
	}
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(l)), zstd.WithAllLitEntropyCompression(true), zstd.WithSingleSegment(small))
	zstdEncs[key] = e
	return e
}

// Inflaters are reused: each holds tens of KiB of state.
var zlibPool, gzipPool sync.Pool

type resetter interface {
	io.ReadCloser
	Reset(r io.Reader, dict []byte) error
}

func newInflater(r io.Reader, gz bool) (io.Reader, error) {
	if gz {
		if z, ok := gzipPool.Get().(*gzip.Reader); ok {
			return z, z.Reset(r)
		}
		return gzip.NewReader(r)
	}
	if z, ok := zlibPool.Get().(resetter); ok {
		return z, z.Reset(r, nil)
	}
	return zlib.NewReader(r)
}

func putInflater(r io.Reader, gz bool) {
	if gz {
		gzipPool.Put(r)
	} else {
		zlibPool.Put(r)
	}
}

// inflate decompresses the zlib (or gzip) stream src into dst and
// returns the bytes written; more data than dst holds is an error.
func inflate(dst, src []byte, gz bool) (int, error) {
	r, err := newInflater(bytes.NewReader(src), gz)
	if err != nil {
		return 0, err
	}
	n, err := io.ReadFull(r, dst)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return n, fmt.Errorf("%d bytes, short of %d", n, len(dst))
	}
	if err != nil {
		return n, err
	}
	// Reading on to the end checks the stream's checksum.
	var one [1]byte
	m, err := r.Read(one[:])
	for m == 0 && err == nil {
		m, err = r.Read(one[:])
	}
	if m > 0 {
		return n, fmt.Errorf("more than %d bytes", len(dst))
	}
	if err != io.EOF {
		return n, err
	}
	putInflater(r, gz)
	return n, nil
}

// deflate appends src compressed as a zlib (or gzip) stream at level
// (1-9; 0 and below as zlib's default) to dst.
func deflate(dst, src []byte, level int, gz bool) ([]byte, error) {
	if level <= 0 || level > 9 {
		level = flate.DefaultCompression
	}
	buf := bytes.NewBuffer(dst)
	var w io.WriteCloser
	var err error
	if gz {
		w, err = gzip.NewWriterLevel(buf, level)
	} else {
		w, err = zlib.NewWriterLevel(buf, level)
	}
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(src); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
