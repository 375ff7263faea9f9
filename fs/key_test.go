package fs

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestKeyedServer: a server with a key serves TLS clients that prove it
// (their sessions are KeyIdentity's), refuses a client with another key
// saying so, and still serves plain 9P on loopback and the unix socket,
// identified by the kernel.
func TestKeyedServer(t *testing.T) {
	key := bytes.Repeat([]byte{1}, 32)
	ts := startServer(t, Config{Key: key})

	c, err := DialKey(ts.tcp, key)
	if err != nil {
		t.Fatalf("DialKey with the key: %v", err)
	}
	id, err := c.ReadFile("/sessions/clone")
	if err != nil {
		t.Fatal(err)
	}
	sess := ts.eng.Sessions()[0]
	if strings.TrimSpace(string(id)) != strconv.Itoa(sess.ID()) || sess.Owner() != KeyIdentity {
		t.Errorf("a keyed client's session belongs to %q, want %q", sess.Owner(), KeyIdentity)
	}
	c.Close()

	_, err = DialKey(ts.tcp, bytes.Repeat([]byte{2}, 32))
	if err == nil || !strings.Contains(err.Error(), "another key") {
		t.Errorf("DialKey with another key: %v", err)
	}
	for _, addr := range []string{ts.tcp, ts.sock} {
		c, err := Dial(addr)
		if err != nil {
			t.Fatalf("plain Dial of %s: %v", addr, err)
		}
		if _, err := c.ReadFile("/README"); err != nil {
			t.Errorf("plain read over %s: %v", addr, err)
		}
		c.Close()
	}
}

// TestListenBeyondLoopback: without a key a listener beyond loopback is
// refused, with one it opens.
func TestListenBeyondLoopback(t *testing.T) {
	if _, err := Listen("0.0.0.0:0"); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("Listen 0.0.0.0 without a key: %v", err)
	}
	l, err := ListenKey("0.0.0.0:0", []byte("k"))
	if err != nil {
		t.Fatalf("ListenKey 0.0.0.0 with a key: %v", err)
	}
	l.Close()
}
