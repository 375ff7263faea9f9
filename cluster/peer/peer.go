// Package peer finds who is at the other end of a connection on this
// host, from the kernel: the user of a unix socket's peer, or of the
// process owning the other end of a loopback TCP connection.
package peer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// UID returns the uid of the user at the other end of c, when the kernel
// can say: on a unix socket, the peer's (SO_PEERCRED); on TCP between two
// loopback addresses, the owner of the other end's socket, found in
// /proc/net/tcp{,6} as identd would (the kernel records the uid of every
// socket). It reports false otherwise (another host, or no /proc).
func UID(c net.Conn) (uint32, bool) {
	switch c := c.(type) {
	case *net.UnixConn:
		return peerUID(c)
	case *net.TCPConn:
		local, lok := c.LocalAddr().(*net.TCPAddr)
		remote, rok := c.RemoteAddr().(*net.TCPAddr)
		if lok && rok && remote.IP.IsLoopback() {
			return tcpOwner(remote, local)
		}
	}
	return 0, false
}

func peerUID(c *net.UnixConn) (uint32, bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var cerr error
	err = raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err != nil || cerr != nil {
		return 0, false
	}
	return cred.Uid, true
}

// tcpOwner finds the uid of the socket bound to local and connected to
// remote (the client's end of a connection to this server).
func tcpOwner(local, remote *net.TCPAddr) (uint32, bool) {
	for _, f := range []struct {
		path string
		v6   bool
	}{{"/proc/net/tcp", false}, {"/proc/net/tcp6", true}} {
		l, lok := procAddr(local, f.v6)
		r, rok := procAddr(remote, f.v6)
		if !lok || !rok {
			continue
		}
		if uid, ok := scanProcTCP(f.path, l, r); ok {
			return uid, true
		}
	}
	return 0, false
}

// procAddr renders a as /proc/net/tcp{,6} shows it: the address as 32-bit
// words in host (little-endian) order, then the port, all in hex.
func procAddr(a *net.TCPAddr, v6 bool) (string, bool) {
	var ip net.IP
	if v6 {
		ip = a.IP.To16()
	} else {
		ip = a.IP.To4()
	}
	if ip == nil {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(ip); i += 4 {
		fmt.Fprintf(&b, "%08X", binary.LittleEndian.Uint32(ip[i:i+4]))
	}
	fmt.Fprintf(&b, ":%04X", a.Port)
	return b.String(), true
}

func scanProcTCP(path, local, remote string) (uint32, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[1] != local || fields[2] != remote {
			continue
		}
		uid, err := strconv.ParseUint(fields[7], 10, 32)
		if err != nil {
			return 0, false
		}
		return uint32(uid), true
	}
	return 0, false
}
