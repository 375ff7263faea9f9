// Package wire is how the processes of marsfs talk: the scheduler's
// control connection to each worker (Conn, carrying Msg values many to a
// frame in a compact binary encoding, codec.go: submissions with the
// chunk.Op and where its inputs are, cancels, frees and status requests;
// started, done, failed and cancelled reports), the chunk service (a chunk
// as raw bytes behind a small dtype and shape header, fetched or put on
// connections of their own, pooled in Pool; a fetch may ask for a run of
// a chunk's elements, RangeRequest, a shuffle's piece), and the locate
// protocol by
// which a process on the same host maps a worker's chunk from shared
// memory instead of copying it.
//
// Every connection to a worker's service opens with a challenge and
// response over the cluster key (auth.go), the key that also encrypts
// gossip; without a key, workers and gossip listen on loopback only.
//
// Both run it: the scheduler and the workers speak it to each other.
package wire
