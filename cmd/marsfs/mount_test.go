package main

import (
	"bytes"
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needFUSE skips a test where FUSE cannot mount.
func needFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
}

// mounted reports whether dir is a mount point, from /proc/self/mountinfo.
func mounted(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// startMounted runs `marsfs up --mount DIR` with args, and waits for the
// tree to show at DIR. The mount is lazily unmounted at the end of the test
// whatever happens.
func startMounted(t *testing.T, bin string, args ...string) (*upProcess, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if mounted(t, dir) {
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	p := startUp(t, bin, append(args, "--mount", dir)...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "README")); err == nil {
			return p, dir
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tree did not show at %s in 30s:\n%s", dir, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMountTutorial runs docs/tutorial.sh on the tree of `marsfs up` with
// two worker processes mounted with FUSE, then checks that SIGTERM
// unmounts it.
func TestMountTutorial(t *testing.T) {
	needFUSE(t)
	bin := build(t)
	p, dir := startMounted(t, bin, "--workers", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := osexec.CommandContext(ctx, "bash", "../../docs/tutorial.sh", dir).CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), "tutorial: ok\n") {
		t.Errorf("tutorial.sh: %v\n%s\nmarsfs up:\n%s", err, out, p.stderr)
	}
	p.stop(t)
	if mounted(t, dir) {
		t.Errorf("%s still mounted after marsfs up exited", dir)
	}
}

// TestMountREADME runs the README's "Mounting" example verbatim on a FUSE
// mount (its first line, which starts the server, is what the test does
// itself), and checks each command's output against the answer the README
// gives in its comment.
func TestMountREADME(t *testing.T) {
	needFUSE(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## Mounting")
	if !ok {
		t.Fatal("README.md has no Mounting section")
	}
	_, block, _ := strings.Cut(rest, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if strings.HasPrefix(lines[0], "mkdir -p /mnt/marsfs") {
		lines = lines[1:] // the test mounts on a directory of its own
	}
	if !strings.HasPrefix(lines[0], "./marsfs up --mount /mnt/marsfs") {
		t.Fatalf("the example no longer starts with marsfs up --mount: %q", lines[0])
	}
	bin := build(t)
	p, dir := startMounted(t, bin, "--workers", "2")
	script := strings.Join(lines[1:], "\n")
	script = strings.ReplaceAll(script, "/mnt/marsfs", dir)
	cmd := osexec.Command("bash", "-c", script)
	cmd.Dir = t.TempDir()
	out, _ := cmd.CombinedOutput()
	// The answers the README promises, in its comments.
	for _, l := range lines[1:] {
		_, comment, ok := strings.Cut(l, "# ")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(comment, "["), strings.HasPrefix(comment, "1:5:"):
			if !strings.Contains(string(out), comment) {
				t.Errorf("README promises %q; the example printed:\n%s", comment, out)
			}
		case strings.HasPrefix(comment, "fails: "):
			if !strings.Contains(string(out), strings.TrimPrefix(comment, "fails: ")) {
				t.Errorf("README promises the shell reports %q; the example printed:\n%s", comment, out)
			}
		case strings.HasPrefix(comment, "blocks, then SUCCEEDED"):
			if !strings.Contains(string(out), "SUCCEEDED\n") {
				t.Errorf("no SUCCEEDED status in:\n%s", out)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "x.npy")); err != nil {
		t.Errorf("the example's cp of npy made no x.npy: %v", err)
	}
	p.stop(t)
}

// TestMountInterrupt interrupts a cat of a wait file blocked on a running
// graph, and checks that the mount still serves.
func TestMountInterrupt(t *testing.T) {
	needFUSE(t)
	bin := build(t)
	p, dir := startMounted(t, bin, "--workers", "0")
	clone, err := os.ReadFile(filepath.Join(dir, "sessions/clone"))
	if err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(dir, "sessions", strings.TrimSpace(string(clone)))
	// A graph that runs for seconds; the ctl cancel below ends it.
	spec := "a = ones((4000, 4000), chunks=500)\nb = (a @ a).sum()\n"
	if err := os.WriteFile(filepath.Join(s, "submit"), []byte(spec), 0); err != nil {
		t.Fatal(err)
	}
	cat := osexec.Command("cat", filepath.Join(s, "graphs/last/wait"))
	var out bytes.Buffer
	cat.Stdout = &out
	if err := cat.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cat.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cat.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("cat wait ended well after SIGINT, reading %q", out.String())
		}
	case <-time.After(5 * time.Second):
		cat.Process.Kill()
		t.Fatal("cat wait not ended 5s after SIGINT")
	}
	if st, err := os.ReadFile(filepath.Join(s, "graphs/last/status")); err != nil || !strings.HasPrefix(string(st), "RUNNING\n") {
		t.Errorf("status after the interrupted wait: %q, %v", st, err)
	}
	if err := os.WriteFile(filepath.Join(s, "graphs/last/ctl"), []byte("cancel\n"), 0); err != nil {
		t.Fatal(err)
	}
	st, err := os.ReadFile(filepath.Join(s, "graphs/last/wait"))
	if err != nil || !strings.HasPrefix(string(st), "CANCELLED\n") {
		t.Errorf("wait after cancel: %q, %v", st, err)
	}
	p.stop(t)
	if mounted(t, dir) {
		t.Errorf("%s still mounted after marsfs up exited", dir)
	}
}

// TestMountCommand mounts a running server's tree with `marsfs mount`, and
// checks that SIGINT unmounts it.
func TestMountCommand(t *testing.T) {
	needFUSE(t)
	bin := build(t)
	p := startUp(t, bin, "--workers", "0")
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if mounted(t, dir) {
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	m := osexec.Command(bin, "mount", "--addr", p.unx, dir)
	var stderr bytes.Buffer
	m.Stderr = &stderr
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Process.Kill(); m.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for !mounted(t, dir) {
		if time.Now().After(deadline) {
			t.Fatalf("marsfs mount did not mount in 20s:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "README")); err != nil || !bytes.HasPrefix(b, []byte("marsfs: ")) {
		t.Errorf("README through the mount: %q %v", b, err)
	}
	m.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- m.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("marsfs mount after SIGINT: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("marsfs mount did not exit 10s after SIGINT")
	}
	if mounted(t, dir) {
		t.Errorf("%s still mounted after marsfs mount exited", dir)
	}
	p.stop(t)
}

// TestMountWithKey mounts a keyed server's TCP address with the key from
// $MARSFS_KEY: the mount speaks TLS, proving the key, and its sessions
// belong to the key's identity; a spec runs through it.
func TestMountWithKey(t *testing.T) {
	needFUSE(t)
	bin := build(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("mount secret\n"), 0600)
	p := startUp(t, bin, "--workers", "1", "--key-file", keyFile)
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if mounted(t, dir) {
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	m := osexec.Command(bin, "mount", "--addr", p.tcp, dir)
	m.Env = append(os.Environ(), "MARSFS_KEY=mount secret")
	var stderr bytes.Buffer
	m.Stderr = &stderr
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Process.Kill(); m.Wait() })
	for deadline := time.Now().Add(20 * time.Second); !mounted(t, dir); {
		if time.Now().After(deadline) {
			t.Fatalf("marsfs mount did not mount in 20s:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	id, err := os.ReadFile(filepath.Join(dir, "sessions/clone"))
	if err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(dir, "sessions", strings.TrimSpace(string(id)))
	if err := os.WriteFile(filepath.Join(s, "submit"), []byte("y = arange(10).sum()\n"), 0644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(s, "graphs/last/wait")); err != nil || !bytes.HasPrefix(b, []byte("SUCCEEDED")) {
		t.Fatalf("wait through a keyed mount: %s %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(s, "tensors/y/text")); strings.TrimSpace(string(b)) != "45" {
		t.Errorf("y through a keyed mount: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(s, "ctl")); !strings.Contains(string(b), "owner key\n") {
		t.Errorf("ctl of a session made over TLS:\n%s", b)
	}
	m.Process.Signal(os.Interrupt)
	m.Wait()
	p.stop(t)
}
