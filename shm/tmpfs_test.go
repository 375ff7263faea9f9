package shm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"marsfs/tensor"
)

// smallTmpfs mounts a tmpfs of size bytes for the test, as Docker's 64 MiB
// /dev/shm; it skips the test where it cannot (not root).
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "shm")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestSmallTmpfs keeps 100 MiB of chunks in a store whose limit says 1 GiB
// but whose directory is a 32 MiB tmpfs: the store spills and keeps in the
// heap what does not fit rather than fault (SIGBUS) writing past the end
// of the tmpfs, and every chunk reads back whole.
func TestSmallTmpfs(t *testing.T) {
	dir := smallTmpfs(t, "32m")
	st, err := Open(Options{Dir: dir, SpillDir: t.TempDir(), Limit: 1 << 30, Name: "tmpfs-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Limit() > 32<<20 {
		t.Errorf("limit %d on a 32 MiB tmpfs", st.Limit())
	}
	a := NewArrays(st)
	const n, size = 25, 4 << 20
	for i := range n {
		x := tensor.NewArray(tensor.Int32, []int{size / 4})
		for j := range x.Int32s() {
			x.Int32s()[j] = int32(i*1000003 + j)
		}
		if err := a.Put(uint64(i+1), x); err != nil {
			t.Fatalf("put chunk %d: %v", i, err)
		}
		// Kernels also write outputs in place: an allocation that does
		// not fit declines, and the kernel uses the heap.
		if y, seal, abort := a.Alloc(tensor.Float64, []int{1 << 19}, true); y != nil {
			_ = seal
			abort()
		}
	}
	for i := range n {
		x, ok := a.Get(uint64(i + 1))
		if !ok {
			t.Fatalf("chunk %d is gone", i)
		}
		want := tensor.NewArray(tensor.Int32, []int{size / 4})
		for j := range want.Int32s() {
			want.Int32s()[j] = int32(i*1000003 + j)
		}
		if !bytes.Equal(x.Data, want.Data) {
			t.Fatalf("chunk %d reads back wrong", i)
		}
	}
	if s := st.Stats(); s.Spilled == 0 {
		t.Errorf("nothing spilled: %+v", s)
	}
}
