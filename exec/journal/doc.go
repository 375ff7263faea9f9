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
// A file whose checksum does not match is not half-restored: Decode and
// Restore return the records before the damage together with an error
// that names the offset and the reason, and the caller reports the
// session lost. The records written are only ever appended, and Sync is
// called at each write a client waits on and at each graph end, so a
// file cut at a record boundary is a state the session was in: restoring
// it serves nothing wrong, only, at worst, less than the scheduler knew
// after its last sync.
//
// A file whose last record is cut short (a torn tail: the machine lost
// power mid-write, or a write that failed could not be cut off again) is
// the one damage Load mends: a record is acknowledged only once it is
// whole on disk, so the torn one never was, and Load cuts the file
// before it and restores the records before. Torn tells it from damage
// that also reads as a record running past the end (a flipped bit in a
// length): a torn record's bytes are not a whole record of another
// length, and no whole record follows it. The tests cut and flip every
// file at every offset and check exactly that.
//
// # Compaction
//
// As the file grows (or a graph ends and many of its records are dead)
// the session's State is written again as a short file (State.Records)
// beside the last good one (NAME.tmp), synced, renamed over it, and the
// directory synced: a crash leaves the old file or the new one, never a
// mix, and a compaction that fails (no room for the second copy) removes
// its temporary file and leaves the last good file the session's.
//
// # A disk that fills or fails
//
// A write is acknowledged only once it is on disk: Append returns the
// error of a write or fsync that fails (ENOSPC, EIO, wrapped so that
// errors.Is finds the errno), the record is not part of the session's
// state, and the bytes written of it are cut off the file again, so that
// the file is the history it was. Where that cannot be known (an fsync
// that failed may have lost earlier unsynced writes; the cut itself may
// fail) the Log marks its file stale and, before its next record, writes
// it again whole from the state as compaction does. What has happened
// already and waits on no client (a graph's end, the tensors it kept) is
// written with Note, which keeps the record in the state whatever the
// write did, for that rewrite. Each session has a file of its own, so one
// session's failures touch no other's; a session resumed on a full disk
// (Resume) goes on in the file it was read from. The journal's writes go
// through a small file-system interface (disk.go), so that the tests fill
// the disk at every byte of a record and of a compaction.
//
// The package does no scheduling and imports no engine: it knows records,
// bytes and files.
//
// The scheduler process runs it (with --state-dir).
package journal
