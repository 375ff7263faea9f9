// Package shm is a marsfs worker's memory: a store of chunks in shared
// memory that spills to disk, and a quota on the private memory of the
// operands it runs.
//
// # Segments
//
// Every chunk lives in a file of its own, its segment, in a directory of
// the store under Options.Dir (/dev/shm by default), mapped MAP_SHARED. One
// file a chunk rather than a slab allocator over large segments because the
// kernel then does the bookkeeping: a segment is freed by unlinking it and
// unmapping it, there is no fragmentation to compact, a co-located process
// (another worker on the host, the 9P server reading a result) opens a chunk
// by name and maps it read-only (see Reader and MapChunk), and a crash
// leaves plain files that the next worker removes. The cost, a few system
// calls a chunk, is small beside the megabytes of a chunk; the cost that
// matters, the first touch of fresh pages (about 1 GB/s here against 20 GB/s
// for clearing pages already mapped), is avoided by keeping freed segments
// mapped on a free list (Options.KeepFree) and reusing them for chunks of
// fitting size.
//
// A segment starts with a header (dtype, shape, length; see segment.go) and
// holds the data at a 64-byte aligned offset, the layout of an Arrow
// primitive array's values buffer, so that Arrow IPC can be written from it
// without a copy. Bools stay one byte each, as in NumPy and in the kernels;
// Arrow's bit-packed form is made only when rendering Arrow IPC.
//
// Kernels write their output in place: Create returns a Buffer holding the
// chunk's zeroed, writable data; its Seal makes them visible, its Abort drops
// them. A segment is mapped twice, writable for its writer and read-only for
// its readers (a write through a View faults), so that neither sealing nor
// reusing a segment changes the protection of pages, which costs here about
// as much as writing them. The writer holds a pin until
// then, so a chunk deleted or replaced while being written never has its
// memory taken from under the kernel. Get pins a chunk and returns a View of
// it; Release unpins it.
//
// # Spilling
//
// The store holds at most Options.Limit bytes of shared memory (half of the
// RAM by default). When a Create or a reload needs more, the store first
// gives up its free segments, then spills chunks in the order ChooseVictims
// gives: the chunk whose next reader runs last in the graph's order (set by
// SetNextUse) goes first, recency breaks ties, and pinned chunks go only
// when unpinned ones do not suffice. Chunks being written are never spilled;
// only they can make a Create fail.
//
// A chunk keeps its address for its whole life. Spilling writes it to a file
// under Options.SpillDir and maps that file over the chunk's address
// (MAP_FIXED) before unlinking the segment, so a view taken before stays
// valid and reads the same bytes, from the page cache, which the kernel can
// reclaim, instead of from shared memory, which it cannot (there is no
// swap). Get brings a spilled chunk back into a segment mapped at the same
// address; GetPrivate does not, for a chunk with a single remaining reader,
// which would otherwise push others out to be read once. Chunks never change
// once sealed, so a spill file is kept until the chunk is deleted and a
// chunk spilled a second time costs no write.
//
// The store's lock is not held while a spill writes its file or a reload
// copies a chunk back: the chunk is marked busy (and pinned) meanwhile, and
// everything else goes on; a chunk being reloaded is read from its spill
// file until the reload maps its segment in place.
//
// # Cleanup
//
// A store's directories are named after the worker, its pid and the
// process's start time. Close removes them with everything in them and
// unmaps every chunk; Open first removes those of processes that have died
// (CleanStale), so a worker restarted after a crash cleans what its
// predecessor left.
//
// # Quota
//
// Quota admits operands by the bytes of private memory they need, in
// priority order, and fails at once a request that can never fit.
//
// The worker processes run it (their chunk stores); the scheduler maps co-
// located workers' chunks read-only through it.
package shm
