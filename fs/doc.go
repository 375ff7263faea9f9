// Package fs serves marsfs as a 9P2000.L file tree, and is a client of it.
//
// The tree (see README in it, and docs/marsfs.4.md) is made of synthetic files over
// an exec.Engine:
//
//	/README
//	/cluster/members, /cluster/workers/<w>/status      (with a Cluster)
//	/sessions/clone
//	/sessions/<N>/{ctl,submit,error}
//	/sessions/<N>/graphs/{<G>,last}/{spec,spec.json,status,wait,progress,error,operands,plan,events,ctl}
//	/sessions/<N>/tensors/<name>/{meta,data,npy,text,arrow,csv}
//	/sessions/<N>/tensors/<name>/chunks/<i>_<j>/{meta,data}
//	/sessions/<N>/tensors/<name>.npy                    (created to upload)
//
// # The tree as data
//
// Each directory is a function that lists its entries as nodes bound to
// what they name (a session, a graph, a tensor); files are made by a few
// constructors by kind: textFile (content rendered at every open),
// ctlFile (read a summary, write messages), blockingFile (a read waits for
// an event), arrayFile (a tensor's bytes, read through the engine's
// Tensor a chunk at a time as reads reach them, the slabs of
// tensor.Slabs), and the write-side handles of submit and uploads. Adding a file
// is adding an entry to its directory's list.
//
// # Content and errors
//
// Every open gets a fresh snapshot, so reading a file twice shows fresh
// content; reads at offsets read that snapshot. Sizes are 0 except for
// data and npy. Bad specs, control messages and uploads fail the write
// with EINVAL and leave their message in the session's error file;
// missing names are ENOENT, another identity's session EPERM. Because a
// 9P clunk cannot fail, what can only be judged at the close (the end of
// a spec, a truncated upload) is refused then, recorded in error, and
// leaves nothing behind.
//
// # Identity
//
// A session belongs to the identity that cloned it: on a unix socket the
// peer's user from the kernel (SO_PEERCRED), on TCP from this host the user
// owning the client's socket (from /proc/net/tcp), else "tcp". The p9
// server hides the attach's uname, and a uname is only a claim anyway.
// TCP listeners are refused beyond loopback, as there is no authentication.
//
// # Isolation
//
// Each connection is served by its own p9 server, so a client blocked in a
// read (a graph's wait file) holds no lock another connection needs; the
// transport answers Tauth (ENOENT, so that clients attach without it) and
// renames (EPERM) itself; a panic in a request becomes EIO for that request
// alone; and a malformed message ends only its own connection.
//
// The scheduler process serves the tree; marsfs's client verbs and mount
// use its 9P client.
package fs
