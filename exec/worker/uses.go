package worker

// stateConfig describes to a State the worker of name, slots and memory
// quota mem whose chunks live in store.
func stateConfig(name string, slots int, mem int64, store Store) StateConfig {
	cfg := StateConfig{Name: name, Slots: slots, Mem: mem}
	switch st := store.(type) {
	case interface{ HeapBytes() int64 }:
		// A shared-memory store keeps some chunks in the heap: small
		// ones, and those shared memory had no room for.
		cfg.HeapChunks = st.HeapBytes
	case AllocStore:
	default:
		cfg.HeapChunks = store.Bytes // a heap store's chunks are in private memory
	}
	if _, ok := store.(NextUseStore); ok {
		cfg.TrackUses = true
	}
	if ss, ok := store.(SmallStore); ok {
		cfg.Small = ss.Small
	}
	return cfg
}
