package shm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"marsfs/tensor"
)

// testDirs returns a fresh segment directory in /dev/shm (where the store
// runs in production) and a spill directory, both removed after the test.
func testDirs(t testing.TB) (dir, spill string) {
	t.Helper()
	base := "/dev/shm"
	if _, err := os.Stat(base); err != nil {
		base = ""
	}
	dir, err := os.MkdirTemp(base, "shmtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir, t.TempDir()
}

func openTest(t testing.TB, limit, keepFree int64) *Store {
	t.Helper()
	dir, spill := testDirs(t)
	s, err := Open(Options{Dir: dir, SpillDir: spill, Limit: limit, KeepFree: keepFree, Name: "w/test:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pattern fills an array with bytes derived from id, different per chunk.
func pattern(id uint64, shape ...int) *tensor.Array {
	a := tensor.NewArray(tensor.Float64, shape)
	for i := range a.Data {
		a.Data[i] = byte(uint64(i)*31 + id*7 + 1)
	}
	return a
}

// mappingsOf returns the lines of /proc/self/maps naming a file under dir.
func mappingsOf(t testing.TB, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, dir+"/") {
			out = append(out, l)
		}
	}
	return out
}

// entries lists the names in dir.
func entries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestPutGet(t *testing.T) {
	s := openTest(t, 1<<20, -1)
	for i, shape := range [][]int{{}, {0}, {3}, {4, 5}, {2, 3, 4}} {
		id := uint64(i + 100)
		a := pattern(id, shape...)
		if err := s.Put(id, a); err != nil {
			t.Fatal(err)
		}
		v, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if v.DType != a.DType || fmt.Sprint(v.Shape) != fmt.Sprint(a.Shape) || !bytes.Equal(v.Data, a.Data) {
			t.Fatalf("shape %v: got %v%v %d bytes", shape, v.DType, v.Shape, len(v.Data))
		}
		if uintptr(unsafe.Pointer(unsafe.SliceData(v.Data)))%64 != 0 && len(v.Data) > 0 {
			t.Fatalf("data of shape %v not 64-byte aligned", shape)
		}
		if err := v.Array().Check(); err != nil {
			t.Fatal(err)
		}
		v.Release()
	}
	if s.Len() != 5 {
		t.Fatalf("Len = %d", s.Len())
	}
	if _, err := s.Get(999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing chunk: %v", err)
	}
	if err := s.Put(1, &tensor.Array{DType: tensor.Float64, Shape: []int{2}, Data: make([]byte, 3)}); err == nil {
		t.Fatal("Put of a malformed array succeeded")
	}
	if _, err := s.Create(1, tensor.DType(0), nil); err == nil {
		t.Fatal("Create with an invalid dtype succeeded")
	}
	if _, err := s.Create(1, tensor.Int32, []int{-1}); err == nil {
		t.Fatal("Create with a negative dimension succeeded")
	}
}

func TestCreateSeal(t *testing.T) {
	s := openTest(t, 1<<20, -1)
	w, err := s.Create(7, tensor.Int32, []int{1000})
	if err != nil {
		t.Fatal(err)
	}
	b := w.Data
	if len(b) != 4000 {
		t.Fatalf("len = %d", len(b))
	}
	for i := range b {
		if b[i] != 0 {
			t.Fatal("Create's buffer is not zeroed")
		}
		b[i] = byte(i)
	}
	if _, err := s.Get(7); err == nil {
		t.Fatal("Get of an unsealed chunk succeeded")
	}
	if _, ok := s.Path(7); ok {
		t.Fatal("Path of an unsealed chunk")
	}
	if err := w.Seal(); err != nil {
		t.Fatal(err)
	}
	if w.Seal() == nil {
		t.Fatal("second Seal succeeded")
	}
	w.Abort() // does nothing after Seal
	v, err := s.Get(7)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Release()
	if !bytes.Equal(v.Data, b) {
		t.Fatal("view differs from what was written")
	}
	// Sealed data are read-only: a write faults.
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	faulted := func() (f bool) {
		defer func() { f = recover() != nil }()
		v.Data[0] = 1
		return false
	}()
	if !faulted {
		t.Fatal("writing a sealed chunk did not fault")
	}
}

func TestSpillReload(t *testing.T) {
	const size = 64 << 10 // data bytes a chunk
	s := openTest(t, 4*(size+4096), -1)
	arrays := map[uint64]*tensor.Array{}
	for id := uint64(1); id <= 10; id++ {
		arrays[id] = pattern(id, size/8)
		if err := s.Put(id, arrays[id]); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.Used > st.Limit {
			t.Fatalf("used %d > limit %d", st.Used, st.Limit)
		}
	}
	st := s.Stats()
	if st.InMemory != 4 || st.OnDisk != 6 || st.Spilled != 6*size {
		t.Fatalf("after 10 puts: %+v", st)
	}
	// Read every chunk, oldest first, twice: all reload intact.
	for round := range 2 {
		for id := uint64(1); id <= 10; id++ {
			v, err := s.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(v.Data, arrays[id].Data) {
				t.Fatalf("round %d: chunk %d differs after reload", round, id)
			}
			v.Release()
		}
	}
	st = s.Stats()
	if st.Reloaded == 0 || st.Used > st.Limit {
		t.Fatalf("after reads: %+v", st)
	}
	// Chunks spilled once keep their spill file: spilling again writes
	// nothing new.
	if st.Spilled != 10*size {
		t.Fatalf("spilled %d bytes, want %d (each chunk written once)", st.Spilled, 10*size)
	}
}

// TestSpillOrder checks that the store spills by next use, as the graph's
// order asks, before recency.
func TestSpillOrder(t *testing.T) {
	const size = 4096 - 64
	s := openTest(t, 3*4096, -1)
	for id := uint64(1); id <= 3; id++ {
		if err := s.Put(id, pattern(id, size/8)); err != nil {
			t.Fatal(err)
		}
	}
	s.SetNextUse(1, 10) // needed last
	s.SetNextUse(2, 1)
	s.SetNextUse(3, 2)
	if err := s.Put(4, pattern(4, size/8)); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"1": false, "2": true, "3": true, "4": true} {
		_, err := os.Stat(filepath.Join(s.Dir(), id))
		if (err == nil) != want {
			t.Errorf("chunk %s in shared memory: %v, want %v", id, err == nil, want)
		}
	}
}

// TestViewSurvivesSpillAndDelete checks that a view keeps its address and
// bytes when its chunk is spilled, reloaded and deleted under it.
func TestViewSurvivesSpillAndDelete(t *testing.T) {
	s := openTest(t, 1<<20, -1)
	a := pattern(3, 5000)
	if err := s.Put(3, a); err != nil {
		t.Fatal(err)
	}
	v, err := s.Get(3)
	if err != nil {
		t.Fatal(err)
	}
	addr := unsafe.SliceData(v.Data)
	if err := s.Spill(3); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.OnDisk != 1 || st.Used != 0 {
		t.Fatalf("after spill: %+v", st)
	}
	if !bytes.Equal(v.Data, a.Data) {
		t.Fatal("view changed by a spill")
	}
	p, _ := s.Path(3)
	if filepath.Dir(p) == s.Dir() {
		t.Fatalf("spilled chunk's path %s is in shared memory", p)
	}
	v2, err := s.GetPrivate(3)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.OnDisk != 1 || st.Reloaded != 0 {
		t.Fatalf("GetPrivate reloaded: %+v", st)
	}
	v3, err := s.Get(3)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.InMemory != 1 || st.Reloaded != int64(len(a.Data)) {
		t.Fatalf("after reload: %+v", st)
	}
	if unsafe.SliceData(v3.Data) != addr || unsafe.SliceData(v2.Data) != addr {
		t.Fatal("a chunk moved in memory")
	}
	v3.Release()
	v2.Release()
	if !s.Delete(3) {
		t.Fatal("Delete of a held chunk reported false")
	}
	if s.Delete(3) {
		t.Fatal("second Delete reported true")
	}
	// Storing the ID again while the old chunk is still read must work.
	if err := s.Put(3, pattern(4, 10)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v.Data, a.Data) {
		t.Fatal("view changed by Delete")
	}
	if st := s.Stats(); st.Pinned != 1 {
		t.Fatalf("pinned deleted chunk not counted: %+v", st)
	}
	v.Release()
	v.Release()
	if st := s.Stats(); st.Pinned != 0 || st.Used != 4096 {
		t.Fatalf("after release: %+v", st)
	}
}

// TestFreeListReuse checks that a freed segment is reused, zeroed, for a
// chunk of fitting size, and given up when memory runs short.
func TestFreeListReuse(t *testing.T) {
	s := openTest(t, 4*65536, 65536)
	p := pattern(1, 60000/8)
	w1, err := s.Create(1, p.DType, p.Shape)
	if err != nil {
		t.Fatal(err)
	}
	copy(w1.Data, p.Data)
	addr := unsafe.SliceData(w1.Data) // the writable mapping's
	w1.Seal()
	s.Delete(1)
	if st := s.Stats(); st.Free != 61440 || st.Used != 61440 {
		t.Fatalf("after delete: %+v", st)
	}
	w, err := s.Create(2, tensor.Int64, []int{5000})
	if err != nil {
		t.Fatal(err)
	}
	b := w.Data
	if unsafe.SliceData(b) != addr {
		t.Fatal("freed segment not reused")
	}
	for _, x := range b {
		if x != 0 {
			t.Fatal("reused segment not zeroed")
		}
	}
	w.Seal()
	if st := s.Stats(); st.Free != 0 || st.Used != 61440 {
		t.Fatalf("after reuse: %+v", st)
	}
	// A small chunk does not take a large freed segment.
	s.Delete(2)
	w, _ = s.Create(3, tensor.Bool, []int{10})
	if unsafe.SliceData(w.Data) == addr {
		t.Fatal("a 10-byte chunk took a 60 KiB segment")
	}
	w.Seal()
	// Running short gives up the free list before spilling anything.
	if err := s.Put(4, pattern(4, 25000)); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Free != 0 || st.OnDisk != 0 || st.Used > st.Limit {
		t.Fatalf("after pressure: %+v", st)
	}
}

func TestCreateTooLarge(t *testing.T) {
	s := openTest(t, 1<<20, -1)
	_, err := s.Create(1, tensor.Float64, []int{1 << 18})
	if err == nil || !strings.Contains(err.Error(), "chunk 1 needs 2.0 MiB, limit is 1.0 MiB") {
		t.Fatalf("err = %v", err)
	}
	// Chunks being written cannot be spilled: a second one that does not
	// fit beside them fails, naming the sizes.
	w, err := s.Create(2, tensor.Float64, []int{100000})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Create(3, tensor.Float64, []int{100000})
	if err == nil || !strings.Contains(err.Error(), "chunk 3 needs") {
		t.Fatalf("err = %v", err)
	}
	w.Seal()
	if _, err := s.Create(3, tensor.Float64, []int{100000}); err != nil {
		t.Fatalf("after sealing the other: %v", err)
	}
}

// TestWorkload3x runs concurrent producers and consumers over live data
// three times the store's limit: every chunk reads back intact and the store
// never exceeds its limit.
func TestWorkload3x(t *testing.T) {
	const (
		limit = 1 << 20
		size  = 32 << 10
		n     = 3 * limit / size
	)
	s := openTest(t, limit, limit/8)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 4 {
				id := uint64(i)
				b, err := s.Create(id, tensor.Float64, []int{size / 8})
				if err != nil {
					t.Error(err)
					return
				}
				copy(b.Data, pattern(id, size/8).Data)
				if err := b.Seal(); err != nil {
					t.Error(err)
					return
				}
				s.SetNextUse(id, int64(n-i))
				// Read back an earlier chunk while others are written.
				if i >= 8 {
					old := uint64(i - 8)
					v, err := s.Get(old)
					if err != nil {
						t.Error(err)
						return
					}
					if !bytes.Equal(v.Data, pattern(old, size/8).Data) {
						t.Errorf("chunk %d corrupt", old)
					}
					v.Release()
				}
				if st := s.Stats(); st.Used > st.Limit {
					t.Errorf("used %d > limit %d", st.Used, st.Limit)
				}
			}
		}()
	}
	wg.Wait()
	for id := range uint64(n) {
		v, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v.Data, pattern(id, size/8).Data) {
			t.Fatalf("chunk %d corrupt", id)
		}
		v.Release()
	}
	st := s.Stats()
	if st.Spilled < 2*limit || st.InMemory+st.OnDisk != n {
		t.Fatalf("stats: %+v", st)
	}
	t.Log(st)
}

// TestCloseLeavesNothing checks that Close removes every file and mapping.
func TestCloseLeavesNothing(t *testing.T) {
	dir, spill := testDirs(t)
	s, err := Open(Options{Dir: dir, SpillDir: spill, Limit: 256 << 10, Name: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	for id := range uint64(20) {
		if err := s.Put(id, pattern(id, 4000)); err != nil {
			t.Fatal(err)
		}
	}
	v, _ := s.Get(3)
	s.Delete(3) // a zombie
	_ = v
	s.Delete(19) // resident: onto the free list
	if st := s.Stats(); st.OnDisk == 0 || st.Free == 0 || st.Pinned != 1 {
		t.Fatalf("the test does not cover spill files, free segments and zombies: %+v", st)
	}
	if len(mappingsOf(t, dir)) == 0 || len(mappingsOf(t, spill)) == 0 {
		t.Fatal("no mappings found before Close")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if e := entries(t, dir); len(e) != 0 {
		t.Fatalf("left in %s: %v", dir, e)
	}
	if e := entries(t, spill); len(e) != 0 {
		t.Fatalf("left in %s: %v", spill, e)
	}
	if m := append(mappingsOf(t, dir), mappingsOf(t, spill)...); len(m) != 0 {
		t.Fatalf("mappings left:\n%s", strings.Join(m, "\n"))
	}
	v.Release() // harmless after Close
	if _, err := s.Get(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// TestDeleteAllLeavesNothing checks that deleting every chunk gives back
// every byte and file but the free list.
func TestDeleteAllLeavesNothing(t *testing.T) {
	s := openTest(t, 256<<10, -1)
	for id := range uint64(20) {
		if err := s.Put(id, pattern(id, 4000)); err != nil {
			t.Fatal(err)
		}
	}
	for id := range uint64(20) {
		s.Delete(id)
	}
	if st := s.Stats(); st.Used != 0 || st.InMemory+st.OnDisk != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if e := entries(t, s.Dir()); len(e) != 0 {
		t.Fatalf("segments left: %v", e)
	}
	if e := entries(t, s.spillDir); len(e) != 0 {
		t.Fatalf("spill files left: %v", e)
	}
	if m := mappingsOf(t, filepath.Dir(s.Dir())); len(m) != 0 {
		t.Fatalf("mappings left:\n%s", strings.Join(m, "\n"))
	}
}

// TestReuseReloadedSegment frees a chunk that was spilled and reloaded: its
// segment joins the free list and must serve, writable, a new chunk.
func TestReuseReloadedSegment(t *testing.T) {
	s := openTest(t, 1<<20, 1<<20)
	if err := s.Put(1, pattern(1, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := s.Spill(1); err != nil {
		t.Fatal(err)
	}
	v, err := s.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := unsafe.SliceData(v.Data)
	v.Release()
	s.Delete(1)
	if st := s.Stats(); st.Free != 8192 {
		t.Fatalf("reloaded segment not kept: %+v", st)
	}
	b, err := s.Create(2, tensor.Float64, []int{1000})
	if err != nil {
		t.Fatal(err)
	}
	b.Data[0] = 1
	if err := b.Seal(); err != nil {
		t.Fatal(err)
	}
	// Readers see the segment at its read-only address.
	v, err = s.Get(2)
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.SliceData(v.Data) != addr || v.Data[0] != 1 {
		t.Fatal("reloaded segment not reused")
	}
	v.Release()
	if e := entries(t, s.Dir()); len(e) != 1 || e[0] != "2" {
		t.Fatalf("segments: %v", e)
	}
}

func TestStatsStatus(t *testing.T) {
	s := openTest(t, 3*8192, -1)
	for id := range uint64(4) {
		if err := s.Put(id, pattern(id, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := s.Stats().WriteStatus(&b); err != nil {
		t.Fatal(err)
	}
	want := "shm_used 24576\nshm_limit 24576\nshm_free 0\nchunks_in_memory 3\nchunks_on_disk 1\nbytes_on_disk 8000\nspilled_bytes 8000\nreloaded_bytes 0\n"
	if b.String() != want {
		t.Errorf("status:\n%s\nwant:\n%s", b.String(), want)
	}
	q := NewQuota(100)
	rel, _ := q.Request(context.Background(), 0, 40)
	defer rel()
	b.Reset()
	q.Stats().WriteStatus(&b)
	if b.String() != "quota_used 40\nquota_limit 100\nquota_waiting 0\n" {
		t.Errorf("quota status %q", b.String())
	}
	if got := s.Stats().String(); !strings.Contains(got, "shm 24.0 KiB/24.0 KiB") || !strings.Contains(got, "1 on disk (7.8 KiB)") {
		t.Errorf("Stats.String = %q", got)
	}
}

// TestWriterSurvivesDelete checks that a chunk deleted or replaced while
// being written keeps its buffer mapped and writable until the writer
// seals or aborts it, and that its Seal then fails without touching the new
// chunk of the same ID.
func TestWriterSurvivesDelete(t *testing.T) {
	s := openTest(t, 1<<20, 1<<20)
	w1, err := s.Create(1, tensor.Int64, []int{1000})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := s.Create(1, tensor.Int64, []int{1000}) // replaces w1's chunk
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.SliceData(w1.Data) == unsafe.SliceData(w2.Data) {
		t.Fatal("a replaced chunk's buffer was reused while written")
	}
	for i := range w1.Data {
		w1.Data[i] = 0xFF // must not fault nor reach w2
	}
	if err := w1.Seal(); err == nil {
		t.Fatal("Seal of a replaced chunk succeeded")
	}
	w2.Data[0] = 7
	if err := w2.Seal(); err != nil {
		t.Fatal(err)
	}
	v, err := s.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	if v.Data[0] != 7 || v.Data[1] != 0 {
		t.Fatal("the replaced writer's bytes reached the new chunk")
	}
	v.Release()
	w3, _ := s.Create(3, tensor.Int64, []int{10})
	s.Delete(3)
	w3.Data[0] = 1
	w3.Abort()
	w3.Abort()
	if err := w3.Seal(); err == nil {
		t.Fatal("Seal after Abort succeeded")
	}
	if st := s.Stats(); st.Pinned != 0 || st.InMemory != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestTrim frees chunks into the free list and checks that Trim gives back
// only the segments idle long enough: their files go and the store's use
// falls by their size.
func TestTrim(t *testing.T) {
	dir, spill := testDirs(t)
	s, err := Open(Options{Dir: dir, SpillDir: spill, Limit: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id := uint64(1); id <= 3; id++ {
		if err := s.Put(id, tensor.NewArray(tensor.Float64, []int{1 << 16})); err != nil {
			t.Fatal(err)
		}
	}
	s.Delete(1)
	s.Delete(2)
	st := s.Stats()
	if st.Free == 0 {
		t.Fatal("no segment kept for reuse")
	}
	files := func() int {
		ents, _ := os.ReadDir(s.Dir())
		return len(ents)
	}
	if got := s.Trim(time.Hour); got != 0 {
		t.Errorf("Trim(1h) gave back %d bytes of segments freed just now", got)
	}
	before := files()
	time.Sleep(10 * time.Millisecond)
	if got := s.Trim(5 * time.Millisecond); got != st.Free {
		t.Errorf("Trim gave back %d bytes, want the %d free", got, st.Free)
	}
	after := s.Stats()
	if after.Free != 0 || after.Used != st.Used-st.Free {
		t.Errorf("after Trim: free %d used %d, want 0 and %d", after.Free, after.Used, st.Used-st.Free)
	}
	if files() != before-2 {
		t.Errorf("%d files in the store's directory after Trim, want %d", files(), before-2)
	}
	if v, err := s.Get(3); err != nil {
		t.Fatal(err)
	} else {
		v.Release()
	}
}
