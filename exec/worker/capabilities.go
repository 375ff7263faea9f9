package worker

import (
	"time"

	"marsfs/shm"
	"marsfs/tensor"
)

// The capabilities a Store may have beyond Store's methods, each found by
// a type assertion where it is used: a worker's store is shm.Arrays (every
// one) or MemStore (none). The scheduler pins the chunks of its
// in-process worker through PinStore. They are declared here, in one
// place, and checked against the stores below.

// An AllocStore is a Store that kernels write chunks into in place (see
// shm.Arrays.Alloc): a worker using it stores a kernel's output without
// copying it.
type AllocStore interface {
	// Alloc returns an array of dtype dt and the given shape in the
	// store's memory, zero filled unless zero is false, and seal, which
	// stores it as chunk id, and abort, which drops it; or a nil array
	// when the store has no room.
	Alloc(dt tensor.DType, shape []int, zero bool) (x *tensor.Array, seal func(id uint64) error, abort func())
}

// A PinStore is a Store whose chunks are pinned while read (see
// shm.Arrays.Pin): a worker reading one releases it once its op is done,
// so that the chunk's memory can be reused as soon as it is freed. With
// PinPrivate, a spilled chunk is read from its spill file rather than
// brought back into shared memory.
type PinStore interface {
	Pin(id uint64) (x *tensor.Array, release func(), ok bool)
	PinPrivate(id uint64) (x *tensor.Array, release func(), ok bool)
}

// A SmallStore is a Store that keeps small chunks in the heap (see
// shm.Arrays.Small): it has no buffer to give a kernel for them, and never
// spills them. A worker skips the bookkeeping of buffers and of next uses
// for them, which otherwise costs an op of a few numbers more than its
// kernel.
type SmallStore interface {
	Small(nbytes int64) bool
}

// A PathStore is a Store whose chunks are files a co-located process can
// map (see shm.Arrays.Path).
type PathStore interface {
	Path(id uint64) (string, bool)
}

// A NextUseStore is a Store whose spill policy keeps the chunks needed
// soonest (see shm.Store.SetNextUse): the worker tells it the rank of the
// next task to read each chunk (State's Ready.NextUse).
type NextUseStore interface {
	SetNextUse(id uint64, rank int64) bool
}

// A Trimmer is a store that keeps freed memory for reuse and can give it
// back (shm.Arrays).
type Trimmer interface {
	Trim(idle time.Duration) int64
}

var (
	_ Store        = (*shm.Arrays)(nil)
	_ AllocStore   = (*shm.Arrays)(nil)
	_ PinStore     = (*shm.Arrays)(nil)
	_ SmallStore   = (*shm.Arrays)(nil)
	_ PathStore    = (*shm.Arrays)(nil)
	_ NextUseStore = (*shm.Arrays)(nil)
	_ Trimmer      = (*shm.Arrays)(nil)
	_ Store        = (*MemStore)(nil)
)
