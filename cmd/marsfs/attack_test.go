package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/fs"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// TestSchedulerAttacks runs marsfs up in a 2 GiB memory cgroup and tries,
// as one local client may, to take it down by its memory: a product whose
// tiling explodes, twenty million-chunk sums in one spec, forty readers of
// a large tensor at once, a 1 GiB upload, and a connection that walks
// without ever clunking. Each is refused or completes; the kernel kills
// nothing, no process passes the cgroup's limit, and a tensor another
// session kept before it all reads back whole.
func TestSchedulerAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("gigabytes through a memory cgroup")
	}
	const limit = 2 << 30
	cg, p := upInCgroup(t, limit)
	addr := p.unx
	dial := func() *fs.Client {
		c, err := fs.Dial(addr)
		if err != nil {
			t.Fatalf("%v; oom kills %d; up's log:\n%s", err, cgroupValue(t, cg, "memory.oom_control", "oom_kill"), p.stderr)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c := dial()
	session := func() string {
		return "/sessions/" + strings.TrimSpace(readText(t, c, "/sessions/clone"))
	}
	wait := func(sess string) string {
		return strings.SplitN(readText(t, c, sess+"/graphs/last/wait"), "\n", 2)[0]
	}

	// attack runs one attack and logs the scheduler's peak resident
	// memory since it started, which is up's (VmHWM never falls).
	upPid := strconv.Itoa(p.cmd.Process.Pid)
	attack := func(name string, f func(t *testing.T)) {
		t.Run(name, f)
		t.Logf("%s: up peaked at %d MiB so far", name, procKiB(t, upPid, "status", "VmHWM")>>10)
	}

	// A tensor kept before the attacks.
	victim := session()
	if err := submit(c, victim, "kept = arange(1000000, chunks=100000)\n"); err != nil {
		t.Fatal(err)
	}
	if st := wait(victim); st != "SUCCEEDED" {
		t.Fatalf("victim's graph: %s", st)
	}

	attack("explosive product", func(t *testing.T) {
		s := session()
		err := submit(c, s, "a = ones((200000, 200000))\nb = a @ a\n")
		if !errors.Is(err, linux.EINVAL) {
			t.Fatalf("submit: %v, want EINVAL", err)
		}
		if msg := readText(t, c, s+"/error"); !strings.Contains(msg, "chunk operands") {
			t.Errorf("error file: %q", msg)
		} else {
			t.Log(strings.TrimSpace(msg))
		}
	})

	attack("twenty million-chunk sums", func(t *testing.T) {
		var spec strings.Builder
		var names []string
		for i := range 20 {
			fmt.Fprintf(&spec, "s%d = ones(10000000, chunks=10).sum()\n", i)
			names = append(names, fmt.Sprintf("s%d", i))
		}
		fmt.Fprintf(&spec, "fetch %s\n", strings.Join(names, ", "))
		s := session()
		if err := submit(c, s, spec.String()); !errors.Is(err, linux.EINVAL) {
			t.Fatalf("submit: %v, want EINVAL", err)
		}
	})

	attack("forty readers", func(t *testing.T) {
		s := session()
		// 160 MB in chunks of 4000 x 200: every slab is a row of
		// chunks, which a reader once gathered.
		if err := submit(c, s, "big = ones((20000, 1000), chunks=(4000, 200)) * 3\n"); err != nil {
			t.Fatal(err)
		}
		if st := wait(s); st != "SUCCEEDED" {
			t.Fatalf("graph: %s", st)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for range 40 {
			r := dial()
			wg.Add(1)
			go func() {
				defer wg.Done()
				f, err := r.Open(s+"/tensors/big/npy", 0)
				if err != nil {
					errs <- err
					return
				}
				defer f.Close()
				n, err := io.Copy(io.Discard, f)
				if err == nil && n != 20000*1000*8+128 {
					err = fmt.Errorf("read %d bytes", n)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})

	attack("1 GiB upload", func(t *testing.T) {
		s := session()
		const rows, cols = 1 << 14, 1 << 13 // 1 GiB of float64
		f, err := c.Create(s+"/tensors", "up.npy")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(codec.NPYHeader(tensor.Float64, []int{rows, cols})); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1<<20)
		for i := 0; i < rows*cols*8; i += len(buf) {
			if _, err := f.Write(buf); err != nil {
				t.Fatalf("%v; oom kills %d; up's log:\n%s", err, cgroupValue(t, cg, "memory.oom_control", "oom_kill"), p.stderr)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		meta := readText(t, c, s+"/tensors/up/meta")
		if !strings.Contains(meta, "16384, 8192") && !strings.Contains(meta, "16384,8192") {
			t.Errorf("meta of the upload:\n%s", meta)
		}
	})

	attack("fids never clunked", func(t *testing.T) {
		r := dial()
		n := 0
		// The client clunks a fid it no longer references: keep them.
		var fids []p9.File
		for ; n <= fs.MaxFids; n++ {
			f, err := r.Walk("/sessions")
			if err != nil {
				if !errors.Is(err, linux.EMFILE) {
					t.Fatalf("walk %d: %v", n, err)
				}
				break
			}
			fids = append(fids, f)
		}
		if n > fs.MaxFids {
			t.Fatalf("%d walks without a refusal", n)
		}
		t.Logf("EMFILE after %d fids", n)
	})

	// The service and the victim's tensor are whole.
	text := readText(t, c, victim+"/tensors/kept/meta")
	if !strings.Contains(text, "1000000") {
		t.Errorf("victim's tensor meta:\n%s", text)
	}
	s := session()
	if err := submit(c, s, "t = kept.sum()\n"); err == nil {
		t.Error("a new session sees another's tensor")
	}
	if err := submit(c, victim, "total = kept.sum()\n"); err != nil {
		t.Fatal(err)
	}
	if st := wait(victim); st != "SUCCEEDED" {
		t.Fatalf("victim's sum: %s", st)
	}
	if got := strings.TrimSpace(readText(t, c, victim+"/tensors/total/text")); got != strconv.Itoa(999999*1000000/2) {
		t.Errorf("victim's sum %s, want %d", got, 999999*1000000/2)
	}
	if n := cgroupValue(t, cg, "memory.oom_control", "oom_kill"); n != 0 {
		t.Errorf("the kernel killed %d processes of the cgroup", n)
	}
	procs, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range strings.Fields(string(procs)) {
		hwm := procKiB(t, pid, "status", "VmHWM") << 10
		t.Logf("process %s peaked at %d MiB resident", pid, hwm>>20)
		if hwm >= limit {
			t.Errorf("process %s peaked at %d MiB resident, the cgroup allows %d", pid, hwm>>20, limit>>20)
		}
	}
	if n := len(strings.Fields(string(procs))); n != 3 {
		t.Errorf("%d processes in the cgroup, want up and its 2 workers", n)
	}
	p.stop(t)
}
