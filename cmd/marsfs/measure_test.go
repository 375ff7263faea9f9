package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/wire"
	"marsfs/fs"
)

// TestMeasureForwarding (MARSFS_MEASURE=1) measures what forwarding to a
// session's home costs, and what TLS costs: small reads (a session's ctl)
// and a 256 MiB tensor's data, read from the home and through another
// scheduler; the same over loopback TCP in clear and with the key.
func TestMeasureForwarding(t *testing.T) {
	if os.Getenv("MARSFS_MEASURE") == "" {
		t.Skip("set MARSFS_MEASURE=1 to measure")
	}
	bin := build(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("measure"), 0600)
	up := startUp(t, bin, "--workers", "2", "--key-file", keyFile)
	s2 := startServer(t, bin, "scheduler", "--gossip", "127.0.0.1:0", "--join", up.join, "--key-file", keyFile)
	home, err := fs.Dial(up.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	other, err := fs.Dial(s2.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	key, _ := wire.LoadKey(keyFile)
	keyed, err := fs.DialKey(up.tcp, key)
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Close()
	waitFor(t, other, "/cluster/members", 20*time.Second, func(s string) bool { return strings.Count(s, " scheduler alive") == 2 })
	// A session whose home is up's scheduler, for each identity (the
	// keyed client is the key's, the others root).
	homed := func(c *fs.Client) string {
		for {
			sess := newSession(t, c)
			if strings.Contains(readText(t, c, sess+"/ctl"), "home scheduler\n") {
				submitOK(t, c, sess, "a = ones(33554432, chunks=4194304)\n")
				return sess
			}
		}
	}
	sess, keyedSess := homed(home), homed(keyed)
	small := func(c *fs.Client, sess string) time.Duration {
		const n = 200
		start := time.Now()
		for range n {
			if _, err := c.ReadFile(sess + "/ctl"); err != nil {
				t.Fatal(err)
			}
		}
		return time.Since(start) / n
	}
	big := func(c *fs.Client, sess string) float64 {
		f, err := c.Open(sess+"/tensors/a/data", p9.ReadOnly)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		start := time.Now()
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, make([]byte, 1<<20))
		if err != nil || n != 256<<20 {
			t.Fatalf("read %d bytes: %v", n, err)
		}
		return float64(n) / time.Since(start).Seconds() / 1e6
	}
	for round := range 2 {
		t.Logf("round %d: ctl open+read+clunk: home %v, forwarded %v, home over TLS %v", round+1, small(home, sess), small(other, sess), small(keyed, keyedSess))
		t.Logf("round %d: 256 MiB data: home %.0f MB/s, forwarded %.0f MB/s, home over TLS %.0f MB/s", round+1, big(home, sess), big(other, sess), big(keyed, keyedSess))
	}
	s2.halt(t)
	up.stop(t)
}
