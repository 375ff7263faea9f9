package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"marsfs/tensor/codec/zarr"
)

// TestQuick runs the harness end to end on marsfs at the quick scale: it
// builds marsfs, starts `marsfs up`, runs W4 (5,000 chunks) and W6, checks
// their results, and prints the table. Times are not asserted: they depend
// on the machine and its load.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts marsfs")
	}
	o := options{only: []string{"W4", "W6"}, runs: 2, quick: true, timeout: time.Minute, budget: time.Minute}
	var log bytes.Buffer
	rep, err := run(o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if rep.failed() {
		var out bytes.Buffer
		rep.print(&out)
		t.Fatalf("a marsfs run failed:\n%s\n%s", out.String(), log.String())
	}
	if len(rep.rows) != 2 {
		t.Fatalf("%d rows, want 2 (W4, W6)", len(rep.rows))
	}
	for _, rw := range rep.rows {
		m := rw.find("marsfs")
		if len(m.times) != 2 || m.times[0] <= 0 || m.operands == 0 {
			t.Errorf("%s: marsfs times %v, %d operands; want 2 positive times, operands > 0", rw.w.id, m.times, m.operands)
		}
	}
	// W4 at 1/20: 50,000 elements in 5,000 chunks, (1+1) each.
	if v := rep.rows[0].find("marsfs").value; len(v) != 1 || v[0] != 100000 {
		t.Errorf("W4 result %v, want [100000]", v)
	}
	var out bytes.Buffer
	rep.print(&out)
	for _, want := range []string{"| W4 | ", "| W6 | ", "| W4 | marsfs | 2 |", "Machine: ", "marsfs BLAS: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPython runs the Python side at the quick scale, when /usr/bin/python3
// has NumPy (and Dask, for the Dask configuration).
func TestPython(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python")
	}
	const python = "/usr/bin/python3"
	if osexec.Command(python, "-c", "import numpy").Run() != nil {
		t.Skip(python + " has no NumPy")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	o := pyOptions{python: python, script: filepath.Join(root, "bench", "dask_workloads.py"), runs: 2, budget: time.Minute, timeout: time.Minute}
	cases := []struct{ w, config string }{{"W6", "numpy"}, {"W4", "sync"}}
	for _, tc := range cases {
		if tc.config == "sync" && osexec.Command(python, "-c", "import dask.array").Run() != nil {
			t.Logf("%s has no dask: %s %s skipped", python, tc.w, tc.config)
			continue
		}
		w := workloads[slices.IndexFunc(workloads, func(w workload) bool { return w.id == tc.w })]
		p := w.params(1.0 / 20)
		r := runPython(o, tc.w, tc.config, p)
		if !r.ok() || len(r.times) != 2 {
			t.Errorf("%s %s: %d runs, err %v", tc.w, tc.config, len(r.times), r.err)
			continue
		}
		if err := w.check(p, r.value); err != nil {
			t.Errorf("%s %s: %v", tc.w, tc.config, err)
		}
	}
	// A timeout kills the script and says so.
	o.timeout = 100 * time.Millisecond
	if r := runPython(o, "W6", "numpy", workloads[5].params(1)); !r.timedOut || r.err == nil {
		t.Errorf("timeout not reported: timedOut %v, err %v", r.timedOut, r.err)
	}
}

func TestOutputNames(t *testing.T) {
	for _, w := range workloads {
		got := outputNames(w.spec(w.params(1)))
		want := []string{"r"}
		switch w.id {
		case "W5":
			want = []string{"pi"}
		case "W6":
			want = []string{"s", "m"}
		case "W7", "W8":
			want = []string{"m", "v"}
		}
		if c := climateOutputs(w.id); c != nil {
			want = c
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: outputs %q, want %q", w.id, got, want)
		}
	}
}

// climateOutputs are the names the climate and two-pass variance
// workloads fetch, by id (nil for others).
func climateOutputs(id string) []string {
	step := strings.TrimSuffix(strings.TrimSuffix(id, "-ZSTD"), "-RAW")
	switch {
	case strings.HasPrefix(id, "VAR2-"):
		return []string{"m", "d"}
	case step == "CLIM-MEAN", step == "CLIM-ANOM":
		return []string{"m"}
	case step == "CLIM-STD":
		return []string{"s"}
	case step == "CLIM-GMEAN":
		return []string{"g"}
	case step == "CLIM-SEAS":
		return []string{"c", "cg"}
	case step == "CLIM-ALL":
		return []string{"m", "s", "g", "c", "cg"}
	}
	return nil
}

// meanNPY reads float32 and float64 .npy files, as marsfs writes them.
func TestMeanNPY(t *testing.T) {
	for _, tc := range []struct {
		descr string
		data  []byte
	}{
		{"<f8", binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.5)), math.Float64bits(2.5))},
		{"<f4", binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, math.Float32bits(1.5)), math.Float32bits(2.5))},
	} {
		head := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (2,), }", tc.descr)
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(head)), 0)
		b = append(append(b, head...), tc.data...)
		if m, err := meanNPY(b); err != nil || m != 2 {
			t.Errorf("%s: mean = %v, %v; want 2", tc.descr, m, err)
		}
		if _, err := meanNPY(b[:len(b)-1]); err == nil {
			t.Errorf("%s: a cut file read", tc.descr)
		}
	}
}

func TestMeanFloat64(t *testing.T) {
	b := binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.5))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(2.5))
	if m, err := meanFloat64(b); err != nil || m != 2 {
		t.Errorf("mean = %v, %v; want 2", m, err)
	}
	for _, bad := range [][]byte{nil, b[:7]} {
		if _, err := meanFloat64(bad); err == nil {
			t.Errorf("%d bytes: no error", len(bad))
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		times []float64
		want  float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 2, 3}, 2.5}} {
		if got := (result{times: tc.times}).median(); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.times, got, tc.want)
		}
	}
}

func TestBracket(t *testing.T) {
	ok1 := result{engine: "dgemm", times: []float64{1, 2}, peak: 5, value: []float64{1}}
	ok2 := result{engine: "dgemm", times: []float64{3}, peak: 7, value: []float64{2}}
	bad := result{engine: "dgemm", err: errors.New("no numpy")}
	r := bracket(ok1, ok2)
	if !slices.Equal(r.times, []float64{1, 2, 3}) || r.peak != 7 || r.value[0] != 2 {
		t.Errorf("bracket: times %v, peak %d, value %v; want [1 2 3], 7, [2]", r.times, r.peak, r.value)
	}
	if len(ok1.times) != 2 {
		t.Errorf("bracket changed its first argument's times: %v", ok1.times)
	}
	if r := bracket(bad, ok2); !slices.Equal(r.times, ok2.times) || r.err != nil {
		t.Errorf("bracket(failed, ok) = %v, %v; want the second's runs", r.times, r.err)
	}
	if r := bracket(ok1, bad); !slices.Equal(r.times, ok1.times) || r.err != nil {
		t.Errorf("bracket(ok, failed) = %v, %v; want the first's runs", r.times, r.err)
	}
	if r := bracket(bad, bad); r.err == nil {
		t.Error("bracket(failed, failed) has no error")
	}
}

func TestNear(t *testing.T) {
	for _, tc := range []struct {
		v        []float64
		want     float64
		tol      float64
		expectOK bool
	}{
		{[]float64{100}, 100, 0, true},
		{[]float64{100.4}, 100, 0.005, true},
		{[]float64{101}, 100, 0.005, false},
		{[]float64{math.NaN()}, 100, 0.5, false},
		{nil, 100, 0.5, false},
	} {
		if err := near(tc.v, 0, tc.want, tc.tol); (err == nil) != tc.expectOK {
			t.Errorf("near(%v, %v, %v) = %v", tc.v, tc.want, tc.tol, err)
		}
	}
}

// TestMemSampler follows a child process that touches 64 MiB.
func TestMemSampler(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	// The tree is sh and its children head and tail.
	cmd := osexec.Command("sh", "-c", "sleep 0.3; head -c 67108864 /dev/zero | tail -c 67108864 >/dev/null; sleep 0.3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := newMemSampler(cmd.Process.Pid, "")
	m.start()
	time.Sleep(100 * time.Millisecond)
	idle := m.now()
	m.resetPeak()
	cmd.Wait()
	m.halt()
	// tail -c N keeps the last N bytes in memory.
	if got := m.peakBytes() - idle; got < 48<<20 || got > 256<<20 {
		t.Errorf("peak above idle %d MiB, want about 64", got>>20)
	}
}

// TestBuildBLAS checks that --blas takes only the BLAS marsfs can be built
// with, and that asking for pure Go says so.
func TestBuildBLAS(t *testing.T) {
	if _, _, err := buildMarsfs(t.TempDir(), t.TempDir(), "mkl"); err == nil || !strings.Contains(err.Error(), "mkl") {
		t.Errorf("--blas mkl: error %v, want one naming mkl", err)
	}
	if testing.Short() {
		t.Skip("builds marsfs")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, used, err := buildMarsfs(root, t.TempDir(), "gonum")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(used, "gonum") {
		t.Errorf("--blas gonum built %q", used)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Error(err)
	}
}

// TestStore writes a small array as W7 does, reads it back through the
// Zarr reader, and reads its files with dd.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	p := map[string]int{"rows": 20, "cols": 3, "rchunk": 7, "q": 1}
	path, err := ensureStore(dir, p, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.Open(os.DirFS(dir), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Shape, a.Chunks) != "[20 3] [7 3]" || len(a.Codecs) != 1 || a.Codecs[0].ID != "zstd" {
		t.Errorf("array %+v", a)
	}
	raw, err := os.ReadFile(filepath.Join(path, "2.0"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, a.ChunkBytes())
	if err := a.Decode(chunk, raw, nil); err != nil {
		t.Fatal(err)
	}
	// The last chunk's first row is data (5 + a normal, in 1/1024ths); the
	// rows past the array's end are 0.
	v := math.Float64frombits(binary.LittleEndian.Uint64(chunk))
	if v < 0 || v > 10 || v*1024 != math.Round(v*1024) || binary.LittleEndian.Uint64(chunk[len(chunk)-8:]) != 0 {
		t.Errorf("last chunk starts %v", v)
	}
	if again, err := ensureStore(dir, p, io.Discard); err != nil || again != path {
		t.Errorf("a second ensureStore: %v %v", again, err)
	}
	if r := ddStore(path, false); !r.ok() || r.value[0] <= 0 {
		t.Errorf("dd: %+v", r)
	}
}
