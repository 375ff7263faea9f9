package shm

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"marsfs/tensor"
)

// DefaultSmall is the size under which Arrays keeps a chunk in the heap
// rather than in a segment: below it the system calls of a segment (create,
// seal, delete: a few renames and a mapping) cost more than the chunk's
// bytes, and a chunk of scalars would take a whole page.
const DefaultSmall = 64 << 10

// Arrays presents a Store as a map of arrays: the method set of the
// runtime's chunk store (Put, Get, Delete, Len, Bytes), for callers that do
// not release what they read. Chunks smaller than its small size (see
// SetSmall) stay in the heap, never spilled nor mapped by others.
//
// Get pins the chunk for as long as the returned *tensor.Array is reachable:
// the pin is released by a cleanup when the garbage collector finds the
// array unreachable. The array's Data alias the store's mapping, so a caller
// must keep the array itself reachable while it uses them, as it would a
// file whose descriptor it reads. A view survives the chunk's spill (see
// Store), so this only delays the moment its pages are given back after a
// Delete. Pin unpins at once instead.
type Arrays struct {
	s     *Store
	temp  atomic.Uint64 // the last temporary ID given by Alloc
	small atomic.Int64  // chunks of fewer bytes stay in the heap

	mu        sync.Mutex
	heap      map[uint64]*tensor.Array // the small chunks
	heapBytes int64
}

// NewArrays returns s as a map of arrays, keeping chunks smaller than
// DefaultSmall in the heap.
func NewArrays(s *Store) *Arrays {
	a := &Arrays{s: s, heap: make(map[uint64]*tensor.Array)}
	a.small.Store(DefaultSmall)
	return a
}

// SetSmall sets the size under which chunks stay in the heap; 0 puts every
// chunk in shared memory.
func (a *Arrays) SetSmall(n int64) { a.small.Store(n) }

// Store returns the underlying store.
func (a *Arrays) Store() *Store { return a.s }

func (a *Arrays) isSmall(nbytes int64) bool { return nbytes < a.small.Load() }

// Small reports whether a chunk of nbytes stays in the heap: Alloc gives no
// array for it, and it is never spilled, so its next use does not matter.
func (a *Arrays) Small(nbytes int64) bool { return a.isSmall(nbytes) }

// putHeap stores x under id in the heap, or, with x nil, drops what the
// heap holds under id; it reports whether the heap held id before.
func (a *Arrays) putHeap(id uint64, x *tensor.Array) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	old, ok := a.heap[id]
	if ok {
		a.heapBytes -= int64(len(old.Data))
		delete(a.heap, id)
	}
	if x != nil {
		a.heap[id] = x
		a.heapBytes += int64(len(x.Data))
	}
	return ok
}

func (a *Arrays) getHeap(id uint64) (*tensor.Array, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	x, ok := a.heap[id]
	return x, ok
}

// Put stores x as chunk id, replacing any chunk stored under it: a copy in
// shared memory, or x itself when small (callers do not modify the arrays
// they store). When the room is held by chunks deleted while still read,
// Put collects garbage to let their readers' pins go and tries again.
func (a *Arrays) Put(id uint64, x *tensor.Array) error {
	if a.isSmall(int64(len(x.Data))) {
		if err := x.Check(); err != nil {
			return fmt.Errorf("shm: chunk %d: %w", id, err)
		}
		if a.s.held() {
			a.s.Delete(id)
		}
		a.putHeap(id, x)
		return nil
	}
	a.putHeap(id, nil)
	err := a.s.Put(id, x)
	for wait := time.Millisecond; errors.Is(err, errNoRoom) && wait < time.Second; wait *= 2 {
		if a.s.Stats().Pinned == 0 {
			break
		}
		runtime.GC()
		time.Sleep(wait) // cleanups run on their own goroutine
		err = a.s.Put(id, x)
	}
	if errors.Is(err, errNoRoom) {
		// Shared memory is full and nothing can spill: the chunk stays in
		// the heap, like a small one, rather than fail its operand.
		a.putHeap(id, x)
		return nil
	}
	return err
}

// Get returns chunk id as an array aliasing the store's mapping, read-only
// (writing it faults), and whether the store holds it.
func (a *Arrays) Get(id uint64) (*tensor.Array, bool) {
	if x, ok := a.getHeap(id); ok {
		return x, true
	}
	v, err := a.s.Get(id)
	if err != nil {
		return nil, false
	}
	x := &tensor.Array{DType: v.DType, Shape: slices.Clone(v.Shape), Data: v.Data}
	runtime.AddCleanup(x, (*View).Release, v)
	return x, true
}

// Size returns the data length of chunk id, if the store holds it,
// without reading it back from a spill file.
func (a *Arrays) Size(id uint64) (int64, bool) {
	if x, ok := a.getHeap(id); ok {
		return int64(len(x.Data)), true
	}
	return a.s.Size(id)
}

// Pin returns chunk id like Get, and release, which unpins it at once
// rather than when the array is collected: x must not be used afterwards.
func (a *Arrays) Pin(id uint64) (x *tensor.Array, release func(), ok bool) {
	if x, ok := a.getHeap(id); ok {
		return x, func() {}, true
	}
	v, err := a.s.Get(id)
	if err != nil {
		return nil, nil, false
	}
	return &tensor.Array{DType: v.DType, Shape: slices.Clone(v.Shape), Data: v.Data}, v.Release, true
}

// PinPrivate is Pin that leaves a spilled chunk on disk: x then reads the
// spill file's pages (see Store.GetPrivate).
func (a *Arrays) PinPrivate(id uint64) (x *tensor.Array, release func(), ok bool) {
	if x, ok := a.getHeap(id); ok {
		return x, func() {}, true
	}
	v, err := a.s.GetPrivate(id)
	if err != nil {
		return nil, nil, false
	}
	return &tensor.Array{DType: v.DType, Shape: slices.Clone(v.Shape), Data: v.Data}, v.Release, true
}

// Delete drops chunk id, reporting whether the store held it. A chunk is in
// the heap or in shared memory, never both (Put and Alloc's seal drop the
// other): one in the heap is not looked for in the store.
func (a *Arrays) Delete(id uint64) bool {
	return a.putHeap(id, nil) || a.s.held() && a.s.Delete(id)
}

// Len is the number of chunks held.
func (a *Arrays) Len() int {
	a.mu.Lock()
	n := len(a.heap)
	a.mu.Unlock()
	return n + a.s.Len()
}

// Bytes is the size of the data of the chunks held, in the heap, in shared
// memory or on disk.
func (a *Arrays) Bytes() int64 {
	a.mu.Lock()
	n := a.heapBytes
	a.mu.Unlock()
	return n + a.s.Bytes()
}

// HeapBytes is the size of the chunks held in the heap: the small ones,
// and those shared memory had no room for. They are the worker's private
// memory, which its quota counts.
func (a *Arrays) HeapBytes() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.heapBytes
}

// SpilledBytes is the number of bytes the store has spilled since it opened.
func (a *Arrays) SpilledBytes() int64 { return a.s.SpilledBytes() }

// Stats returns the shared-memory store's state.
func (a *Arrays) Stats() Stats { return a.s.Stats() }

// Trim gives back the store's free segments idle for idle or longer (see
// Store.Trim).
func (a *Arrays) Trim(idle time.Duration) int64 { return a.s.Trim(idle) }

// WriteStatus writes the store's lines of the worker's status file: those
// of Stats.WriteStatus, then heap_chunks and heap_bytes, the small chunks
// kept in the heap.
func (a *Arrays) WriteStatus(w io.Writer) error {
	if err := a.s.Stats().WriteStatus(w); err != nil {
		return err
	}
	a.mu.Lock()
	n, b := len(a.heap), a.heapBytes
	a.mu.Unlock()
	_, err := fmt.Fprintf(w, "heap_chunks %d\nheap_bytes %d\n", n, b)
	return err
}

// TempBase is the first of the temporary IDs under which Alloc's chunks are
// written: the IDs of stored chunks stay below it.
const TempBase = 1 << 63

// Alloc returns an array of dtype dt and the given shape in shared memory,
// zero filled unless zero is false (the kernel then sets every element),
// for a kernel to write its output into, with seal, which publishes the
// array as chunk id (read-only from then on), and abort, which drops it.
// Exactly one of them must be called. Alloc returns a nil array for a small
// chunk, or when the store cannot make room: the caller then uses the heap
// and Put.
func (a *Arrays) Alloc(dt tensor.DType, shape []int, zero bool) (x *tensor.Array, seal func(id uint64) error, abort func()) {
	if a.isSmall(int64(tensor.NumElements(shape) * dt.Size())) {
		return nil, nil, nil
	}
	create := a.s.Create
	if !zero {
		create = a.s.CreateUnzeroed
	}
	b, err := create(TempBase+a.temp.Add(1), dt, shape)
	if err != nil {
		return nil, nil, nil
	}
	seal = func(id uint64) error {
		a.putHeap(id, nil)
		return b.SealAs(id)
	}
	return &tensor.Array{DType: dt, Shape: slices.Clone(shape), Data: b.Data}, seal, b.Abort
}

// Path returns the file holding chunk id, for a co-located reader to map
// (see Store.Path); a small chunk has none.
func (a *Arrays) Path(id uint64) (string, bool) { return a.s.Path(id) }

// SetNextUse records the rank of the next operand to read chunk id, for the
// spill policy (see Store.SetNextUse).
func (a *Arrays) SetNextUse(id uint64, rank int64) bool { return a.s.SetNextUse(id, rank) }
