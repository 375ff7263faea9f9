package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// TestUploadGiB uploads a 1 GiB .npy through the FUSE mount (cp) and
// through the client verbs (marsfs write), as a user would, and reads the
// scheduler's peak resident memory from /proc: an upload streams to the
// workers chunk by chunk, so the scheduler grows by far less than the
// file. Then it reads the tensor back and checks every value.
func TestUploadGiB(t *testing.T) {
	if testing.Short() {
		t.Skip("1 GiB upload")
	}
	needFUSE(t)
	bin := build(t)
	p, mnt := startMounted(t, bin, "--workers", "2")
	pid := strconv.Itoa(p.cmd.Process.Pid)

	const rows, cols = 134218, 1000 // 1 GiB of float64
	file := filepath.Join(t.TempDir(), "x.npy")
	writeRamp(t, file, rows, cols)

	sess := strings.TrimSpace(readMounted(t, filepath.Join(mnt, "sessions/clone")))
	tensors := filepath.Join(mnt, "sessions", sess, "tensors")
	base := procKiB(t, pid, "status", "VmRSS")

	start := time.Now()
	if out, err := osexec.Command("cp", file, tensors+"/a.npy").CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s (error file %q)", err, out, readMounted(t, filepath.Join(mnt, "sessions", sess, "error")))
	}
	t.Logf("cp of 1 GiB through the mount: %v (%.0f MB/s)", time.Since(start), float64(rows*cols*8)/time.Since(start).Seconds()/1e6)
	if out, err := osexec.Command("rm", "-r", tensors+"/a").CombinedOutput(); err != nil {
		t.Fatalf("rm -r: %v: %s", err, out)
	}

	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start = time.Now()
	cmd := osexec.Command(bin, "write", "--addr", p.tcp, "/sessions/"+sess+"/tensors/b.npy")
	cmd.Stdin = f
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("marsfs write: %v: %s", err, out)
	}
	t.Logf("marsfs write of 1 GiB over TCP: %v (%.0f MB/s)", time.Since(start), float64(rows*cols*8)/time.Since(start).Seconds()/1e6)

	peak := procKiB(t, pid, "status", "VmHWM")
	t.Logf("scheduler resident memory: %d MiB before, peak %d MiB (+%d MiB)", base>>10, peak>>10, (peak-base)>>10)
	if grew := (peak - base) << 10; grew >= 256<<20 {
		t.Errorf("the scheduler grew by %d MiB while uploading 1 GiB, want less than 256", grew>>20)
	}
	if meta := readMounted(t, filepath.Join(tensors, "b/meta")); !strings.Contains(meta, "shape (134218, 1000)\n") || !strings.Contains(meta, "dtype float64\n") {
		t.Errorf("meta:\n%s", meta)
	}
	// Every value, read back through the mount.
	data, err := os.Open(filepath.Join(tensors, "b/data"))
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	br := bufio.NewReaderSize(data, 1<<20)
	var v [8]byte
	for i := range rows * cols {
		if _, err := io.ReadFull(br, v[:]); err != nil {
			t.Fatalf("reading element %d: %v", i, err)
		}
		if got := math.Float64frombits(binary.LittleEndian.Uint64(v[:])); got != float64(i) {
			t.Fatalf("element %d reads %v", i, got)
		}
	}
	p.stop(t)
}

// writeRamp writes a rows × cols float64 .npy whose element i is i.
func writeRamp(t *testing.T, file string, rows, cols int) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(codec.NPYHeader(tensor.Float64, []int{rows, cols}))
	var b [8]byte
	for i := range rows * cols {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(float64(i)))
		w.Write(b[:])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readMounted(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
