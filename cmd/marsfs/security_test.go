package main

import (
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marsfs/fs"
)

// publicCopy copies the binary where another user can run it.
func publicCopy(t *testing.T, bin string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "marsfs-pub-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0755)
	in, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	pub := filepath.Join(dir, "marsfs")
	out, err := os.OpenFile(pub, os.O_CREATE|os.O_WRONLY, 0755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	return pub
}

// TestOtherUsersWorkerRefused: on a cluster without a key (loopback), a
// worker started by another user joins the gossip, but the scheduler,
// which asks the kernel who owns the worker's socket, refuses it: it is
// never given a chunk, and /cluster/workers/NAME/status says why. Before
// issue 20 it was given chunks of root's tensors and read their values.
func TestOtherUsersWorkerRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("starting a worker as another user needs root")
	}
	setpriv, err := osexec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	bin := build(t)
	pub := publicCopy(t, bin)
	up := startUp(t, bin, "--workers", "1")
	rogue := osexec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
		pub, "worker", "--join", up.join, "--name", "rogue", "--store", "mem")
	var rlog strings.Builder
	rogue.Stdout, rogue.Stderr = &rlog, &rlog
	if err := rogue.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { rogue.Process.Kill(); rogue.Wait() }()

	c, err := fs.Dial(up.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.AfterFunc(19*time.Second, func() { t.Logf("rogue worker log:\n%s", rlog.String()) })
	status := waitFor(t, c, "/cluster/workers/rogue/status", 20*time.Second, func(s string) bool { return strings.HasPrefix(s, "refused") })
	if !strings.Contains(status, "uid 65534") {
		t.Errorf("the refusal does not name the user:\n%s", status)
	}
	s := newSession(t, c)
	submitOK(t, c, s, "a = arange(1000000, chunks=20000)\n")
	submitOK(t, c, s, "t = (a * 2).sum()\n")
	if got := strings.TrimSpace(readText(t, c, s+"/tensors/t/text")); got != "999999000000" {
		t.Errorf("sum = %s", got)
	}
	ents, err := c.ReadDir(s + "/tensors/a/chunks")
	if err != nil || len(ents) != 50 {
		t.Fatalf("chunks of a: %d, %v", len(ents), err)
	}
	for _, e := range ents {
		meta := readText(t, c, s+"/tensors/a/chunks/"+e.Name+"/meta")
		if !strings.Contains(meta, "worker worker-1\n") {
			t.Errorf("chunk %s of a:\n%s", e.Name, meta)
		}
	}
	up.stop(t)
}
