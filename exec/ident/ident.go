// Package ident says how the numbers that name things across a marsfs
// cluster are made unique when several schedulers share its workers.
//
// Every scheduler numbers its chunks, jobs and sessions itself, with no
// round trip to the others: each takes a Space, a number no other
// scheduler of the cluster holds, and makes its numbers inside it.
//
//   - A chunk ID (and a job ID) is the space in its top SpaceBits bits and
//     a counter in the rest: 2^44 (1.7e13) IDs a space, two hundred days
//     at a million chunks a second. Workers key chunks, and runs by job,
//     on these numbers, so two schedulers' chunks can never meet under
//     one ID.
//   - A session number is Space*SessionsPerSpace plus a counter, so that
//     numbers stay decimal and readable: the first scheduler of a cluster
//     (space 0) numbers its sessions 1, 2, 3 as a lone scheduler always
//     has, the one of space 381 numbers them 381000001, 381000002, ...
//
// The first scheduler of a cluster, the one started without --join, takes
// space 0. A scheduler joining a cluster takes a random space among the
// 2^20-1 others, after joining, that no member of the member table
// publishes (Pick): one of another process, even one that died a moment
// ago and whose workers still hold its chunks as orphans, is then taken
// again only by a one-in-a-million chance at each join. The space is
// published in the scheduler's node metadata, and its name,
// "scheduler-SPACE", follows from it, so that names are unique too.
package ident

import "fmt"

// A Space is a scheduler's share of the cluster's numbers.
type Space uint32

const (
	// SpaceBits is the width of a space in an ID.
	SpaceBits = 20
	// CounterBits is the width of the counter below it.
	CounterBits = 64 - SpaceBits
	// Spaces is the number of spaces.
	Spaces = 1 << SpaceBits
	// SessionsPerSpace is the stride of session numbers between spaces.
	SessionsPerSpace = 1000000
)

// FirstID is the ID before the first of the space: the IDs it hands out
// are FirstID()+1, FirstID()+2, ...
func (s Space) FirstID() uint64 { return uint64(s) << CounterBits }

// FirstSession is the session number before the first of the space.
func (s Space) FirstSession() int { return int(s) * SessionsPerSpace }

// StartBits bounds where a scheduler process starts counting in its
// space (Start): 2^40 leaves 2^44-2^40 (1.6e13) IDs after the start.
const StartBits = 40

// Start returns the ID before the first this process hands out in the
// space: FirstID plus a random offset below 2^StartBits. A scheduler
// started again in the same space (the first scheduler of a cluster,
// restarted without a journal) then does not count again over the IDs
// of chunks its workers may still hold, as orphans, from the process
// before, but by chance once in a million restarts, for a million
// chunks made. A scheduler restored from a journal continues its count
// instead.
func (s Space) Start(rnd func() uint64) uint64 {
	return s.FirstID() + rnd()&(1<<StartBits-1)
}

// Of returns the space of chunk or job ID id.
func Of(id uint64) Space { return Space(id >> CounterBits) }

// SessionSpace returns the space of session number n.
func SessionSpace(n int) Space { return Space((n - 1) / SessionsPerSpace) }

func (s Space) String() string { return fmt.Sprintf("%d", uint32(s)) }

// Pick returns a space for a scheduler joining a cluster: the first of
// the candidates rnd draws that is neither 0 (the first scheduler's) nor
// taken. It gives up after many draws, which only a cluster holding most
// of the spaces could make happen.
func Pick(taken func(Space) bool, rnd func() uint32) (Space, error) {
	for range 1000 {
		s := Space(rnd() % Spaces)
		if s != 0 && !taken(s) {
			return s, nil
		}
	}
	return 0, fmt.Errorf("no free scheduler space after 1000 draws")
}
