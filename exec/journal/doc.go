// Package journal keeps what a scheduler needs to rebuild its sessions
// after its own death: one append-only file per session under the
// scheduler's --state-dir, read back when a scheduler starts on it.
//
// # What is kept
//
// A session's file is a sequence of records (Record). The first opens the
// session (its number and owner); then come, in the order they happened,
// the specs as submitted with their graph numbers, the uploads with their
// chunks' IDs, sizes and the workers holding them, the tensors each graph
// kept with their chunk IDs (the ID mapping is journaled, not recomputed:
// chunk IDs come from a counter that starts at a random offset, so tiling
// a spec again would name the chunks otherwise), what was dropped or
// freed, and how each graph ended. Folding the records in order (Apply)
// gives the session's State: what a restarted scheduler serves.
//
// # Framing
//
// Each record on disk is
//
//	length  uint32  little-endian, of the payload
//	kind    uint8
//	crc     uint32  CRC-32C (Castagnoli) of length, kind and payload
//	payload length bytes (JSON of the record's fields)
//
// The checksum covers the header as well, so that a flipped length is
// caught as surely as a flipped payload byte, and a length beyond
// MaxRecord is refused before anything is allocated.
//
// # Damage
//
// A file whose last record is cut short (a torn tail: the machine lost
// power mid-write) or whose checksum does not match is not half-restored:
// Read returns the records before the damage together with an error that
// names the offset and the reason, and the caller reports the session
// lost. The records written are only ever appended, and Sync is called at
// each submit and graph end, so a file cut at a record boundary is a
// state the session was in: restoring it serves nothing wrong, only, at
// worst, less than the scheduler knew after its last sync. The tests cut
// and flip every file at every offset and check exactly that.
//
// # Compaction
//
// As the file grows (or a graph ends and many of its records are dead)
// the session's State is written again as a short file (State.Records) to
// a temporary name, synced, and renamed over the old one: a crash leaves
// the old file or the new one, never a mix.
//
// The package does no scheduling and imports no engine: it knows records,
// bytes and files.
//
// The scheduler process runs it (with --state-dir).
package journal
