package sched

import (
	"fmt"
	"os"
	"testing"
	"time"

	"marsfs/exec/worker"
	"marsfs/shm"
)

var _ worker.Store = (*shm.Arrays)(nil)

// TestSpecsOnShmWorkers runs the cluster specs on workers whose chunks live
// in shared memory, with a limit small enough that they spill, and checks
// the results against the local scheduler and that nothing is left behind.
func TestSpecsOnShmWorkers(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "exectest-")
	if err != nil {
		dir = t.TempDir()
	} else {
		defer os.RemoveAll(dir)
	}
	spill := t.TempDir()
	var stores []*shm.Store
	var cfgs []worker.Config
	for i := range 2 {
		name := fmt.Sprintf("w%d", i+1)
		st, err := shm.Open(shm.Options{Dir: dir, SpillDir: spill, Limit: 64 << 10, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st)
		cfgs = append(cfgs, worker.Config{Name: name, Slots: 2, Store: smallInShm(shm.NewArrays(st))})
	}
	tc := startTestCluster(t, cfgs...)
	runSpecs(t, tc) // ends with the session closed and its chunks freed
	// The workers' status files tell of the store.
	for _, w := range tc.workers {
		text := w.Status()
		if statusField(t, text, "shm_limit") != 64<<10 || statusField(t, text, "spilled_bytes") == 0 {
			t.Errorf("status of %s shows no spilling store:\n%s", w.Name(), text)
		}
	}
	var spilled int64
	for _, st := range stores {
		// Arrays read by the kernels pin their chunks until collected.
		waitUnpinned(st, 5*time.Second)
		stats := st.Stats()
		spilled += stats.Spilled
		if stats.InMemory+stats.OnDisk != 0 || stats.Used != stats.Free || stats.Pinned != 0 {
			t.Errorf("after the session closed: %v", stats)
		}
	}
	// Only the freed segments kept for reuse remain: no spill file.
	if ents, _ := os.ReadDir(spill); len(ents) != 2 {
		t.Errorf("%d entries in %s, want the two stores' directories", len(ents), spill)
	}
	for _, e := range mustDir(os.ReadDir(spill)) {
		if files := mustDir(os.ReadDir(spill + "/" + e.Name())); len(files) != 0 {
			t.Errorf("%d spill files left in %s after the session closed", len(files), e.Name())
		}
	}
	t.Logf("spilled %d bytes", spilled)
	if spilled == 0 {
		t.Error("the specs ran without spilling: the test does not cover spill")
	}
	tc.close()
	for _, st := range stores {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}
	for _, d := range []string{dir, spill} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%d entries left in %s", len(ents), d)
		}
	}
}

func mustDir[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// smallInShm makes a keep even its small chunks in shared memory, so that
// tests of small chunks exercise segments and spilling.
func smallInShm(a *shm.Arrays) *shm.Arrays {
	a.SetSmall(0)
	return a
}
