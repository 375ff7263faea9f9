package shm

import (
	"errors"
	"io"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"marsfs/tensor"
)

// Arrays presents a Store as a map of arrays: the method set of the
// runtime's chunk store (Put, Get, Delete, Len, Bytes), for callers that do
// not release what they read.
//
// Get pins the chunk for as long as the returned *tensor.Array is reachable:
// the pin is released by a cleanup when the garbage collector finds the
// array unreachable. The array's Data alias the store's mapping, so a caller
// must keep the array itself reachable while it uses them, as it would a
// file whose descriptor it reads. A view survives the chunk's spill (see
// Store), so this only delays the moment its pages are given back after a
// Delete.
type Arrays struct {
	s    *Store
	temp atomic.Uint64 // the last temporary ID given by Alloc
}

// NewArrays returns s as a map of arrays.
func NewArrays(s *Store) *Arrays { return &Arrays{s: s} }

// Store returns the underlying store.
func (a *Arrays) Store() *Store { return a.s }

// Put stores a copy of x as chunk id, replacing any chunk stored under it.
// When the room is held by chunks deleted while still read, Put collects
// garbage to let their readers' pins go and tries again.
func (a *Arrays) Put(id uint64, x *tensor.Array) error {
	err := a.s.Put(id, x)
	for wait := time.Millisecond; errors.Is(err, errNoRoom) && wait < time.Second; wait *= 2 {
		if a.s.Stats().Pinned == 0 {
			break
		}
		runtime.GC()
		time.Sleep(wait) // cleanups run on their own goroutine
		err = a.s.Put(id, x)
	}
	return err
}

// Get returns chunk id as an array aliasing the store's mapping, read-only
// (writing it faults), and whether the store holds it.
func (a *Arrays) Get(id uint64) (*tensor.Array, bool) {
	v, err := a.s.Get(id)
	if err != nil {
		return nil, false
	}
	x := &tensor.Array{DType: v.DType, Shape: slices.Clone(v.Shape), Data: v.Data}
	runtime.AddCleanup(x, (*View).Release, v)
	return x, true
}

// Delete drops chunk id, reporting whether the store held it.
func (a *Arrays) Delete(id uint64) bool { return a.s.Delete(id) }

// Len is the number of chunks held.
func (a *Arrays) Len() int { return a.s.Len() }

// Bytes is the size of the data of the chunks held, in memory or on disk.
func (a *Arrays) Bytes() int64 { return a.s.Bytes() }

// SpilledBytes is the number of bytes the store has spilled since it opened.
func (a *Arrays) SpilledBytes() int64 { return a.s.SpilledBytes() }

// Stats returns the store's state, for the worker's status.
func (a *Arrays) Stats() Stats { return a.s.Stats() }

// WriteStatus writes the store's lines of the worker's status file.
func (a *Arrays) WriteStatus(w io.Writer) error { return a.s.Stats().WriteStatus(w) }

// TempBase is the first of the temporary IDs under which Alloc's chunks are
// written: the IDs of stored chunks stay below it.
const TempBase = 1 << 63

// Alloc returns an array of dtype dt and the given shape in shared memory,
// zero filled unless zero is false (the kernel then sets every element),
// for a kernel to write its output into, with seal, which
// publishes the array as chunk id (read-only from then on), and abort, which
// drops it. Exactly one of them must be called. Alloc returns a nil array
// when the store cannot make room: the caller then uses the heap and Put.
func (a *Arrays) Alloc(dt tensor.DType, shape []int, zero bool) (x *tensor.Array, seal func(id uint64) error, abort func()) {
	create := a.s.Create
	if !zero {
		create = a.s.CreateUnzeroed
	}
	b, err := create(TempBase+a.temp.Add(1), dt, shape)
	if err != nil {
		return nil, nil, nil
	}
	return &tensor.Array{DType: dt, Shape: slices.Clone(shape), Data: b.Data}, b.SealAs, b.Abort
}

// Pin returns chunk id like Get, and release, which unpins it at once
// rather than when the array is collected: x must not be used afterwards.
func (a *Arrays) Pin(id uint64) (x *tensor.Array, release func(), ok bool) {
	v, err := a.s.Get(id)
	if err != nil {
		return nil, nil, false
	}
	return &tensor.Array{DType: v.DType, Shape: slices.Clone(v.Shape), Data: v.Data}, v.Release, true
}

// Path returns the file holding chunk id, for a co-located reader to map
// (see Store.Path).
func (a *Arrays) Path(id uint64) (string, bool) { return a.s.Path(id) }

// SetNextUse records the rank of the next operand to read chunk id, for the
// spill policy (see Store.SetNextUse).
func (a *Arrays) SetNextUse(id uint64, rank int64) bool { return a.s.SetNextUse(id, rank) }
