package shm

import (
	"math"
	"slices"
)

// NoNextUse is the next-use rank of a chunk no queued operand reads: a
// result kept for the session, or a chunk whose consumers are not yet known.
// Such chunks are the first to leave shared memory.
const NoNextUse = math.MaxInt64

// A Candidate describes a chunk held in shared memory for the spill policy.
type Candidate struct {
	ID   uint64
	Size int64 // bytes of shared memory that spilling it frees
	// Pinned chunks are being read. They are spilled only when unpinned ones
	// do not free enough: a view stays valid across a spill (see Store), so
	// this costs its readers speed, not correctness.
	Pinned bool
	// NextUse is the rank, in the graph's execution order, of the next
	// operand that reads the chunk: lower runs sooner. NoNextUse when none.
	NextUse int64
	// LastUse is a logical clock of the chunk's last creation or read:
	// higher is more recent.
	LastUse uint64
}

// ChooseVictims returns the chunks to spill, in order, to free need bytes,
// and whether they free that much. When they do not, it returns every
// candidate (the most that can be freed).
//
// The order is Belady's rule driven by the graph's order of execution: the
// chunk whose next reader runs last goes first, since everything sooner can
// run before it is needed back. Among equal ranks (chunks of one consumer,
// or with no known consumer) the least recently used goes first, then the
// larger (fewer files to write for the bytes freed), then the lower ID so
// that the choice is deterministic. Unpinned chunks all go before pinned
// ones.
func ChooseVictims(cands []Candidate, need int64) (victims []uint64, ok bool) {
	if need <= 0 {
		return nil, true
	}
	order := slices.Clone(cands)
	slices.SortFunc(order, func(a, b Candidate) int {
		switch {
		case a.Pinned != b.Pinned:
			if a.Pinned {
				return 1
			}
			return -1
		case a.NextUse != b.NextUse:
			if a.NextUse > b.NextUse {
				return -1
			}
			return 1
		case a.LastUse != b.LastUse:
			if a.LastUse < b.LastUse {
				return -1
			}
			return 1
		case a.Size != b.Size:
			if a.Size > b.Size {
				return -1
			}
			return 1
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	var freed int64
	for _, c := range order {
		if freed >= need {
			break
		}
		victims = append(victims, c.ID)
		freed += c.Size
	}
	return victims, freed >= need
}
