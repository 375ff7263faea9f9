package worker

import (
	"sync"

	"marsfs/tensor"
)

// A Store holds a worker's chunks by global chunk ID. Implementations are
// safe for concurrent use. Callers must not modify the arrays they put or
// get.
type Store interface {
	// Put stores a under id, replacing any chunk stored under it.
	Put(id uint64, a *tensor.Array) error
	// Get returns the chunk stored under id.
	Get(id uint64) (*tensor.Array, bool)
	// Delete drops the chunk stored under id, reporting whether there was one.
	Delete(id uint64) bool
	// Len is the number of chunks held.
	Len() int
	// Bytes is the size of the chunks' data.
	Bytes() int64
}

// MemStore is a Store in the Go heap.
type MemStore struct {
	mu     sync.Mutex
	chunks map[uint64]*tensor.Array
	bytes  int64
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{chunks: make(map[uint64]*tensor.Array)} }

// Put implements Store.
func (s *MemStore) Put(id uint64, a *tensor.Array) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.chunks[id]; ok {
		s.bytes -= int64(len(old.Data))
	}
	s.chunks[id] = a
	s.bytes += int64(len(a.Data))
	return nil
}

// Get implements Store.
func (s *MemStore) Get(id uint64) (*tensor.Array, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.chunks[id]
	return a, ok
}

// Delete implements Store.
func (s *MemStore) Delete(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.chunks[id]
	if ok {
		delete(s.chunks, id)
		s.bytes -= int64(len(a.Data))
	}
	return ok
}

// Len implements Store.
func (s *MemStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.chunks)
}

// Bytes implements Store.
func (s *MemStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}
