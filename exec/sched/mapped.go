package sched

import (
	"context"
	"runtime"
	"sync"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/shm"
	"marsfs/tensor"
)

// mappedChunks shares the mappings of chunks this process reads from the
// shared memory of workers on its host: every reader of a chunk (forty
// clients reading one tensor) uses one mapping of it, unmapped when the
// last lets go. A chunk's ID never names other data, and a mapping stays
// valid after its worker drops the chunk, so sharing is safe.
type mappedChunks struct {
	mu sync.Mutex
	m  map[uint64]*sharedMapping
}

type sharedMapping struct {
	m    *shm.Mapping
	refs int
}

// get returns chunk loc.ID mapped from the worker serving at addr, and
// release, which lets it go; ok is false when the chunk cannot be mapped
// (see wire.MapLocal). A caller that never calls release leaves it to the
// collector, once the array is unreachable.
func (mc *mappedChunks) get(ctx context.Context, remote *sync.Map, loc core.Location, addr string, key []byte) (a *tensor.Array, release func(), ok bool) {
	mc.mu.Lock()
	sm := mc.m[loc.ID]
	if sm != nil {
		sm.refs++
	}
	mc.mu.Unlock()
	if sm == nil {
		m, ok := wire.MapLocal(ctx, remote, loc, addr, key)
		if !ok {
			return nil, nil, false
		}
		mc.mu.Lock()
		if mc.m == nil {
			mc.m = make(map[uint64]*sharedMapping)
		}
		if sm = mc.m[loc.ID]; sm != nil {
			m.Close() // another reader mapped it meanwhile
		} else {
			sm = &sharedMapping{m: m}
			mc.m[loc.ID] = sm
		}
		sm.refs++
		mc.mu.Unlock()
	}
	a = sm.m.Array()
	var once sync.Once
	release = func() {
		once.Do(func() {
			mc.mu.Lock()
			defer mc.mu.Unlock()
			if sm.refs--; sm.refs == 0 {
				delete(mc.m, loc.ID)
				sm.m.Close()
			}
		})
	}
	runtime.AddCleanup(a, func(f func()) { f() }, release)
	return a, release, true
}

// len is the number of chunks mapped.
func (mc *mappedChunks) len() int {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return len(mc.m)
}
