package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFromNPYGiB writes a 1 GiB .npy into the data directory of `marsfs up`
// (two worker processes, mounted), reduces it with from_npy through the
// mount, and checks the sums and that the scheduler's resident memory did
// not grow with the file: the workers read their chunks themselves. A path
// that leaves the data directory is refused at the write, the error file
// naming it.
func TestFromNPYGiB(t *testing.T) {
	if testing.Short() {
		t.Skip("1 GiB file")
	}
	sess := sumRampGiB(t, "from_npy(\"x.npy\")", func(dir string, rows, cols int) {
		writeRamp(t, filepath.Join(dir, "x.npy"), rows, cols)
	})

	// Paths that leave the data directory are refused at the write.
	for _, bad := range []string{"../x.npy", "/etc/passwd"} {
		err := os.WriteFile(sess+"/submit", []byte("y = from_npy(\""+bad+"\")\n"), 0o644)
		if !errorIs(err, syscall.EINVAL) {
			t.Errorf("from_npy(%q): %v, want EINVAL", bad, err)
		}
		if msg := readMounted(t, sess+"/error"); !strings.Contains(msg, "not inside the data directory") {
			t.Errorf("error file for %q: %q", bad, msg)
		}
	}
}

// sumRampGiB writes a 1 GiB ramp (element i = i, float64, rows x cols)
// into the data directory of `marsfs up` (two worker processes, mounted)
// with write, reduces it through the mount with a spec reading it by from
// (e.g. from_npy("x.npy")), checks the column sums and the last row's
// maximum exactly, and that the scheduler's resident memory did not grow
// by 64 MiB while the workers read it. It returns the session's directory
// in the mount.
func sumRampGiB(t *testing.T, from string, write func(dir string, rows, cols int)) string {
	t.Helper()
	needFUSE(t)
	bin := build(t)
	data := t.TempDir()
	const rows, cols = 134218, 1000
	write(data, rows, cols)
	p, mnt := startMounted(t, bin, "--workers", "2", "--data-dir", data)
	pid := strconv.Itoa(p.cmd.Process.Pid)
	sess := filepath.Join(mnt, "sessions", strings.TrimSpace(readMounted(t, filepath.Join(mnt, "sessions/clone"))))
	base := procKiB(t, pid, "status", "VmRSS")

	begin := time.Now()
	spec := "x = " + from + "\ns = x.sum(axis=0)\nt = x[-1].max()\nfetch s, t\n"
	if err := os.WriteFile(sess+"/submit", []byte(spec), 0o644); err != nil {
		t.Fatalf("submit: %v (error %q)", err, readMounted(t, sess+"/error"))
	}
	if st := readMounted(t, sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph: %s", st)
	}
	t.Logf("%s and its sums over 1 GiB: %v", from, time.Since(begin))
	if got := strings.Fields(readMounted(t, sess+"/tensors/t/text")); len(got) != 1 || got[0] != strconv.Itoa(rows*cols-1)+".0" {
		t.Errorf("t = %v, want %d.0", got, rows*cols-1)
	}
	// Column j sums r*cols + j over the rows r, exactly in float64.
	raw, err := os.ReadFile(sess + "/tensors/s/data")
	if err != nil || len(raw) != 8*cols {
		t.Fatalf("s/data: %d bytes, %v", len(raw), err)
	}
	for j := range cols {
		want := float64(cols)*float64(rows)*float64(rows-1)/2 + float64(rows)*float64(j)
		if got := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*j:])); got != want {
			t.Fatalf("s[%d] = %v, want %v", j, got, want)
		}
	}
	peak := procKiB(t, pid, "status", "VmHWM")
	t.Logf("scheduler resident: %d MiB before, peak %d MiB", base>>10, peak>>10)
	if peak-base > 64<<10 {
		t.Errorf("the scheduler grew by %d MiB while the workers read 1 GiB", (peak-base)>>10)
	}
	return sess
}

func errorIs(err error, errno syscall.Errno) bool {
	for err != nil {
		if e, ok := err.(syscall.Errno); ok {
			return e == errno
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
