package shm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"marsfs/tensor"
)

// Options configure a Store.
type Options struct {
	Dir      string // where segments live; /dev/shm when empty
	SpillDir string // where spilled chunks go; os.TempDir() when empty
	// Limit bounds the bytes of shared memory the store holds; half of the
	// machine's RAM when 0.
	Limit int64
	Name  string // the worker's name, part of every file name
	// KeepFree bounds the bytes of freed segments kept mapped for reuse
	// (fresh pages cost a fault and a clear each; reused ones only a clear):
	// Limit/2 when 0, none when negative. They count in the store's use and
	// are the first thing given up when it runs short.
	KeepFree int64
}

// ErrNotFound is returned for a chunk the store does not hold.
var ErrNotFound = errors.New("no such chunk")

// ErrClosed is returned by a closed store.
var ErrClosed = errors.New("shm: store closed")

// A Store holds a worker's chunks in shared memory, one file a chunk under
// its own directory in Options.Dir, mapped MAP_SHARED; see the package
// documentation for the policy. It is safe for concurrent use.
type Store struct {
	dir, spillDir string
	// limit is what the store may hold now: maxLimit (Options.Limit), or
	// less while the directory's file system holds less (see
	// fitLimitLocked).
	limit, maxLimit int64
	keepFree        int64

	mu       sync.Mutex
	chunks   map[uint64]*chunk
	zombies  map[*chunk]bool // deleted while pinned: mapped until released
	free     []segment       // freed segments kept mapped for reuse
	seq      uint64          // for names of temporary and spill files
	busy     int             // chunks being spilled or reloaded unlocked
	cond     *sync.Cond      // on mu, broadcast when a busy chunk is done
	used     int64           // shared memory held: resident chunks, zombies and free
	clock    uint64
	spilled  atomic.Int64 // bytes spilled: read without mu, for every op
	reloaded int64
	nchunks  atomic.Int64  // len(chunks), read without mu (see held)
	changed  chan struct{} // closed at the next unpin or change of len(chunks) (Changed), when taken
	closed   bool
	locks    []*os.File // the store's directories, locked while it lives
}

// chunk is one chunk's state. Its data lives at addr for its whole life:
// mapped from its segment while resident, from its spill file while not.
type chunk struct {
	id       uint64
	dtype    tensor.DType
	shape    []int
	n, off   int64          // data length and offset in the file
	addr     unsafe.Pointer // the mapping, read-only
	rw       unsafe.Pointer // a writable mapping of the segment while resident
	size     int64          // mapping length; the segment's size when resident
	resident bool           // mapped from a segment in shared memory
	spill    string         // the complete spill file, if any
	sealed   bool
	busy     bool // being spilled or reloaded with mu released
	pins     int
	deleted  bool
	unlinked bool // deleted while pinned: its files are already gone
	exported bool // its path was given out: others may map its segment
	nextUse  int64
	lastUse  uint64
}

func (c *chunk) bytes() []byte { return unsafe.Slice((*byte)(c.addr), c.off+c.n) }

// wbytes are c's bytes through its writable mapping; c is resident.
func (c *chunk) wbytes() []byte { return unsafe.Slice((*byte)(c.rw), c.off+c.n) }

// segment is a file in shared memory mapped twice: read-only at addr, for
// readers, and writable at rw, for writers. Sealing a chunk then costs no
// change of protection, nor does reusing its segment: on this machine an
// mprotect of a few megabytes costs as much as writing them.
type segment struct {
	path  string
	addr  unsafe.Pointer
	rw    unsafe.Pointer
	size  int64
	freed time.Time // when it joined the free list
}

// unmapSegment unmaps both mappings of a segment; rw may be nil.
func unmapSegment(addr, rw unsafe.Pointer, size int64) {
	unmap(addr, size)
	if rw != nil {
		unmap(rw, size)
	}
}

// Open creates a store. It first removes what stores of dead processes left
// in the same directories (see CleanStale).
func Open(opt Options) (*Store, error) {
	if opt.Dir == "" {
		opt.Dir = "/dev/shm"
	}
	if opt.SpillDir == "" {
		opt.SpillDir = os.TempDir()
	}
	if opt.Limit < 0 {
		return nil, fmt.Errorf("shm: negative limit %d", opt.Limit)
	}
	if opt.Limit == 0 {
		mem, err := HostMemory()
		if err != nil {
			return nil, err
		}
		opt.Limit = mem / 2
	}
	switch {
	case opt.KeepFree == 0:
		// Enough for the chunks of a stage freed together to make the
		// next one's without fresh pages; given up first when short.
		opt.KeepFree = opt.Limit / 2
	case opt.KeepFree < 0:
		opt.KeepFree = 0
	}
	if _, err := CleanStale(opt.Dir, opt.SpillDir); err != nil {
		return nil, fmt.Errorf("shm: cleaning stale segments: %w", err)
	}
	name, err := ownerName(opt.Name)
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	s := &Store{
		dir:      filepath.Join(opt.Dir, name),
		spillDir: filepath.Join(opt.SpillDir, name),
		limit:    opt.Limit,
		maxLimit: opt.Limit,
		keepFree: opt.KeepFree,
		chunks:   make(map[uint64]*chunk),
		zombies:  make(map[*chunk]bool),
	}
	s.cond = sync.NewCond(&s.mu)
	for _, d := range []string{s.dir, s.spillDir} {
		f, err := makeOwnedDir(d)
		if err != nil {
			s.closeLocks()
			return nil, fmt.Errorf("shm: %w", err)
		}
		s.locks = append(s.locks, f)
	}
	s.fitLimitLocked()
	return s, nil
}

// closeLocks releases the locks of the store's directories, removing
// those directories still held.
func (s *Store) closeLocks() {
	for _, f := range s.locks {
		os.RemoveAll(f.Name())
		f.Close()
	}
	s.locks = nil
}

// Dir is the directory of the store's segments: co-located readers map
// chunks from it (see Reader).
func (s *Store) Dir() string { return s.dir }

// Limit is the bound on the store's shared memory, in bytes.
func (s *Store) Limit() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limit
}

// fitLimitLocked sets the limit to what the directory's file system can
// hold beside what the store holds, within maxLimit: a tmpfs smaller than
// the limit (Docker's /dev/shm), or filled by others, makes chunks spill
// rather than fault. It is checked again whenever the store is short.
func (s *Store) fitLimitLocked() {
	free, err := DirFree(s.dir)
	if err != nil {
		return
	}
	s.limit = min(s.maxLimit, s.used+free)
}

func (s *Store) segPath(id uint64) string { return filepath.Join(s.dir, strconv.FormatUint(id, 10)) }

var pageSize = int64(os.Getpagesize())

func roundPage(n int64) int64 { return (n + pageSize - 1) / pageSize * pageSize }

// A Buffer is a chunk being written: Data, zeroed and writable, are its
// bytes in shared memory, for a kernel to fill in place before Seal
// publishes them. Until then the chunk cannot be read nor spilled.
type Buffer struct {
	ID   uint64
	Data []byte

	s    *Store
	c    *chunk
	done bool
}

// Create allocates chunk id of the given dtype and shape in shared memory
// and returns its buffer. A chunk already stored under id is deleted first,
// even when Create then fails.
//
// When the store is short, Create spills other chunks to make room, and
// fails only when the chunks being written leave no room, with an error
// naming the sizes.
func (s *Store) Create(id uint64, dt tensor.DType, shape []int) (*Buffer, error) {
	return s.create(id, dt, shape, true)
}

// CreateUnzeroed is Create for a writer that sets every byte of Data: a
// reused segment is not cleared first, so Data hold stale bytes until then.
func (s *Store) CreateUnzeroed(id uint64, dt tensor.DType, shape []int) (*Buffer, error) {
	return s.create(id, dt, shape, false)
}

func (s *Store) create(id uint64, dt tensor.DType, shape []int, zero bool) (*Buffer, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("shm: chunk %d: invalid dtype %v", id, dt)
	}
	if len(shape) > maxDims {
		return nil, fmt.Errorf("shm: chunk %d: %d dimensions, at most %d", id, len(shape), maxDims)
	}
	n := int64(dt.Size())
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("shm: chunk %d: negative dimension in shape %v", id, shape)
		}
		if d > 0 && n > (1<<62)/int64(d) {
			return nil, fmt.Errorf("shm: chunk %d: shape %v too large", id, shape)
		}
		n *= int64(d)
	}
	off := int64(dataOffset(len(shape)))

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if old, ok := s.chunks[id]; ok {
		s.deleteLocked(old)
	}
	seg, err := s.allocLocked(roundPage(off+n), 2*roundPage(off+n), fmt.Sprintf("chunk %d", id), zero)
	if err != nil {
		return nil, err
	}
	if old, ok := s.chunks[id]; ok {
		// Created again while allocLocked spilled.
		s.deleteLocked(old)
	}
	if err := os.Rename(seg.path, s.segPath(id)); err != nil {
		s.dropSegmentLocked(seg)
		return nil, fmt.Errorf("shm: %w", err)
	}
	// The writer holds a pin: the segment stays mapped and writable until
	// Seal or Abort, even if the chunk is deleted or replaced meanwhile.
	c := &chunk{id: id, dtype: dt, shape: slices.Clone(shape), n: n, off: off, addr: seg.addr, rw: seg.rw, size: seg.size,
		resident: true, nextUse: NoNextUse, pins: 1}
	s.clock++
	c.lastUse = s.clock
	b := c.wbytes()
	putHeader(b, id, dt, shape, n, false)
	s.chunks[id] = c
	s.countLocked()
	return &Buffer{ID: id, Data: b[off:len(b):len(b)], s: s, c: c}, nil
}

// Seal publishes the chunk: its data become read-only (writing them faults)
// and readable by Get and by co-located readers. Data must not be written
// afterwards. Sealing a chunk deleted or replaced since Create fails, and
// frees it.
func (b *Buffer) Seal() error { return b.SealAs(b.ID) }

// SealAs seals the chunk like Seal, storing it under id instead of the ID
// it was created under and replacing any chunk stored under id. A worker
// writes an output under a temporary ID, so that a run found stale when it
// ends never touches the chunk stored under the real one.
func (b *Buffer) SealAs(id uint64) error {
	s, c := b.s, b.c
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.done {
		return fmt.Errorf("shm: chunk %d already sealed or aborted", b.ID)
	}
	b.done = true
	if s.closed {
		return ErrClosed
	}
	if c.deleted {
		s.unpinLocked(c)
		return fmt.Errorf("shm: seal chunk %d: deleted while being written", b.ID)
	}
	if id != c.id {
		if old, ok := s.chunks[id]; ok {
			s.deleteLocked(old)
		}
		if err := os.Rename(s.segPath(c.id), s.segPath(id)); err != nil {
			s.deleteLocked(c)
			s.unpinLocked(c)
			return fmt.Errorf("shm: seal chunk %d as %d: %w", b.ID, id, err)
		}
		delete(s.chunks, c.id)
		c.id, b.ID = id, id
		putHeader(c.wbytes(), id, c.dtype, c.shape, c.n, false)
		s.chunks[id] = c
		s.countLocked()
	}
	setSealed(c.wbytes(), true)
	c.sealed = true
	c.pins--
	return nil
}

// Abort drops the chunk unless it was sealed; Data must not be used
// afterwards. Aborting twice, or after Seal, does nothing.
func (b *Buffer) Abort() {
	s, c := b.s, b.c
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.done || s.closed {
		return
	}
	b.done = true
	if !c.deleted {
		s.deleteLocked(c)
	}
	s.unpinLocked(c)
}

// Put stores a copy of a as chunk id: Create, copy, Seal.
func (s *Store) Put(id uint64, a *tensor.Array) error {
	if err := a.Check(); err != nil {
		return fmt.Errorf("shm: chunk %d: %w", id, err)
	}
	b, err := s.Create(id, a.DType, a.Shape)
	if err != nil {
		return err
	}
	copy(b.Data, a.Data)
	return b.Seal()
}

// A View is a sealed chunk pinned for reading. Its Data alias the store's
// mapping, which keeps its address while the view lives even if the chunk
// is spilled (the mapping then reads the spill file) or deleted (it is
// unmapped only at the last Release).
type View struct {
	ID    uint64
	DType tensor.DType
	Shape []int
	Data  []byte // read-only: writing faults

	s    *Store
	c    *chunk
	once sync.Once
}

// Array returns the chunk as an array aliasing the view; it is valid until
// Release.
func (v *View) Array() *tensor.Array {
	return &tensor.Array{DType: v.DType, Shape: v.Shape, Data: v.Data}
}

// Release unpins the view; Data must not be used afterwards. Releasing twice
// is harmless.
func (v *View) Release() {
	v.once.Do(func() {
		s := v.s
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.closed {
			s.unpinLocked(v.c)
		}
	})
}

// Get pins chunk id for reading, bringing it back into shared memory first
// when it was spilled. When no room can be made (every other chunk is being
// written), the view reads the spill file instead.
func (s *Store) Get(id uint64) (*View, error) { return s.get(id, true) }

// GetPrivate pins chunk id like Get, but leaves a spilled chunk on disk: the
// view reads the spill file's pages through the page cache, which the
// kernel may reclaim. It suits a chunk with a single remaining consumer, for
// which a reload would only evict others to be read once (the seeds' "load
// into private memory").
func (s *Store) GetPrivate(id uint64) (*View, error) { return s.get(id, false) }

func (s *Store) get(id uint64, reload bool) (*View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c *chunk
	for {
		if s.closed {
			return nil, ErrClosed
		}
		var ok bool
		c, ok = s.chunks[id]
		if !ok {
			return nil, fmt.Errorf("shm: get chunk %d: %w", id, ErrNotFound)
		}
		if !c.sealed {
			return nil, fmt.Errorf("shm: get chunk %d: still being written", id)
		}
		// A chunk being reloaded by another Get is read from its spill
		// file until the reload maps the segment in its place.
		if c.resident || c.busy || !reload {
			break
		}
		err := s.reloadLocked(c)
		if errors.Is(err, errGone) {
			continue // look again
		}
		if err != nil && !errors.Is(err, errNoRoom) {
			return nil, err
		}
		break
	}
	c.pins++
	s.clock++
	c.lastUse = s.clock
	b := c.bytes()
	return &View{ID: id, DType: c.dtype, Shape: slices.Clone(c.shape), Data: b[c.off:len(b):len(b)], s: s, c: c}, nil
}

// Has reports whether the store holds chunk id (sealed or not).
func (s *Store) Has(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.chunks[id]
	return ok
}

// Size returns the data length of chunk id, if the store holds it sealed,
// without mapping or reloading it.
func (s *Store) Size(id uint64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.chunks[id]
	if !ok || !c.sealed || c.deleted {
		return 0, false
	}
	return c.n, true
}

// SetNextUse records the rank, in the graph's order of execution, of the
// next operand to read chunk id (NoNextUse when none): the spill policy
// keeps the chunks needed soonest. It reports whether the store holds id.
func (s *Store) SetNextUse(id uint64, rank int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.chunks[id]
	if ok {
		c.nextUse = rank
	}
	return ok
}

// Delete drops chunk id, reporting whether the store held it. Its files are
// removed at once; the memory of a chunk still read or written goes at its
// last Release, Seal or Abort.
func (s *Store) Delete(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	c, ok := s.chunks[id]
	if ok {
		s.deleteLocked(c)
	}
	return ok
}

func (s *Store) deleteLocked(c *chunk) {
	delete(s.chunks, c.id)
	s.countLocked()
	c.deleted = true
	if c.pins > 0 {
		// The names go now, so that id can be stored again; the pages
		// stay until the last view is released.
		if c.resident {
			os.Remove(s.segPath(c.id))
		}
		if c.spill != "" {
			os.Remove(c.spill)
		}
		c.unlinked = true
		s.zombies[c] = true
		return
	}
	s.finishLocked(c)
}

// finishLocked disposes of a deleted, unpinned chunk: its segment joins the
// free list or is unmapped and removed, and its spill file is removed.
func (s *Store) finishLocked(c *chunk) {
	if c.unlinked {
		unmapSegment(c.addr, c.rw, c.size)
		if c.resident {
			s.used -= c.size
		}
		return
	}
	if c.spill != "" {
		os.Remove(c.spill)
	}
	// A segment others may have mapped is never reused: they would see
	// the next chunk written over this one.
	if c.resident && !c.exported && s.freeBytes()+c.size <= s.keepFree {
		p := s.tempPath("free")
		if os.Rename(s.segPath(c.id), p) == nil {
			s.free = append(s.free, segment{path: p, addr: c.addr, rw: c.rw, size: c.size, freed: time.Now()})
			return
		}
	}
	unmapSegment(c.addr, c.rw, c.size)
	if c.resident {
		os.Remove(s.segPath(c.id))
		s.used -= c.size
	}
}

// Trim gives back the free segments kept for reuse that none has taken
// for idle or longer: they are unmapped and removed, and the store holds
// that much less shared memory. It returns the bytes given back. A worker
// trims every second or so, so that what one graph freed does not stay
// held, in /dev/shm and in the worker's RSS, once no graph reuses it.
func (s *Store) Trim(idle time.Duration) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var n int64
	s.free = slices.DeleteFunc(s.free, func(f segment) bool {
		if now.Sub(f.freed) < idle {
			return false
		}
		n += f.size
		s.dropSegmentLocked(f)
		return true
	})
	return n
}

func (s *Store) freeBytes() int64 {
	var n int64
	for _, f := range s.free {
		n += f.size
	}
	return n
}

// Path returns the file that holds chunk id now, for a co-located reader to
// map with MapChunk: its segment, or its spill file while spilled. The
// chunk may move before the reader opens it; the reader then asks again.
// A segment whose path was given out is not reused once freed, so that
// what a reader mapped stays the chunk's.
func (s *Store) Path(id uint64) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.chunks[id]
	if !ok || !c.sealed {
		return "", false
	}
	c.exported = true
	if c.resident || c.spill == "" {
		return s.segPath(id), true
	}
	return c.spill, true
}

// Len is the number of chunks held, in memory or on disk.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.chunks)
}

// Bytes is the size of the data of the chunks held, in memory or on disk.
func (s *Store) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, c := range s.chunks {
		n += c.n
	}
	return n
}

// Stats describe a store for the worker's status.
type Stats struct {
	Limit         int64 // bound on shared memory, bytes
	Used          int64 // shared memory held, bytes (segments are whole pages)
	Free          int64 // of Used, freed segments kept for reuse
	InMemory      int   // chunks in shared memory
	InMemoryBytes int64 // their data bytes
	OnDisk        int   // chunks only in spill files
	OnDiskBytes   int64 // their data bytes
	Pinned        int   // chunks being read or written, deleted ones included
	Spilled       int64 // bytes written to spill files since Open
	Reloaded      int64 // bytes brought back into shared memory since Open
}

// SpilledBytes is the number of bytes written to spill files since Open.
func (s *Store) SpilledBytes() int64 {
	return s.spilled.Load()
}

// countLocked records the number of chunks held, for held. s.mu is held.
func (s *Store) countLocked() {
	s.nchunks.Store(int64(len(s.chunks)))
	s.wakeLocked()
}

// Changed returns a channel closed at the next change of what Len and
// Stats' Pinned count: a chunk stored or deleted, a pin dropped. Take it,
// check, then wait on it: no change between the two is missed. A caller
// waiting for readers' cleanups to unpin their chunks waits on this.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// wakeLocked closes the channel Changed gave, if one was taken. s.mu is
// held.
func (s *Store) wakeLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// held reports whether the store may hold a chunk: when it says no, Delete
// has nothing to do, and its lock and look-up are spared.
func (s *Store) held() bool { return s.nchunks.Load() > 0 }

// Stats returns the store's current state.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Limit: s.limit, Used: s.used, Free: s.freeBytes(), Spilled: s.spilled.Load(), Reloaded: s.reloaded,
		Pinned: len(s.zombies)}
	for _, c := range s.chunks {
		if c.resident {
			st.InMemory++
			st.InMemoryBytes += c.n
		} else {
			st.OnDisk++
			st.OnDiskBytes += c.n
		}
		if c.pins > 0 {
			st.Pinned++
		}
	}
	return st
}

// String renders the stats on one line for a status file.
func (st Stats) String() string {
	return fmt.Sprintf("shm %s/%s (free %s) chunks %d in memory (%s) %d on disk (%s) pinned %d spilled %s reloaded %s",
		FormatBytes(st.Used), FormatBytes(st.Limit), FormatBytes(st.Free), st.InMemory, FormatBytes(st.InMemoryBytes),
		st.OnDisk, FormatBytes(st.OnDiskBytes), st.Pinned, FormatBytes(st.Spilled), FormatBytes(st.Reloaded))
}

// WriteStatus writes the stats as "key value" lines, in bytes and counts,
// for a worker's status file: shm_used, shm_limit, shm_free,
// chunks_in_memory, chunks_on_disk, bytes_on_disk, spilled_bytes,
// reloaded_bytes.
func (st Stats) WriteStatus(w io.Writer) error {
	_, err := fmt.Fprintf(w, "shm_used %d\nshm_limit %d\nshm_free %d\nchunks_in_memory %d\nchunks_on_disk %d\nbytes_on_disk %d\nspilled_bytes %d\nreloaded_bytes %d\n",
		st.Used, st.Limit, st.Free, st.InMemory, st.OnDisk, st.OnDiskBytes, st.Spilled, st.Reloaded)
	return err
}

// Close unmaps every chunk and removes the store's segments and spill files.
// Views and buffers of the store must not be used afterwards: close the
// store once its worker's kernels have stopped.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for s.busy > 0 {
		// A spill or reload reads a chunk with mu released.
		s.cond.Wait()
	}
	for _, c := range s.chunks {
		unmapSegment(c.addr, c.rw, c.size)
	}
	for c := range s.zombies {
		unmapSegment(c.addr, c.rw, c.size)
	}
	for _, f := range s.free {
		unmapSegment(f.addr, f.rw, f.size)
	}
	s.chunks, s.zombies, s.free, s.used = nil, nil, nil, 0
	s.nchunks.Store(0)
	err := errors.Join(os.RemoveAll(s.dir), os.RemoveAll(s.spillDir))
	s.closeLocks()
	return err
}
