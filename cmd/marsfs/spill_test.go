package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"marsfs/fs"
)

// TestSpillUnderMemory runs, on two worker processes with 64 MiB of shared
// memory each, a workload whose live data is 480 MB, about 3.7 times the
// workers' shared memory: it completes with the right results, the graph's
// status shows the spill, and each worker's peak resident set (VmHWM, which
// counts anonymous, file and shared-memory pages) stays within --mem plus
// 256 MiB. The workers' shared-memory and spill directories are empty once
// the session closes and up stops.
func TestSpillUnderMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves half a gigabyte")
	}
	const shmLimit, memQuota = 64 << 20, 128 << 20
	bin := build(t)
	shmDir, spillDir := t.TempDir(), t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "marsfs-test-"); err == nil {
		shmDir = d
		defer os.RemoveAll(d)
	}
	p := startUp(t, bin, "--workers", "2", "--slots", "2", "--store", "shm", "--shm", fmt.Sprint(shmLimit),
		"--mem", fmt.Sprint(memQuota), "--shm-dir", shmDir, "--spill-dir", spillDir)
	c, err := fs.Dial(p.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess := "/sessions/" + strings.TrimSpace(readText(t, c, "/sessions/clone"))
	// x and y, kept, are 2 × 30e6 float64: 480 MB on the two workers.
	if err := submit(c, sess, "x = rand(30000000, chunks=1000000, seed=1)\ny = x * 2\nfetch x, y\n"); err != nil {
		t.Fatal(err)
	}
	if st := readText(t, c, sess+"/graphs/1/wait"); !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Fatalf("graph 1:\n%s", st)
	}
	// Reading every chunk again brings spilled ones back.
	if err := submit(c, sess, "d = abs(y - x * 2).max()\nm = x.mean()\nfetch d, m\n"); err != nil {
		t.Fatalf("%v\n%s", err, readText(t, c, sess+"/ctl"))
	}
	if st := readText(t, c, sess+"/graphs/2/wait"); !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Fatalf("graph 2:\n%s", st)
	}
	if d := readText(t, c, sess+"/tensors/d/text"); d != "0.0\n" && d != "0\n" {
		t.Errorf("max |y - 2x| = %q, want 0", d)
	}
	m, err := strconv.ParseFloat(strings.TrimSpace(readText(t, c, sess+"/tensors/m/text")), 64)
	if err != nil || m < 0.499 || m > 0.501 {
		t.Errorf("mean of x = %v (%v), want about 0.5", m, err)
	}
	var spilled int64
	for _, g := range []string{"1", "2"} {
		spilled += statusKey(t, readText(t, c, sess+"/graphs/"+g+"/status"), "spilled_bytes")
	}
	t.Logf("graphs spilled %d MiB", spilled>>20)
	if spilled == 0 {
		t.Error("spilled_bytes is 0 in both graphs' status")
	}
	up := strconv.Itoa(p.cmd.Process.Pid)
	var workers int
	for _, pid := range processesOf(bin) {
		if pid == up {
			continue
		}
		workers++
		// VmHWM counts a shared-memory page once a mapping: a segment's
		// pages, mapped both writable and read-only, count twice. The
		// proportional set size (Pss) counts them once.
		hwm := procKiB(t, pid, "status", "VmHWM") << 10
		t.Logf("worker %s: peak resident (VmHWM) %d MiB (--mem %d MiB, --shm %d MiB); now anon %d MiB, file %d MiB, shmem %d MiB, Pss %d MiB",
			pid, hwm>>20, memQuota>>20, shmLimit>>20, procKiB(t, pid, "status", "RssAnon")>>10, procKiB(t, pid, "status", "RssFile")>>10,
			procKiB(t, pid, "status", "RssShmem")>>10, procKiB(t, pid, "smaps_rollup", "Pss")>>10)
		if hwm > memQuota+256<<20 {
			t.Errorf("worker %s peaked at %d MiB resident, more than --mem + 256 MiB", pid, hwm>>20)
		}
		// Spill files read back leave no pages mapped once read: what
		// stays is the binary's text and the like.
		if file := procKiB(t, pid, "status", "RssFile") << 10; file > 64<<20 {
			t.Errorf("worker %s keeps %d MiB of file pages mapped after the graphs ended", pid, file>>20)
		}
	}
	if workers != 2 {
		t.Errorf("found %d worker processes, want 2", workers)
	}
	if err := c.WriteFile(sess+"/ctl", []byte("close\n")); err != nil {
		t.Fatal(err)
	}
	p.stop(t)
	for _, dir := range []string{shmDir, spillDir} {
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s holds %d entries after marsfs up stopped", dir, len(ents))
		}
	}
}

// statusKey returns the integer value of key in a status file's text.
func statusKey(t *testing.T, text, key string) int64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("status %s: %v", key, err)
			}
			return n
		}
	}
	t.Fatalf("status has no %s:\n%s", key, text)
	return 0
}

// procKiB returns field (in kB) of /proc/PID/file.
func procKiB(t *testing.T, pid, file, field string) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("/proc", pid, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("/proc/%s/%s has no %s", pid, file, field)
	return 0
}
