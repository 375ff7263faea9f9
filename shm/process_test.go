package shm

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"marsfs/tensor"
)

// The reader child maps the chunk at the path in readerEnv, reads it all and
// prints its ID, byte sum and read time in nanoseconds.
const readerEnv = "MARSFS_SHM_READER_CHILD"

func readerChild(path string) {
	start := time.Now()
	m, err := MapChunk(path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	s := sum(m.Data)
	d := time.Since(start)
	m.Close()
	fmt.Println(m.ID, s, d.Nanoseconds())
	os.Exit(0)
}

// readInChild has another process map and read the chunk at path.
func readInChild(t testing.TB, path string) (id, total uint64, d time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), readerEnv+"="+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reader process: %v: %s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 3 {
		t.Fatalf("reader process said %q", out)
	}
	id, _ = strconv.ParseUint(f[0], 10, 64)
	total, _ = strconv.ParseUint(f[1], 10, 64)
	ns, _ := strconv.ParseInt(f[2], 10, 64)
	return id, total, time.Duration(ns)
}

// TestReaderOtherProcess has another process map a chunk of this one's
// store, in shared memory and then in its spill file.
func TestReaderOtherProcess(t *testing.T) {
	s := openTest(t, 1<<20, -1)
	a := pattern(5, 10000)
	if err := s.Put(5, a); err != nil {
		t.Fatal(err)
	}
	want := sum(a.Data)
	for _, spilled := range []bool{false, true} {
		if spilled {
			s.Spill(5)
		}
		path, ok := s.Path(5)
		if !ok {
			t.Fatal("no path")
		}
		id, got, _ := readInChild(t, path)
		if id != 5 || got != want {
			t.Fatalf("spilled %v: other process read chunk %d sum %d, want 5 sum %d", spilled, id, got, want)
		}
	}
}

// BenchmarkMapReadProcess has another process map a 1 GiB chunk read-only
// and read it all; the reported rate is the child's own (map, faults, read),
// without its start-up.
func BenchmarkMapReadProcess(b *testing.B) {
	const size = 1 << 30
	s := openTest(b, 2*size, -1)
	w, err := s.Create(1, tensor.Float64, []int{size / 8})
	if err != nil {
		b.Fatal(err)
	}
	buf := w.Data
	for i := range buf {
		buf[i] = byte(i)
	}
	w.Seal()
	path, _ := s.Path(1)
	want := sum(buf)
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		_, got, d := readInChild(b, path)
		if got != want {
			b.Fatal("wrong sum")
		}
		total += d
	}
	b.ReportMetric(float64(size)*float64(b.N)/total.Seconds()/1e9, "GB/s")
}
