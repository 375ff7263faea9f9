// Package custody is the pure machine of what a scheduler holds between
// jobs: which sessions it is the home of and at which epoch, the replicas
// it keeps of other homes' journals, the directory of the chunks its
// sessions keep (where each copy is, which are lost, which workers offered
// what), and the lifecycle of each session's graphs (running, to run
// again). A Machine is one scheduler's: exec/sim steps one for each
// scheduler it simulates, and the scheduler process keeps its Directory
// (exec/sched) and its Tenure (cmd/marsfs's fence: the lease, grants,
// epochs held and sessions given up, per scheduler rather than per
// session); the Fence type runs in each worker. Like exec/core it starts no goroutine,
// does no I/O and reads no clock: the runner feeds it what happened as an
// Input to Step (a tick of the clock, a peer or worker up or down, chunks
// offered, a client's write or read, records shipped by a home, an append
// made durable, a worker's answer to a fence) and carries out the Output
// (append these records, ship these to that scheduler, acknowledge or
// refuse these writes, serve or forward these reads, ask these workers to
// fence an epoch, claim, free or copy these chunks, make this chunk again
// from lineage, run graph N again, take session S over, step down).
//
// # One home per session: epochs, targets, leases, witnesses
//
// A session is held by its home at an epoch. The epoch record, the first
// record of each epoch in the session's journal, names the home, the
// target (the scheduler the home ships its journal to, its ring successor
// when the epoch began) and the witnesses (a few workers, at most
// Config.Witnesses). The target does not change within an epoch.
//
//   - A write is acknowledged only when it is durable in the home's
//     journal and the target has appended it to its replica at the same
//     epoch (synchronous shipping). A home alone (no target) acknowledges
//     on its own journal. A write that cannot be made durable (a full disk
//     on either side) is refused with the reason, never acknowledged.
//   - Every acknowledgement from the target is also a lease: the home may
//     serve the session (reads and writes) until LeaseTerm after it sent
//     what the target acknowledged, by its own clock; the target counts
//     its grant from when it received it, so its grant ends later. A home
//     whose lease lapsed (it was paused, cut off, or restarted on its old
//     state dir) serves nothing until the target renews it, and the
//     target refuses to when it knows a later epoch: the home then steps
//     down and refuses with "session N moved to scheduler-X (epoch E)".
//   - A change of epoch (the target taking the session over when the home
//     is declared failed, or the home replacing a target declared failed)
//     must be accepted by a majority of the previous epoch's witnesses. A
//     worker's Fence accepts an epoch only above every epoch it accepted
//     for the session, so two contenders starting from the same epoch
//     cannot both win the next; the loser learns the winner from the
//     refusals. The target takes over only once its grant has run out.
//   - A replica is never merged with a diverged journal: a replica at
//     epoch E takes appends of epoch E in order, a later epoch only as a
//     whole file, and refuses an earlier epoch.
//
// # The chunk directory
//
// Each kept chunk belongs to one session and has its copies (an upload
// two, on different workers; a graph's chunk one, or more when a
// takeover's recall finds it on several) or is lost. A worker
// going takes its copies: an upload with a copy left gets another (Copy);
// a chunk with none is lost, to be taken back if a worker offers it
// (Claim) or made again from its lineage when read (Recompute); an
// upload has no lineage. Offers of chunks this scheduler did not lose are
// remembered: a takeover claims the new sessions' chunks from them.
// Claims and frees carry the session's epoch, and a worker's Fence
// refuses those of an epoch below one it accepted.
//
// The directory's rules are the Directory type's (directory.go), which
// the Machine steps for its sessions and exec/sched keeps for the running
// scheduler: one source of the rules for the simulator and the processes.
// A takeover's chunks no worker offered are recalled: every live worker
// is asked to take those it holds for another connection (the old home,
// paused, never lost its connections), and offers back what it took: a
// chunk lost is claimed from the first answer, and a later answer of a
// chunk held already is kept as another copy, never freed (a job of the
// session may have made the chunk again on that worker meanwhile).
package custody
