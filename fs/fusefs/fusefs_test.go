package fusefs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/exec/sched"
	"marsfs/fs"
)

// mountTree serves a fresh engine on a unix socket and mounts it; both go
// at the end of the test (the mount lazily, whatever happened).
func mountTree(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	run := sched.NewLocal(2)
	t.Cleanup(func() { run.Close() })
	eng := engine.New(run)
	srv := fs.NewServer(eng, fs.Config{})
	sock := filepath.Join(t.TempDir(), "m.sock")
	l, err := fs.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0755); err != nil {
		t.Fatal(err)
	}
	m, err := New(dir, "unix:"+sock, Options{})
	if err != nil {
		srv.Close()
		eng.Close()
		t.Fatalf("cannot mount: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("Unmount: %v", err)
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
		srv.Close()
		eng.Close()
	})
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMount(t *testing.T) {
	dir := mountTree(t)
	if got := readFile(t, filepath.Join(dir, "README")); !strings.HasPrefix(got, "marsfs: ") {
		t.Errorf("README: %q", got)
	}
	s := filepath.Join(dir, "sessions", strings.TrimSpace(readFile(t, filepath.Join(dir, "sessions/clone"))))
	ents, err := os.ReadDir(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "ctl error graphs history submit tensors" {
		t.Errorf("session listing %q", got)
	}

	// A spec is submitted when the file is closed.
	if err := os.WriteFile(filepath.Join(s, "submit"), []byte("x = arange(6, chunks=4) * 2\n"), 0); err != nil {
		t.Fatal(err)
	}
	if st := readFile(t, filepath.Join(s, "graphs/last/wait")); !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Fatalf("wait: %q", st)
	}
	if got := readFile(t, filepath.Join(s, "tensors/x/text")); got != "[ 0  2  4  6  8 10]\n" {
		t.Errorf("text %q", got)
	}
	fi, err := os.Stat(filepath.Join(s, "tensors/x/data"))
	if err != nil || fi.Size() != 48 || !fi.Mode().IsRegular() {
		t.Errorf("stat data: %v %v", fi, err)
	}
	// Synthetic files of size 0 read whole, and afresh at each open.
	if fi, err := os.Stat(filepath.Join(s, "ctl")); err != nil || fi.Size() != 0 {
		t.Errorf("stat ctl: %v %v", fi, err)
	}
	if got := readFile(t, filepath.Join(s, "ctl")); !strings.Contains(got, "graphs 1") {
		t.Errorf("ctl before: %q", got)
	}

	// A bad spec fails the write with EINVAL; the reason is in error.
	f, err := os.OpenFile(filepath.Join(s, "submit"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write([]byte("y = frobnicate(2)\n"))
	f.Close()
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("write of a bad spec: %v, want EINVAL", err)
	}
	if got := readFile(t, filepath.Join(s, "error")); !strings.Contains(got, "frobnicate") {
		t.Errorf("error: %q", got)
	}

	// What is refused at the close fails the close.
	f, err = os.OpenFile(filepath.Join(s, "submit"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("y = (1")); err != nil {
		t.Fatalf("write of an unfinished spec: %v", err)
	}
	if err := f.Close(); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("close of an unfinished spec: %v, want EINVAL", err)
	}
	if got := readFile(t, filepath.Join(s, "error")); !strings.Contains(got, "never closed") {
		t.Errorf("error: %q", got)
	}

	// Two specs through one open, closed in between by a flush of a dup'd
	// descriptor, are two graphs.
	f, err = os.OpenFile(filepath.Join(s, "submit"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("y = x + 1\n")); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd) // a flush: submits y
	if _, err := f.Write([]byte("z = x + 2\n")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := readFile(t, filepath.Join(s, "graphs/last/wait")); !strings.HasPrefix(got, "SUCCEEDED") {
		t.Fatalf("wait: %q", got)
	}
	ents, _ = os.ReadDir(filepath.Join(s, "graphs"))
	if len(ents) != 4 { // 1 2 3 last
		t.Errorf("%d entries in graphs, want 1 2 3 last", len(ents))
	}
	for name, want := range map[string]string{"y": "[ 1  3  5  7  9 11]\n", "z": "[ 2  4  6  8 10 12]\n"} {
		if got := readFile(t, filepath.Join(s, "tensors", name, "text")); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}

	// Upload: create NAME.npy in tensors/.
	npy := []byte(readFile(t, filepath.Join(s, "tensors/x/npy")))
	if err := os.WriteFile(filepath.Join(s, "tensors/u.npy"), npy, 0644); err != nil {
		t.Fatalf("upload: %v (error: %s)", err, readFile(t, filepath.Join(s, "error")))
	}
	if got := readFile(t, filepath.Join(s, "tensors/u/text")); got != "[ 0  2  4  6  8 10]\n" {
		t.Errorf("uploaded u: %q", got)
	}
	// A truncated upload fails at the close, leaving nothing.
	err = os.WriteFile(filepath.Join(s, "tensors/v.npy"), npy[:20], 0644)
	if err == nil {
		t.Error("a truncated upload succeeded")
	}
	if _, err := os.Stat(filepath.Join(s, "tensors/v")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tensors/v after a truncated upload: %v", err)
	}
	// Nothing but NAME.npy can be made.
	if err := os.WriteFile(filepath.Join(s, "tensors/w.txt"), nil, 0644); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("create w.txt: %v, want EINVAL", err)
	}
}

// TestMountEvents reads a running graph's events to its end through the
// mount: reads wait for more, and the file ends with the graph.
func TestMountEvents(t *testing.T) {
	dir := mountTree(t)
	s := filepath.Join(dir, "sessions", strings.TrimSpace(readFile(t, filepath.Join(dir, "sessions/clone"))))
	spec := "a = ones((600, 600), chunks=200)\nb = (a @ a).sum()\n"
	if err := os.WriteFile(filepath.Join(s, "submit"), []byte(spec), 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	evs := readFile(t, filepath.Join(s, "graphs/last/events"))
	st := readFile(t, filepath.Join(s, "graphs/last/status"))
	if !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Errorf("status once events ended (after %v): %q", time.Since(start), st)
	}
	if n := strings.Count(evs, " FINISHED "); n == 0 {
		t.Errorf("no FINISHED events:\n%s", evs)
	}
	if !strings.Contains(evs, "sum.final") {
		t.Errorf("events end before the final sum:\n%s", evs)
	}
}

// TestMountRefusals checks that what the tree refuses is refused through
// the mount, with the server's errno.
func TestMountRefusals(t *testing.T) {
	dir := mountTree(t)
	s := filepath.Join(dir, "sessions", strings.TrimSpace(readFile(t, filepath.Join(dir, "sessions/clone"))))
	for _, c := range []struct {
		what string
		err  error
	}{
		{"remove", os.Remove(filepath.Join(s, "ctl"))},
		{"rmdir", syscall.Rmdir(filepath.Join(s, "graphs"))},
		{"rename", os.Rename(filepath.Join(s, "ctl"), filepath.Join(s, "ctl2"))},
		{"mkdir", os.Mkdir(filepath.Join(s, "d"), 0755)},
		{"symlink", os.Symlink("ctl", filepath.Join(s, "l"))},
		{"write README", os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0)},
	} {
		if c.err == nil {
			t.Errorf("%s succeeded", c.what)
		}
	}
	if _, err := os.Stat(filepath.Join(s, "ctl")); err != nil {
		t.Errorf("ctl after refused remove and rename: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sessions/99")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat sessions/99: %v", err)
	}
}

// TestMountWaitSignalled reads a graph's wait file while the reading thread
// is signalled again and again, as the Go runtime signals its threads
// (SIGURG to preempt, SIGCHLD when a child exits): each signal interrupts
// the FUSE read, which returns EINTR, and the reader reads again (Go's
// os.File does, as a C program with SA_RESTART would). The read again
// must go on, and read the whole status: an interrupted read is not the
// end of the open file.
func TestMountWaitSignalled(t *testing.T) {
	dir := mountTree(t)
	s := filepath.Join(dir, "sessions", strings.TrimSpace(readFile(t, filepath.Join(dir, "sessions/clone"))))
	spec := "a = ones((1200, 1200), chunks=200)\nb = (a @ a @ a).sum()\n"
	if err := os.WriteFile(filepath.Join(s, "submit"), []byte(spec), 0); err != nil {
		t.Fatal(err)
	}
	type result struct {
		b   []byte
		err error
	}
	tids := make(chan int, 1)
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tids <- syscall.Gettid()
		b, err := os.ReadFile(filepath.Join(s, "graphs/last/wait"))
		done <- result{b, err}
	}()
	tid := <-tids
	signals := 0
	for {
		select {
		case r := <-done:
			t.Logf("%d signals to the reading thread", signals)
			if r.err != nil || !strings.HasPrefix(string(r.b), "SUCCEEDED\n") {
				t.Fatalf("wait read while signalled: %q %v", r.b, r.err)
			}
			return
		case <-time.After(2 * time.Millisecond):
			if err := syscall.Tgkill(os.Getpid(), tid, syscall.SIGURG); err != nil {
				t.Fatal(err)
			}
			signals++
		}
	}
}
