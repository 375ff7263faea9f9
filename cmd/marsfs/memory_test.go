package main

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// memoryCgroup makes a cgroup v1 memory cgroup limited to limit bytes for
// the test, or skips the test where it cannot (not root, no v1 memory
// controller); the cgroup goes at the end.
func memoryCgroup(t *testing.T, limit int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("memory cgroups need root")
	}
	root := "/sys/fs/cgroup/memory"
	if _, err := os.Stat(filepath.Join(root, "memory.limit_in_bytes")); err != nil {
		t.Skip("no cgroup v1 memory controller")
	}
	cg := filepath.Join(root, fmt.Sprintf("marsfs-test-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup: %v", err)
	}
	t.Cleanup(func() {
		// Its processes are gone by now; the page cache it charged goes
		// with it.
		for deadline := time.Now().Add(10 * time.Second); os.Remove(cg) != nil && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := os.WriteFile(filepath.Join(cg, "memory.limit_in_bytes"), []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
		t.Fatal(err)
	}
	return cg
}

// cgroupValue reads a number from a cgroup file, or a "key value" line of
// one.
func cgroupValue(t *testing.T, cg, file, key string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cg, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if key == "" && len(f) == 1 || len(f) == 2 && f[0] == key {
			n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("%s/%s has no %q", cg, file, key)
	return 0
}

// TestUpInMemoryCgroup runs marsfs up with its workers in a 1 GiB memory
// cgroup, and a spec that keeps 2.5 GB: the defaults come from the cgroup's
// limit, chunks spill to disk, the graph succeeds with the right sum, the
// kernel kills nothing, and every process's peak resident memory stays
// within the limit.
func TestUpInMemoryCgroup(t *testing.T) {
	if testing.Short() {
		t.Skip("2.5 GB through a memory cgroup")
	}
	const limit = 1 << 30
	cg, p := upInCgroup(t, limit)
	spec := "x = rand(312500000, chunks=5000000, seed=7)\ns = x.sum()\nfetch x, s\n"
	out, errs, code := p.marsfs(t, spec, "run", "--addr", p.tcp, "-")
	if code != 0 {
		t.Fatalf("marsfs run: exit %d: %s\n%s", code, errs, p.stderr)
	}
	// The mean of 312.5M uniform values is 1/2 within a few 1e-5.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sum, err := strconv.ParseFloat(lines[len(lines)-1], 64)
	if err != nil || sum/312500000 < 0.4999 || sum/312500000 > 0.5001 {
		t.Errorf("s = %q, want about 156250000", lines[len(lines)-1])
	}
	if n := cgroupValue(t, cg, "memory.oom_control", "oom_kill"); n != 0 {
		t.Errorf("the kernel killed %d processes of the cgroup", n)
	}
	procs, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range strings.Fields(string(procs)) {
		if hwm := procKiB(t, pid, "status", "VmHWM") << 10; hwm >= limit {
			t.Errorf("process %s peaked at %d MiB resident, the cgroup allows %d", pid, hwm>>20, limit>>20)
		}
	}
	if n := len(strings.Fields(string(procs))); n != 3 {
		t.Errorf("%d processes in the cgroup, want up and its 2 workers", n)
	}
	p.stop(t)
}

// TestUpSmallShm runs marsfs up with --shm-dir on a 32 MiB tmpfs, what
// Docker gives /dev/shm, and a spec that keeps 160 MB: the workers' shared
// memory fits the tmpfs, chunks spill, and no worker dies of SIGBUS.
func TestUpSmallShm(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "shm")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := osexec.Command("mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	bin := build(t)
	p := startUp(t, bin, "--workers", "2", "--shm-dir", dir, "--spill-dir", t.TempDir())
	spec := "x = rand(20000000, chunks=1000000, seed=1)\ny = x * 2 + 1\ns = y.sum()\nfetch y, s\n"
	out, errs, code := p.marsfs(t, spec, "run", "--addr", p.tcp, "-")
	if code != 0 {
		t.Fatalf("marsfs run: exit %d: %s\n%s", code, errs, p.stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if s, err := strconv.ParseFloat(lines[len(lines)-1], 64); err != nil || s < 39.99e6 || s > 40.01e6 {
		t.Errorf("s = %q, want about 40000000", lines[len(lines)-1])
	}
	members, _, _ := p.marsfs(t, "", "cat", "--addr", p.tcp, "/cluster/members")
	if n := strings.Count(members, "worker alive"); n != 2 {
		t.Errorf("%d workers alive after the graph:\n%s", n, members)
	}
	for _, w := range []string{"worker-1", "worker-2"} {
		st, _, _ := p.marsfs(t, "", "cat", "--addr", p.tcp, "/cluster/workers/"+w+"/status")
		if !strings.Contains(st, "shm_limit 16777216\n") || strings.Contains(st, "spilled_bytes 0\n") {
			t.Errorf("%s status:\n%s", w, st)
		}
	}
	p.stop(t)
}

// upInCgroup starts marsfs up (two workers, spilling to a temporary
// directory) in a new memory cgroup of limit bytes, and returns the
// cgroup's directory and the process. A wrapper script joins the cgroup,
// then becomes marsfs up: its workers are its children, in the cgroup too.
func upInCgroup(t *testing.T, limit int64) (string, *upProcess) {
	t.Helper()
	cg := memoryCgroup(t, limit)
	bin := build(t)
	wrapper := filepath.Join(t.TempDir(), "in-cgroup")
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %s/cgroup.procs\nexec %s \"$@\"\n", cg, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return cg, startUp(t, wrapper, "--workers", "2", "--spill-dir", t.TempDir())
}
