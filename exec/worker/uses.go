package worker

// A nextUseStore is a Store whose spill policy keeps the chunks needed
// soonest (see shm.Store.SetNextUse): the worker tells it the rank of the
// next task to read each chunk (State's Ready.NextUse).
type nextUseStore interface {
	SetNextUse(id uint64, rank int64) bool
}

// stateConfig describes to a State the worker of name, slots and memory
// quota mem whose chunks live in store.
func stateConfig(name string, slots int, mem int64, store Store) StateConfig {
	cfg := StateConfig{Name: name, Slots: slots, Mem: mem}
	switch st := store.(type) {
	case interface{ HeapBytes() int64 }:
		// A shared-memory store keeps some chunks in the heap: small
		// ones, and those shared memory had no room for.
		cfg.HeapChunks = st.HeapBytes
	case allocStore:
	default:
		cfg.HeapChunks = store.Bytes // a heap store's chunks are in private memory
	}
	if _, ok := store.(nextUseStore); ok {
		cfg.TrackUses = true
	}
	if ss, ok := store.(smallStore); ok {
		cfg.Small = ss.Small
	}
	return cfg
}
