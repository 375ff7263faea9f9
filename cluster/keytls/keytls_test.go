package keytls

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"
)

// pair runs a handshake between a client of key ck and a server of key
// sk over a pipe, and a message each way when it succeeds.
func pair(t *testing.T, ck, sk []byte) (clientErr, serverErr error) {
	t.Helper()
	cp, err := New(ck)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := New(sk)
	if err != nil {
		t.Fatal(err)
	}
	a, b := tcpPair(t)
	defer a.Close()
	defer b.Close()
	deadline := time.Now().Add(5 * time.Second)
	done := make(chan error, 1)
	go func() {
		sc, err := sp.Server(b, deadline)
		if err == nil {
			buf := make([]byte, 5)
			if _, err = io.ReadFull(sc, buf); err == nil && string(buf) != "hello" {
				t.Errorf("server read %q", buf)
			}
		}
		b.Close() // a refused client must not wait for more
		done <- err
	}()
	cc, err := cp.Client(a, deadline)
	if err == nil {
		_, err = cc.Write([]byte("hello"))
	}
	if err != nil {
		a.Close()
	}
	return err, <-done
}

func TestSameKeyConnects(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	if cerr, serr := pair(t, key, key); cerr != nil || serr != nil {
		t.Fatalf("same key: client %v, server %v", cerr, serr)
	}
}

func TestOtherKeyRefused(t *testing.T) {
	cerr, serr := pair(t, bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{8}, 32))
	if cerr == nil || serr == nil {
		t.Fatalf("other keys: client %v, server %v; want both refused", cerr, serr)
	}
}

// A client with no certificate at all (no key, or an ordinary TLS client)
// is refused by the server before any byte of the tree moves.
func TestClientWithoutKeyRefused(t *testing.T) {
	sp, _ := New(bytes.Repeat([]byte{7}, 32))
	a, b := tcpPair(t)
	defer a.Close()
	defer b.Close()
	done := make(chan error, 1)
	go func() {
		_, err := sp.Server(b, time.Now().Add(5*time.Second))
		b.Close()
		done <- err
	}()
	c := tls.Client(a, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Handshake()
	if err := <-done; err == nil {
		t.Fatal("server accepted a client without a certificate")
	}
}

// Every holder of the key derives the same certificate, byte for byte.
func TestDeterministic(t *testing.T) {
	key := []byte("some cluster key, hashed")
	p1, _ := New(key)
	p2, _ := New(key)
	if !bytes.Equal(p1.cert.Certificate[0], p2.cert.Certificate[0]) {
		t.Fatal("two derivations of one key differ")
	}
	p3, _ := New(append(key, 'x'))
	if bytes.Equal(p1.pub, p3.pub) {
		t.Fatal("two keys derive the same public key")
	}
}

// tcpPair returns the two ends of a loopback TCP connection: unlike a
// pipe, it buffers, as the handshakes' alerts need.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}
