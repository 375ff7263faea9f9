package shm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"marsfs/tensor"
)

// A segment file holds one chunk: a header, then the chunk's data in C order
// at an offset that is a multiple of 64 bytes (Arrow's alignment for a
// primitive array's values buffer; the file itself is page aligned when
// mapped). All integers are little-endian.
//
//	offset  size      field
//	0       8         magic "MARSSHM1"
//	8       4         flags (bit 0: sealed, the data is complete)
//	12      1         dtype (tensor.DType)
//	13      1         reserved, 0
//	14      2         ndim
//	16      8         chunk ID
//	24      8         data length in bytes
//	32      8         data offset
//	40      8*ndim    shape
//	...               zero padding to the data offset
//
// Spill files have the same layout, so a reader maps a chunk alike wherever
// it lives. Bools are one byte each (0 or 1) as in NumPy and in the kernels;
// Arrow's bit-packed booleans are made only when rendering Arrow IPC.
const (
	magic      = "MARSSHM1"
	headerBase = 40
	align      = 64
	flagSealed = 1
	maxDims    = 64
)

// dataOffset is where the data of a chunk of ndim dimensions starts.
func dataOffset(ndim int) int {
	return (headerBase + 8*ndim + align - 1) / align * align
}

// putHeader writes a header for the chunk into b, which holds at least
// dataOffset(len(shape)) bytes.
func putHeader(b []byte, id uint64, dt tensor.DType, shape []int, n int64, sealed bool) {
	off := dataOffset(len(shape))
	clear(b[:off])
	copy(b, magic)
	setSealed(b, sealed)
	b[12] = byte(dt)
	binary.LittleEndian.PutUint16(b[14:], uint16(len(shape)))
	binary.LittleEndian.PutUint64(b[16:], id)
	binary.LittleEndian.PutUint64(b[24:], uint64(n))
	binary.LittleEndian.PutUint64(b[32:], uint64(off))
	for i, s := range shape {
		binary.LittleEndian.PutUint64(b[headerBase+8*i:], uint64(s))
	}
}

func setSealed(b []byte, sealed bool) {
	var f uint32
	if sealed {
		f = flagSealed
	}
	binary.LittleEndian.PutUint32(b[8:], f)
}

// header is a decoded segment header.
type header struct {
	id     uint64
	dtype  tensor.DType
	shape  []int
	n      int64
	off    int64
	sealed bool
}

// parseHeader decodes and checks the header at the start of b, a segment of
// size bytes.
func parseHeader(b []byte, size int64) (header, error) {
	var h header
	if len(b) < headerBase || string(b[:8]) != magic {
		return h, errors.New("not a marsfs chunk segment")
	}
	h.sealed = binary.LittleEndian.Uint32(b[8:])&flagSealed != 0
	h.dtype = tensor.DType(b[12])
	ndim := int(binary.LittleEndian.Uint16(b[14:]))
	h.id = binary.LittleEndian.Uint64(b[16:])
	h.n = int64(binary.LittleEndian.Uint64(b[24:]))
	h.off = int64(binary.LittleEndian.Uint64(b[32:]))
	if !h.dtype.Valid() || ndim > maxDims || h.off != int64(dataOffset(ndim)) || len(b) < int(h.off) {
		return h, errors.New("corrupt chunk segment header")
	}
	if h.n < 0 || h.off+h.n > size || h.off+h.n < h.off {
		return h, fmt.Errorf("chunk segment of %d bytes too short for %d bytes of data", size, h.n)
	}
	h.shape = make([]int, ndim)
	elems := int64(1)
	for i := range h.shape {
		s := int64(binary.LittleEndian.Uint64(b[headerBase+8*i:]))
		if s < 0 || s > h.n+1 {
			return h, errors.New("corrupt chunk segment shape")
		}
		h.shape[i] = int(s)
		elems *= s
		if elems > h.n+1 {
			elems = h.n + 1 // stays wrong without overflowing
		}
	}
	if elems*int64(h.dtype.Size()) != h.n {
		return h, fmt.Errorf("chunk segment shape %v of %v disagrees with %d bytes of data", h.shape, h.dtype, h.n)
	}
	return h, nil
}

// mapFile maps size bytes of f. With addr non-nil the mapping replaces
// whatever was mapped at addr (MAP_FIXED): this is how a chunk keeps its
// address when it moves between shared memory and its spill file.
func mapFile(f *os.File, addr unsafe.Pointer, size int64, prot int) (unsafe.Pointer, error) {
	return mapFileFlags(f, addr, size, prot, 0)
}

// mapFilePopulated maps size bytes of f with its page tables filled at
// once (MAP_POPULATE): a new segment's writable mapping, every page of
// which its chunk's maker writes. Faulted in a page at a time, a 6 MB
// chunk took 1,536 faults, which were a third of the CPU of the workers
// that store climate chunks (the writes of their decoders and finals);
// filled in one call, the kernel maps the pages fallocate gave in a
// batch.
func mapFilePopulated(f *os.File, size int64, prot int) (unsafe.Pointer, error) {
	return mapFileFlags(f, nil, size, prot, unix.MAP_POPULATE)
}

func mapFileFlags(f *os.File, addr unsafe.Pointer, size int64, prot, extra int) (unsafe.Pointer, error) {
	flags := unix.MAP_SHARED | extra
	if addr != nil {
		flags |= unix.MAP_FIXED
	}
	p, err := unix.MmapPtr(int(f.Fd()), 0, addr, uintptr(size), prot, flags)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", f.Name(), err)
	}
	return p, nil
}

func unmap(addr unsafe.Pointer, size int64) error {
	return unix.MunmapPtr(addr, uintptr(size))
}

// A Mapping is a chunk mapped read-only by a process that does not own it:
// the 9P server reading a result, or another worker on the host. Its Data are
// the owner's pages, not a copy.
type Mapping struct {
	ID    uint64
	DType tensor.DType
	Shape []int
	Data  []byte // read-only: writing faults

	addr unsafe.Pointer
	size int64
}

// Array returns the chunk as an array aliasing the mapping; it is valid
// until Close.
func (m *Mapping) Array() *tensor.Array {
	return &tensor.Array{DType: m.DType, Shape: m.Shape, Data: m.Data}
}

// Close unmaps the chunk. Data must not be used afterwards.
func (m *Mapping) Close() error {
	if m.addr == nil {
		return nil
	}
	err := unmap(m.addr, m.size)
	m.addr, m.Data = nil, nil
	return err
}

// MapChunk maps the sealed chunk in the segment or spill file at path
// read-only. Paths come from Store.Path. The mapping stays valid after the
// owner deletes or spills the chunk (the pages live until the last mapping
// goes); the owner's Close or a crash does not reach it either.
func MapChunk(path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	size := st.Size()
	if size < headerBase {
		return nil, fmt.Errorf("shm: %s: not a marsfs chunk segment", path)
	}
	p, err := mapFile(f, nil, size, unix.PROT_READ)
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	b := unsafe.Slice((*byte)(p), size)
	h, err := parseHeader(b, size)
	if err == nil && !h.sealed {
		err = errors.New("chunk is still being written")
	}
	if err != nil {
		unmap(p, size)
		return nil, fmt.Errorf("shm: %s: %w", path, err)
	}
	return &Mapping{ID: h.id, DType: h.dtype, Shape: h.shape, Data: b[h.off : h.off+h.n : h.off+h.n], addr: p, size: size}, nil
}

// A Reader maps the chunks of one store's segment directory, named by the
// store's Dir, for a co-located process.
type Reader struct {
	dir string
}

// OpenReader returns a reader of the store whose segments are in dir.
func OpenReader(dir string) (*Reader, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("shm: %s is not a directory", dir)
	}
	return &Reader{dir: dir}, nil
}

// MapChunk maps the chunk in the segment called name (the chunk's decimal
// ID) read-only. A name holding a path separator is refused.
func (r *Reader) MapChunk(name string) (*Mapping, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, os.PathSeparator) {
		return nil, fmt.Errorf("shm: bad chunk name %q", name)
	}
	return MapChunk(filepath.Join(r.dir, name))
}
