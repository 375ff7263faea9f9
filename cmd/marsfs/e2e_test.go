package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/fs"
	"marsfs/shm"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// TestEndToEnd drives `marsfs up` with two worker processes as a client
// would, over TCP and over the unix socket: clone, submit, wait, read npy and
// data, name a kept tensor in a second graph, upload, bad input, cancel.
func TestEndToEnd(t *testing.T) {
	bin := build(t)
	for _, store := range []string{"mem", "shm"} {
		t.Run(store, func(t *testing.T) {
			shmDir, spillDir := t.TempDir(), t.TempDir()
			p := startUp(t, bin, "--workers", "2", "--store", store, "--shm-dir", shmDir, "--spill-dir", spillDir)
			for _, addr := range []string{p.tcp, p.unx} {
				t.Run(strings.SplitN(addr, ":", 2)[0], func(t *testing.T) {
					c, err := fs.Dial(addr)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					endToEnd(t, c)
				})
			}
			if store == "shm" {
				checkHostSplit(t, p.unx, 2)
			}
			p.stop(t)
			// Nothing of the workers' stores is left behind.
			for _, dir := range []string{shmDir, spillDir} {
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("%s holds %d entries after marsfs up stopped", dir, len(ents))
				}
			}
		})
	}
}

// checkHostSplit checks that the n workers of up share half the RAM as
// their shared-memory limit and have a slot a CPU and all the CPUs as
// their procs, as their status files say.
func checkHostSplit(t *testing.T, addr string, n int) {
	t.Helper()
	c, err := fs.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ram, err := shm.TotalRAM()
	if err != nil {
		t.Fatal(err)
	}
	ents, err := c.ReadDir("/cluster/workers")
	if err != nil || len(ents) != n {
		t.Fatalf("/cluster/workers: %d entries, %v", len(ents), err)
	}
	for _, e := range ents {
		st := readText(t, c, "/cluster/workers/"+e.Name+"/status")
		cpus := runtime.GOMAXPROCS(0)
		for _, want := range []string{
			fmt.Sprintf("\nshm_limit %d\n", ram/2/int64(n)),
			fmt.Sprintf("\nprocs %d\n", cpus),
			fmt.Sprintf("\nslots %d\n", cpus),
		} {
			if !strings.Contains(st, want) {
				t.Errorf("worker %s: want %q in its status:\n%s", e.Name, strings.TrimSpace(want), st)
			}
		}
	}
}

func readText(t *testing.T, c *fs.Client, path string) string {
	t.Helper()
	b, err := c.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

func submit(c *fs.Client, sess, spec string) error {
	return c.WriteFile(sess+"/submit", []byte(spec))
}

func endToEnd(t *testing.T, c *fs.Client) {
	sess := "/sessions/" + strings.TrimSpace(readText(t, c, "/sessions/clone"))

	// A graph whose chunks cross workers: a reduction over a 2-D rechunk.
	if err := submit(c, sess, "x = arange(24, chunks=5).reshape(4, 6)\ny = (x * 2).sum(axis=0)\nfetch x, y\n"); err != nil {
		t.Fatal(err)
	}
	if st := readText(t, c, sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Fatalf("wait:\n%s", st)
	}
	npy, err := c.ReadFile(sess + "/tensors/y/npy")
	if err != nil {
		t.Fatal(err)
	}
	y, err := codec.ReadNPY(bytes.NewReader(npy), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{72, 80, 88, 96, 104, 112}
	if y.DType != tensor.Int64 || len(y.Shape) != 1 || y.Shape[0] != 6 {
		t.Fatalf("y is %v%v", y.DType, y.Shape)
	}
	for i, v := range y.Int64s() {
		if v != want[i] {
			t.Fatalf("y = %v, want %v", y.Int64s(), want)
		}
	}
	data, err := c.ReadFile(sess + "/tensors/x/data")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 24*8 || data[8*23] != 23 {
		t.Errorf("x/data: %d bytes, last element %d", len(data), data[8*23])
	}

	// A kept tensor named by a second graph.
	if err := submit(c, sess, "z = y.max() - x.min()\n"); err != nil {
		t.Fatal(err)
	}
	readText(t, c, sess+"/graphs/2/wait")
	if got := readText(t, c, sess+"/tensors/z/text"); got != "112\n" {
		t.Errorf("z/text = %q, want 112", got)
	}

	// An upload, then a spec that names it.
	var up bytes.Buffer
	u := tensor.NewArray(tensor.Float32, []int{2, 3})
	copy(u.Float32s(), []float32{1, 2, 3, 4, 5, 6})
	if err := codec.WriteNPY(&up, u); err != nil {
		t.Fatal(err)
	}
	f, err := c.Create(sess+"/tensors", "u.npy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(up.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := submit(c, sess, "v = u.T @ u\n"); err != nil {
		t.Fatal(err)
	}
	readText(t, c, sess+"/graphs/last/wait")
	if got := readText(t, c, sess+"/tensors/v/text"); !strings.HasPrefix(got, "[[17. 22. 27.]") {
		t.Errorf("v/text = %q", got)
	}

	// Bad input: refused with EINVAL, no graph, the reason in error.
	graphs := len(lsDir(t, c, sess+"/graphs"))
	for _, tc := range []struct{ file, text, want string }{
		{"submit", "a = ones(3)\nb = frobnicate(a)\n", "2:5: unknown function frobnicate"},
		{"submit", "a = ones(3) +\n", "1:"},
		{"submit", "a = ones(3) + ones(4)\n", "1:13: operands could not be broadcast"},
		{"submit", "a = nosuch + 1\n", "unknown name nosuch"},
		{"ctl", "frob\n", `unknown control message "frob"`},
	} {
		err := c.WriteFile(sess+"/"+tc.file, []byte(tc.text))
		if !fs.IsErrno(err, linux.EINVAL) {
			t.Errorf("write %q to %s: %v, want EINVAL", tc.text, tc.file, err)
		}
		if got := readText(t, c, sess+"/error"); !strings.Contains(got, tc.want) {
			t.Errorf("after %q: error file %q, want it to contain %q", tc.text, got, tc.want)
		}
	}
	if n := len(lsDir(t, c, sess+"/graphs")); n != graphs {
		t.Errorf("bad specs made graphs: %d entries, had %d", n, graphs)
	}
	f, err = c.Create(sess+"/tensors", "bad.npy")
	if err == nil {
		f.Write([]byte("not an npy stream at all"))
		f.Close()
	}
	if _, err := c.Walk(sess + "/tensors/bad"); err == nil {
		t.Error("a malformed upload created a tensor")
	}

	// Cancel a long graph: CANCELLED within 2 s.
	if err := submit(c, sess, "r = rand(16000000000, chunks=2000000, seed=3)\ns = (r * 2).sum()\n"); err != nil {
		t.Fatal(err)
	}
	last := sess + "/graphs/" + fmt.Sprint(len(lsDir(t, c, sess+"/graphs"))-1)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := c.WriteFile(last+"/ctl", []byte("cancel\n")); err != nil {
		t.Fatal(err)
	}
	st := readText(t, c, last+"/wait")
	if d := time.Since(start); !strings.HasPrefix(st, "CANCELLED\n") || d > 2*time.Second {
		t.Errorf("cancel: %v later\n%s", d, st)
	}

	// Another session still works; closing ours frees it.
	other := "/sessions/" + strings.TrimSpace(readText(t, c, "/sessions/clone"))
	if err := submit(c, other, "w = ones((3, 3)).sum()\n"); err != nil {
		t.Fatal(err)
	}
	readText(t, c, other+"/graphs/last/wait")
	if got := readText(t, c, other+"/tensors/w/text"); got != "9.0\n" {
		t.Errorf("other session: w = %q", got)
	}
	for _, s := range []string{sess, other} {
		if err := c.WriteFile(s+"/ctl", []byte("close\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Walk(s); err == nil {
			t.Errorf("%s still there after close", s)
		}
	}
}

func lsDir(t *testing.T, c *fs.Client, path string) []p9.Dirent {
	t.Helper()
	ents, err := c.ReadDir(path)
	if err != nil && !errors.Is(err, linux.ENOENT) {
		t.Fatalf("ls %s: %v", path, err)
	}
	return ents
}
