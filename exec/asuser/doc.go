// Package asuser opens the files of a data directory for a user: the
// owner of the session whose spec names them (from_npy, from_zarr,
// to_npy, to_zarr). Two processes run it: the scheduler, which reads the
// headers and metadata of the files a spec reads, and checks where it
// writes, when the spec is submitted; and every worker, whose file kernels
// read and write the chunks.
//
// # Who a session's owner is on this host
//
// A session belongs to an identity that package fs found from the kernel
// (the uid of a unix socket's peer, or of a loopback TCP client's socket)
// and named by its login name, or its uid when the user database has
// none. Root.Owner maps it to a chunk.Owner: the uid, the primary gid and
// the supplementary groups of that user in the scheduler's user database
// (/etc/passwd and /etc/group, or what NSS serves), as an NFS server
// with --manage-gids takes a caller's groups from its own database rather
// than from the client. A uid the database lacks acts with the overflow
// group (65534) and no other: its own files, and what the world may.
// Identities that are no user of this host (a client that proved only the
// cluster key, one over TCP from another host) have no owner: every spec
// of theirs that names a file is refused with EACCES. The owner travels
// with the ops (chunk.Owner in their arguments) to the workers, which
// trust it as they trust every op of their scheduler: both ends of the
// control connection proved the cluster key or are the same user.
//
// # Whose rights
//
// A server running as root acts for any owner: every operation on a path
// (open, stat, mkdir, rename, unlink) runs on an OS thread of its own,
// locked to its goroutine, whose filesystem uid and gid (setfsuid,
// setfsgid) and supplementary groups (setgroups, made as a raw system call
// so that it changes this thread only, where Go's syscall.Setgroups
// changes every thread of the process) are the owner's, and are restored
// after. The kernel checks the owner's rights as it does the operation:
// there is no access() before an open, so nothing changes between a check
// and its use. Files and directories made this way belong to the owner. A
// thread whose credentials cannot be restored is never used again: its
// goroutine ends still locked to it, and the Go runtime ends a thread so
// left. What is read or written through a descriptor once opened needs no
// credentials (the kernel checked them at the open), so reads and writes
// run on any thread.
//
// A server not running as root cannot take another user's rights: it
// opens files for its own uid only, with its own rights, and refuses
// every other owner with EACCES.
package asuser
