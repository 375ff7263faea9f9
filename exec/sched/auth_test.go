package sched

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/tensor"
)

func TestCheckListen(t *testing.T) {
	key := wire.DeriveKey([]byte("s"))
	for _, tc := range []struct {
		addr string
		key  []byte
		ok   bool
	}{
		{"127.0.0.1:0", nil, true},
		{"127.3.4.5:9000", nil, true},
		{"[::1]:0", nil, true},
		{"localhost:7946", nil, true},
		{"0.0.0.0:0", nil, false},
		{":7946", nil, false},
		{"10.1.2.3:0", nil, false},
		{"example.org:1", nil, false},
		{"0.0.0.0:0", key, true},
		{"10.1.2.3:0", key, true},
		{"no-port", nil, false},
	} {
		err := wire.CheckListen("test", tc.addr, tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("checkListen(%q, key %v) = %v", tc.addr, tc.key != nil, err)
		}
		if err != nil && tc.addr != "no-port" && !strings.Contains(err.Error(), "needs a shared key") {
			t.Errorf("checkListen(%q): unclear error %v", tc.addr, err)
		}
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	os.WriteFile(file, []byte("  sesame\n"), 0o600)
	t.Setenv("MARSFS_KEY", "")
	k, err := wire.LoadKey(file)
	if err != nil || string(k) != string(wire.DeriveKey([]byte("sesame"))) || len(k) != 32 {
		t.Errorf("LoadKey(file) = %x, %v", k, err)
	}
	if k, err := wire.LoadKey(""); k != nil || err != nil {
		t.Errorf("no key: %x, %v", k, err)
	}
	t.Setenv("MARSFS_KEY", "sesame")
	if k2, err := wire.LoadKey(""); err != nil || string(k2) != string(k) {
		t.Errorf("MARSFS_KEY: %x, %v", k2, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	if _, err := wire.LoadKey(empty); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty key file: %v", err)
	}
	if _, err := wire.LoadKey(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing key file accepted")
	}
}

// TestWorkerRefusesOpenListen starts workers beyond loopback without a key.
func TestWorkerRefusesOpenListen(t *testing.T) {
	for _, cfg := range []worker.Config{
		{Name: "open", Listen: "0.0.0.0:0", Fast: true},
		{Name: "open", Gossip: "0.0.0.0:0", Fast: true},
	} {
		w, err := worker.Start(context.Background(), cfg)
		if err == nil {
			w.Close()
			t.Fatalf("worker listening with %+v started without a key", cfg)
		}
		if !strings.Contains(err.Error(), "beyond loopback") {
			t.Errorf("error %v", err)
		}
	}
	if s, err := New(context.Background(), Config{Gossip: "0.0.0.0:0", Fast: true}); err == nil {
		s.Close()
		t.Fatal("scheduler gossiping beyond loopback without a key started")
	}
}

// TestDataPortAuth dials a keyed worker's service with the right key, a
// wrong one, none, and with bytes that are no handshake at all.
func TestDataPortAuth(t *testing.T) {
	key := wire.DeriveKey([]byte("right"))
	s, err := New(context.Background(), Config{Fast: true, SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true, SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a := ramp(tensor.Float64, []int{5}, 1)
	w.Store().Put(9, a)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	good := wire.NewPool(1<<20, key)
	defer good.Close()
	got, err := good.Fetch(ctx, w.Addr(), 9)
	if err != nil || string(got.Data) != string(a.Data) {
		t.Fatalf("fetch with the key: %v", err)
	}
	for _, bad := range [][]byte{wire.DeriveKey([]byte("wrong")), nil} {
		p := wire.NewPool(1<<20, bad)
		_, err := p.Fetch(ctx, w.Addr(), 9)
		p.Close()
		if !errors.Is(err, wire.ErrAuth) {
			t.Errorf("fetch with key %x: %v, want %v", bad, err, wire.ErrAuth)
		}
		if err := wire.PutChunk(ctx, w.Addr(), 10, a, bad); !errors.Is(err, wire.ErrAuth) {
			t.Errorf("put with key %x: %v", bad, err)
		}
		if _, ok := w.Store().Get(10); ok {
			t.Error("a put with the wrong key stored its chunk")
		}
	}
	// A peer that speaks no handshake is hung up on.
	c, err := net.Dial("tcp", w.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("F\x00\x00\x00\x00\x00\x00\x00\x09" + strings.Repeat("x", 64)))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := bufio.NewReader(c).ReadByte(); err == nil {
		t.Errorf("a raw fetch got byte %d back", b)
	}
	// A keyless worker does not take a keyed scheduler's control connection,
	// nor a keyed worker a keyless one's.
	nk, err := worker.Start(context.Background(), worker.Config{Name: "nokey", Slots: 1, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer nk.Close()
	if _, err := wire.Dial(ctx, nk.Addr(), wire.ConnControl, key); !errors.Is(err, wire.ErrAuth) {
		t.Errorf("keyed dial of a keyless worker: %v", err)
	}
	if c, err := wire.Dial(ctx, nk.Addr(), wire.ConnControl, nil); err != nil {
		t.Errorf("keyless dial of a keyless worker: %v", err)
	} else {
		c.Close()
	}
}
