package exec

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

	"marsfs/tensor"
)

func TestCheckListen(t *testing.T) {
	key := DeriveKey([]byte("s"))
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
		err := checkListen("test", tc.addr, tc.key)
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
	k, err := LoadKey(file)
	if err != nil || string(k) != string(DeriveKey([]byte("sesame"))) || len(k) != 32 {
		t.Errorf("LoadKey(file) = %x, %v", k, err)
	}
	if k, err := LoadKey(""); k != nil || err != nil {
		t.Errorf("no key: %x, %v", k, err)
	}
	t.Setenv("MARSFS_KEY", "sesame")
	if k2, err := LoadKey(""); err != nil || string(k2) != string(k) {
		t.Errorf("MARSFS_KEY: %x, %v", k2, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	if _, err := LoadKey(empty); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty key file: %v", err)
	}
	if _, err := LoadKey(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing key file accepted")
	}
}

// TestWorkerRefusesOpenListen starts workers beyond loopback without a key.
func TestWorkerRefusesOpenListen(t *testing.T) {
	for _, cfg := range []WorkerConfig{
		{Name: "open", Listen: "0.0.0.0:0", Fast: true},
		{Name: "open", Gossip: "0.0.0.0:0", Fast: true},
	} {
		w, err := StartWorker(context.Background(), cfg)
		if err == nil {
			w.Close()
			t.Fatalf("worker listening with %+v started without a key", cfg)
		}
		if !strings.Contains(err.Error(), "beyond loopback") {
			t.Errorf("error %v", err)
		}
	}
	if s, err := NewScheduler(context.Background(), SchedulerConfig{Gossip: "0.0.0.0:0", Fast: true}); err == nil {
		s.Close()
		t.Fatal("scheduler gossiping beyond loopback without a key started")
	}
}

// TestDataPortAuth dials a keyed worker's service with the right key, a
// wrong one, none, and with bytes that are no handshake at all.
func TestDataPortAuth(t *testing.T) {
	key := DeriveKey([]byte("right"))
	s, err := NewScheduler(context.Background(), SchedulerConfig{Fast: true, SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := StartWorker(context.Background(), WorkerConfig{Name: "w", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true, SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a := ramp(tensor.Float64, []int{5}, 1)
	w.Store().Put(9, a)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	good := newDataPool(1<<20, key)
	defer good.close()
	got, err := good.fetch(ctx, w.Addr(), 9)
	if err != nil || string(got.Data) != string(a.Data) {
		t.Fatalf("fetch with the key: %v", err)
	}
	for _, bad := range [][]byte{DeriveKey([]byte("wrong")), nil} {
		p := newDataPool(1<<20, bad)
		_, err := p.fetch(ctx, w.Addr(), 9)
		p.close()
		if !errors.Is(err, errAuth) {
			t.Errorf("fetch with key %x: %v, want %v", bad, err, errAuth)
		}
		if err := putChunk(ctx, w.Addr(), 10, a, bad); !errors.Is(err, errAuth) {
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
	nk, err := StartWorker(context.Background(), WorkerConfig{Name: "nokey", Slots: 1, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer nk.Close()
	if _, err := dialData(ctx, nk.Addr(), connControl, key); !errors.Is(err, errAuth) {
		t.Errorf("keyed dial of a keyless worker: %v", err)
	}
	if c, err := dialData(ctx, nk.Addr(), connControl, nil); err != nil {
		t.Errorf("keyless dial of a keyless worker: %v", err)
	} else {
		c.Close()
	}
}
