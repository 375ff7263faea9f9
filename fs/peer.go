package fs

import (
	"net"
	"os/user"
	"strconv"

	"marsfs/cluster/peer"
)

// TCPIdentity is the identity of a TCP client whose user cannot be found:
// one on another host, or where /proc/net is unreadable.
const TCPIdentity = "tcp"

// Identify returns who is at the other end of c, the owner of the sessions
// the connection creates:
//
//   - on a unix socket, the peer's user, from the kernel (SO_PEERCRED);
//   - on TCP from this host, the user owning the client's socket, found in
//     /proc/net/tcp{,6} as identd would (the kernel records the uid of
//     every socket);
//   - otherwise TCPIdentity.
//
// A user is named by its login name, or its uid when it has none. 9P2000.L
// carries a uname in Tattach, but the p9 server keeps it from the
// file system, and it is only a claim; the kernel's word is used instead.
func Identify(c net.Conn) string {
	if uid, ok := peer.UID(c); ok {
		return userName(uid)
	}
	return TCPIdentity
}

func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return u.Username
	}
	return id
}
