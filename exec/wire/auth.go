package wire

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"marsfs/cluster/keytls"
	"marsfs/cluster/peer"
)

// Every connection to a worker's TCP service opens with a challenge and
// response that proves to each end that the other holds the cluster key:
//
//	client → server: "MFS1", a 32-byte random nonce c
//	server → client: a 32-byte random nonce s, HMAC-SHA256(key, "server" c s)
//	client → server: HMAC-SHA256(key, "client" c s), the connection's kind byte
//	server → client: 0 (accepted) or 1 (refused)
//
// Each end checks the other's MAC before anything else moves, so a peer
// without the key can neither submit ops, read chunks nor pose as a worker.
// Without a key the MACs use the empty key: that is only allowed on loopback
// (see checkListen), and a keyed end still refuses a keyless one.
//
// With a key the connection is TLS 1.3 first (package cluster/keytls: both
// ends present the certificate derived from the key, and pin it), and the
// handshake above runs inside it: every byte after the TCP handshake,
// chunks included, is encrypted. Without a key, on loopback, a worker
// serves only processes of its own user (OtherUser).

const (
	authMagic = "MFS1"
	nonceLen  = 32
	// authTimeout bounds a handshake, so that a silent peer cannot hold a
	// worker's goroutine.
	authTimeout = 10 * time.Second
)

// ErrAuth is the error of a handshake with a peer that holds another key.
var ErrAuth = errors.New("cluster authentication failed (wrong or missing key)")

// DeriveKey turns a shared secret of any length into the 32-byte cluster
// key: the gossip encryption key and the key of the workers' TCP service.
func DeriveKey(secret []byte) []byte {
	sum := sha256.Sum256(secret)
	return sum[:]
}

// LoadKey returns the cluster key from the secret in file, or, when file is
// empty, from the MARSFS_KEY environment variable; surrounding white space
// is ignored. It returns nil when neither is given.
func LoadKey(file string) ([]byte, error) {
	var secret string
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("key file: %w", err)
		}
		if secret = strings.TrimSpace(string(b)); secret == "" {
			return nil, fmt.Errorf("key file %s is empty", file)
		}
	} else if secret = strings.TrimSpace(os.Getenv("MARSFS_KEY")); secret == "" {
		return nil, nil
	}
	return DeriveKey([]byte(secret)), nil
}

// CheckListen refuses an address beyond loopback when there is no key:
// cluster traffic off the machine must be authenticated.
func CheckListen(what, addr string, key []byte) error {
	if len(key) > 0 {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s address %q: %w", what, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s address %s is beyond loopback: cluster traffic there needs a shared key (--key-file or MARSFS_KEY)", what, addr)
}

func authMAC(key []byte, role string, cn, sn []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(role))
	m.Write(cn)
	m.Write(sn)
	return m.Sum(nil)
}

// clientAuth runs the client's side of the handshake on c and names the
// connection's kind.
func clientAuth(c net.Conn, key []byte, kind byte) error {
	c.SetDeadline(time.Now().Add(authTimeout))
	defer c.SetDeadline(time.Time{})
	hello := make([]byte, len(authMagic)+nonceLen)
	copy(hello, authMagic)
	cn := hello[len(authMagic):]
	rand.Read(cn)
	if _, err := c.Write(hello); err != nil {
		return err
	}
	reply := make([]byte, nonceLen+sha256.Size)
	if _, err := io.ReadFull(c, reply); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return ErrAuth // the server hung up on the hello
		}
		return err
	}
	sn := reply[:nonceLen]
	if !hmac.Equal(reply[nonceLen:], authMAC(key, "server", cn, sn)) {
		return ErrAuth
	}
	if _, err := c.Write(append(authMAC(key, "client", cn, sn), kind)); err != nil {
		return err
	}
	var ok [1]byte
	if _, err := io.ReadFull(c, ok[:]); err != nil || ok[0] != 0 {
		return ErrAuth
	}
	return nil
}

// Secure runs the server's TLS handshake on c when there is a key
// (returning the TLS connection, which the server then uses instead of c),
// and returns c as it is otherwise.
func Secure(c net.Conn, key []byte) (net.Conn, error) {
	if len(key) == 0 {
		return c, nil
	}
	p, err := keytls.For(key)
	if err != nil {
		return nil, err
	}
	return p.Server(c, time.Now().Add(authTimeout))
}

// ServerAuth runs the server's side of the handshake on c, reading through
// r (which buffers c), and returns the connection's kind.
func ServerAuth(c net.Conn, r io.Reader, key []byte) (byte, error) {
	c.SetDeadline(time.Now().Add(authTimeout))
	defer c.SetDeadline(time.Time{})
	hello := make([]byte, len(authMagic)+nonceLen)
	if _, err := io.ReadFull(r, hello); err != nil {
		return 0, err
	}
	if !bytes.Equal(hello[:len(authMagic)], []byte(authMagic)) {
		return 0, errors.New("not a marsfs connection")
	}
	cn := hello[len(authMagic):]
	sn := make([]byte, nonceLen)
	rand.Read(sn)
	if _, err := c.Write(append(append([]byte(nil), sn...), authMAC(key, "server", cn, sn)...)); err != nil {
		return 0, err
	}
	resp := make([]byte, sha256.Size+1)
	if _, err := io.ReadFull(r, resp); err != nil {
		return 0, err
	}
	if !hmac.Equal(resp[:sha256.Size], authMAC(key, "client", cn, sn)) {
		c.Write([]byte{1})
		return 0, ErrAuth
	}
	if _, err := c.Write([]byte{0}); err != nil {
		return 0, err
	}
	return resp[sha256.Size], nil
}

// Dial connects to a worker's service at addr for a connection of the
// given kind, authenticating both ends with key.
func Dial(ctx context.Context, addr string, kind byte, key []byte) (net.Conn, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := raw
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	if len(key) > 0 {
		var p *keytls.Pair
		if p, err = keytls.For(key); err == nil {
			c, err = p.Client(raw, time.Now().Add(authTimeout))
		}
		if err != nil {
			stop()
			raw.Close()
			return nil, fmt.Errorf("%s: %w: %v", addr, ErrAuth, err)
		}
	}
	err = clientAuth(c, key, kind)
	if !stop() {
		err = ctx.Err() // the handshake may have seen the deadline
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return c, nil
}

// SameUser reports whether the kernel says that the process at the other
// end of c, on this host, runs as this process's user. It is strict: a
// connection the kernel cannot say this of (another host, no /proc) is
// not of the same user. An in-process pipe is.
func SameUser(c net.Conn) bool {
	uid, known, local := peerUID(c)
	return !local || known && uid == uint32(os.Getuid())
}

// OtherUser reports whether the kernel says that the process at the other
// end of c runs as another user than this process's. Where it cannot say
// (no /proc/net/tcp in some sandboxes), it is not another user: a keyless
// cluster then works as before, on loopback.
func OtherUser(c net.Conn) bool {
	uid, known, local := peerUID(c)
	return local && known && uid != uint32(os.Getuid())
}

// peerUID returns the uid at the other end of c, whether the kernel told
// it, and whether c is a socket at all (not an in-process pipe).
func peerUID(c net.Conn) (uid uint32, known, socket bool) {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	switch c.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return 0, false, false
	}
	uid, known = peer.UID(c)
	return uid, known, true
}

// PeerUser describes the user at the other end of c, for messages.
func PeerUser(c net.Conn) string {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	if uid, ok := peer.UID(c); ok {
		return fmt.Sprintf("uid %d", uid)
	}
	return "an unknown user"
}
