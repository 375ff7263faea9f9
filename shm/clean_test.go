package shm

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test re-executes the test binary as a worker that fills a store
// and waits to be killed.
const childEnv = "MARSFS_SHM_CRASH_CHILD"

func TestMain(m *testing.M) {
	if dirs := os.Getenv(childEnv); dirs != "" {
		crashChild(dirs)
		return
	}
	if path := os.Getenv(readerEnv); path != "" {
		readerChild(path)
		return
	}
	os.Exit(m.Run())
}

func crashChild(dirs string) {
	dir, spill, _ := strings.Cut(dirs, "|")
	s, err := Open(Options{Dir: dir, SpillDir: spill, Limit: 64 << 10, Name: "crashing"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	for id := range uint64(10) {
		if err := s.Put(id, pattern(id, 2000)); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
	}
	fmt.Println("ready", s.Dir())
	time.Sleep(time.Minute)
	os.Exit(2)
}

// TestCrashCleanup kills a worker holding chunks in memory and on disk with
// SIGKILL; the next store opened on the same directories removes what it
// left, while leaving a live store's files alone.
func TestCrashCleanup(t *testing.T) {
	dir, spill := testDirs(t)
	live, err := Open(Options{Dir: dir, SpillDir: spill, Limit: 1 << 20, Name: "live"})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := live.Put(1, pattern(1, 10)); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir+"|"+spill)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	childDir := strings.TrimSpace(strings.TrimPrefix(line, "ready "))
	childSpill := filepath.Join(spill, filepath.Base(childDir))
	if len(entries(t, childDir)) == 0 || len(entries(t, childSpill)) == 0 {
		t.Fatal("the child left no segments or no spill files to clean")
	}
	// Not stale while the child lives.
	if n, err := CleanStale(dir, spill); n != 0 || err != nil {
		t.Fatalf("CleanStale with the child alive: %d, %v", n, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// A restarted worker cleans its predecessor's files when it opens.
	next, err := Open(Options{Dir: dir, SpillDir: spill, Limit: 1 << 20, Name: "crashing"})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	for _, d := range []string{childDir, childSpill} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s survives its dead owner: %v", d, err)
		}
	}
	if _, ok := live.Path(1); !ok || !live.Has(1) {
		t.Fatal("the live store lost its chunk")
	}
	v, err := live.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	v.Release()
	if got := len(entries(t, dir)); got != 2 {
		t.Fatalf("%d store directories in %s, want the two live ones", got, dir)
	}
}

func TestParseOwner(t *testing.T) {
	for _, c := range []struct {
		name  string
		pid   int
		start uint64
		ok    bool
	}{
		{"marsfs-w1-123-456-1", 123, 456, true},
		{"marsfs-worker-host-9-77-8-2", 77, 8, true},
		{"marsfs-worker-host-9-77-8", 9, 77, true},
		{"marsfs-w-0-1-1", 0, 0, false},
		{"marsfs-w-x-1-1", 0, 0, false},
		{"marsfs-1-2", 0, 0, false},
		{"other-w-1-2-3", 0, 0, false},
		{"shmtest-123", 0, 0, false},
	} {
		pid, start, ok := parseOwner(c.name)
		if ok != c.ok || ok && (pid != c.pid || start != c.start) {
			t.Errorf("parseOwner(%q) = %d, %d, %v", c.name, pid, start, ok)
		}
	}
	name, err := ownerName("w/ x")
	if err != nil {
		t.Fatal(err)
	}
	pid, start, ok := parseOwner(name)
	if !ok || pid != os.Getpid() || !alive(pid, start) || alive(pid, start+1) {
		t.Fatalf("ownerName %q: %d %d %v", name, pid, start, ok)
	}
	if strings.ContainsAny(name, "/ ") {
		t.Fatalf("ownerName %q keeps unsafe characters", name)
	}
}

func TestCleanStaleSkipsOthers(t *testing.T) {
	dir, _ := testDirs(t)
	// A dead owner (pid 1's start time is never 1), a foreign file and a
	// foreign directory.
	stale := filepath.Join(dir, "marsfs-w-1-1-1")
	os.Mkdir(stale, 0o700)
	os.WriteFile(filepath.Join(stale, "5"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir, "marsfs-w-999999999-1-1"), []byte("x"), 0o600)
	os.Mkdir(filepath.Join(dir, "keep"), 0o700)
	n, err := CleanStale(dir, filepath.Join(dir, "missing"))
	if n != 1 || err != nil {
		t.Fatalf("CleanStale = %d, %v", n, err)
	}
	if got := strings.Join(entries(t, dir), " "); got != "keep marsfs-w-999999999-1-1" {
		t.Fatalf("left %q", got)
	}
}

// TestCleanStaleRespectsLock keeps a directory whose pid looks dead while
// its lock is held, as for an owner in another pid namespace.
func TestCleanStaleRespectsLock(t *testing.T) {
	dir, _ := testDirs(t)
	d := filepath.Join(dir, "marsfs-elsewhere-1-1-1")
	f, err := makeOwnedDir(d)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := CleanStale(dir, ""); n != 0 || err != nil {
		t.Fatalf("CleanStale with the lock held = %d, %v", n, err)
	}
	f.Close()
	if n, err := CleanStale(dir, ""); n != 1 || err != nil {
		t.Fatalf("CleanStale after the lock was dropped = %d, %v", n, err)
	}
	if _, err := os.Stat(d); !os.IsNotExist(err) {
		t.Fatalf("%s survives: %v", d, err)
	}
}
