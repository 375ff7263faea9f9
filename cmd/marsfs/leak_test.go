package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"marsfs/fs"
)

// TestWorkerCrashLeavesNothing runs `marsfs up` with its default store
// (shared memory) small enough to spill, kills a worker holding chunks with
// SIGKILL, and starts another in its place: the new worker removes what the
// dead one left in --shm-dir and --spill-dir; closing the session leaves no
// chunk and no spill file; stopping leaves the directories empty.
func TestWorkerCrashLeavesNothing(t *testing.T) {
	bin := build(t)
	shmDir, spillDir := t.TempDir(), t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "marsfs-test-"); err == nil {
		shmDir = d
		defer os.RemoveAll(d)
	}
	dirs := []string{"--shm", strconv.Itoa(8 << 20), "--shm-dir", shmDir, "--spill-dir", spillDir}
	p := startUp(t, bin, append([]string{"--workers", "2", "--slots", "1"}, dirs...)...)
	c, err := fs.Dial(p.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess := "/sessions/" + strings.TrimSpace(readText(t, c, "/sessions/clone"))
	// 32 MB kept on two workers of 8 MiB of shared memory each.
	if err := submit(c, sess, "x = rand(4000000, chunks=500000, seed=1)\nfetch x\n"); err != nil {
		t.Fatal(err)
	}
	if st := readText(t, c, sess+"/graphs/1/wait"); !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Fatalf("graph 1:\n%s", st)
	}
	var victim string
	for _, pid := range processesOf(bin) {
		if pid != strconv.Itoa(p.cmd.Process.Pid) {
			victim = pid
			break
		}
	}
	pid, _ := strconv.Atoi(victim)
	if pid == 0 || syscall.Kill(pid, syscall.SIGKILL) != nil {
		t.Fatalf("no worker process to kill (%q)", victim)
	}
	// What a store's directories hold of the process pid: its files.
	of := func(dir string, pid string) (n int) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.Contains(e.Name(), "-"+pid+"-") {
				files, _ := os.ReadDir(filepath.Join(dir, e.Name()))
				n += 1 + len(files)
			}
		}
		return n
	}
	for _, d := range []string{shmDir, spillDir} {
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if of(d, victim) == 0 {
			t.Fatalf("the killed worker left nothing in %s: the test does not test the cleaning", d)
		}
	}
	// Its successor cleans up as it starts.
	w := osexec.Command(bin, append([]string{"worker", "--name", "worker-again", "--join", p.join, "--slots", "1"}, dirs...)...)
	w.Stderr = os.Stderr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { w.Process.Kill(); w.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); of(shmDir, victim)+of(spillDir, victim) > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the new worker left the killed one's files: %d in %s, %d in %s",
				of(shmDir, victim), shmDir, of(spillDir, victim), spillDir)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Reading x now fails (its chunks died with their worker) or not; either
	// way, closing the session frees every chunk and spill file.
	c.ReadFile(sess + "/tensors/x/data")
	if err := c.WriteFile(sess+"/ctl", []byte("close\n")); err != nil {
		t.Fatal(err)
	}
	chunkFiles := func() (n int) {
		for _, d := range []string{shmDir, spillDir} {
			stores, _ := os.ReadDir(d)
			for _, s := range stores {
				files, _ := os.ReadDir(filepath.Join(d, s.Name()))
				for _, f := range files {
					// Freed segments kept for reuse are "free-N".
					if !strings.HasPrefix(f.Name(), "free-") {
						n++
					}
				}
			}
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); chunkFiles() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d chunk or spill files left after the session closed", chunkFiles())
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.Process.Signal(syscall.SIGTERM)
	if err := w.Wait(); err != nil {
		t.Errorf("the new worker after SIGTERM: %v", err)
	}
	p.stop(t)
	for _, dir := range []string{shmDir, spillDir} {
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s holds %d entries after marsfs up stopped", dir, len(ents))
		}
	}
}
