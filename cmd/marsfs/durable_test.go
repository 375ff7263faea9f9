package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"

	"marsfs/exec/journal"
	"marsfs/fs"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// tmpfsDir mounts a tmpfs of size bytes for the test, and unmounts it
// when the test ends (after the processes the test started, whose
// cleanups run first). It needs root: the test is skipped otherwise.
func tmpfsDir(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)+",mode=0700"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// killAllOf makes sure no process of bin outlives the test: with a state
// dir, up's workers outlive it.
func killAllOf(t *testing.T, bin string) {
	t.Cleanup(func() {
		for _, pid := range processesOf(bin) {
			if n, err := strconv.Atoi(pid); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
	})
}

// arangeSum is the SHA-256 of the data file of arange(n) + k (int64).
func arangeSum(n, k int) [32]byte {
	b := make([]byte, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(i+k))
	}
	return sha256.Sum256(b)
}

// TestFullStateDir is issue 30's third case as it was measured: `up
// --state-dir` on a 1 MiB tmpfs, a session submitting until the disk is
// full, beside sessions that only share the filesystem. Every write is
// either acknowledged and durable, or refused with ENOSPC and its reason
// in the session's error file; a clone on the full dir fails with ENOSPC
// and says why. After kill -9 and a restart on the dir, still full, every
// acknowledged graph and tensor is there and no refused one, the other
// sessions are intact, a session whose file was damaged meanwhile is
// reported lost, and the scheduler takes back exactly the chunks of the
// sessions it restores.
func TestFullStateDir(t *testing.T) {
	dir := tmpfsDir(t, 1<<20)
	bin := build(t)
	killAllOf(t, bin)
	p := startUp(t, bin, "--workers", "2", "--state-dir", dir, "--orphan-grace", "30s")
	c, err := fs.Dial(p.unx)
	if err != nil {
		t.Fatal(err)
	}

	// b only shares the filesystem: an upload and a graph before it fills.
	b := newSession(t, c)
	u := tensor.NewArray(tensor.Float64, []int{1000})
	for i := range u.Float64s() {
		u.Float64s()[i] = float64(i) / 8
	}
	var npy bytes.Buffer
	codec.WriteNPY(&npy, u)
	writeNew(t, c, b+"/tensors", "u.npy", npy.Bytes())
	submitOK(t, c, b, "v = arange(1000, chunks=100) * 3 + u.sum()\nfetch v\n")
	wantB := map[string][32]byte{}
	for _, name := range []string{"u", "v"} {
		wantB[name], _ = hashFile(t, c, b+"/tensors/"+name+"/data")
	}
	// d will be damaged while the scheduler is down.
	d := newSession(t, c)
	submitOK(t, c, d, "w = arange(1000, chunks=100) + 7\nfetch w\n")

	// a fills the disk: specs carrying a comment of 16 KiB until one is
	// refused, then of half that, and so on down to a few bytes, so that
	// no page of the tmpfs is left for a new file.
	a := newSession(t, c)
	began := time.Now()
	var acked []int
	refused := 0
	i := 0
	for padLen := 16 << 10; padLen >= 16; padLen /= 2 {
		pad := "# " + strings.Repeat("x", padLen) + "\n"
		for {
			if i++; i > 1000 {
				t.Fatalf("1000 submits acknowledged on a 1 MiB state dir")
			}
			err := c.WriteFile(a+"/submit", []byte(pad+fmt.Sprintf("a%d = arange(100, chunks=50) + %d\nfetch a%d\n", i, i, i)))
			if err == nil {
				acked = append(acked, i)
				continue
			}
			if !fs.IsErrno(err, linux.ENOSPC) {
				t.Fatalf("submit %d refused with %v, want ENOSPC", i, err)
			}
			if msg := readText(t, c, a+"/error"); !strings.Contains(msg, "submit refused") || !strings.Contains(msg, "no space left on device") {
				t.Fatalf("submit %d refused; the error file says %q", i, msg)
			}
			refused++
			break
		}
	}
	filled := time.Since(began)
	// acked holds the specs' numbers; the refused took no graph number,
	// so the acknowledged are graphs 1, 2, ... in order.
	for k := range acked {
		if st := readText(t, c, a+"/graphs/"+strconv.Itoa(k+1)+"/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
			t.Fatalf("graph %d: %s", k+1, st)
		}
	}
	if n := len(graphsOf(t, c, a)); n != len(acked) {
		t.Fatalf("%d graphs in the session, %d acknowledged", n, len(acked))
	}
	// An upload on the full disk: refused, or durable.
	big := tensor.NewArray(tensor.Float64, []int{100000})
	npy.Reset()
	codec.WriteNPY(&npy, big)
	uploaded := false
	if f, err := c.Create(a+"/tensors", "big.npy"); err != nil {
		t.Fatal(err)
	} else {
		_, werr := f.Write(npy.Bytes())
		err := f.Close()
		switch {
		case werr != nil:
			t.Fatalf("upload write: %v", werr)
		case err == nil:
			uploaded = true
		case !fs.IsErrno(err, linux.ENOSPC):
			t.Fatalf("upload on the full disk: %v, want ENOSPC", err)
		case !strings.Contains(readText(t, c, a+"/error"), "upload big refused"):
			t.Fatalf("upload refused; the error file says %q", readText(t, c, a+"/error"))
		}
	}
	// A drop (rm -r tensors/aN of the first graph): refused, or durable.
	first := "a" + strconv.Itoa(acked[0])
	tensors, err := c.Walk(a + "/tensors")
	if err != nil {
		t.Fatal(err)
	}
	dropErr := tensors.UnlinkAt(first, 0x200) // AT_REMOVEDIR
	tensors.Close()
	dropped := dropErr == nil
	if !dropped && !fs.IsErrno(dropErr, linux.ENOSPC) {
		t.Fatalf("drop on the full disk: %v, want ENOSPC", dropErr)
	}
	// A clone on the full dir: ENOSPC, and the client and the log say why.
	if _, err := c.ReadFile("/sessions/clone"); !fs.IsErrno(err, linux.ENOSPC) {
		t.Fatalf("clone on the full state dir: %v, want ENOSPC", err)
	}
	if _, errs, code := p.marsfs(t, "", "cat", "--addr", p.unx, "/sessions/clone"); code == 0 || !strings.Contains(errs, "--state-dir is full") {
		t.Errorf("marsfs cat /sessions/clone on the full state dir: exit %d, %q", code, errs)
	}
	if !strings.Contains(p.stderr.String(), "clone for") || !strings.Contains(p.stderr.String(), "no space left on device") {
		t.Errorf("up's log does not say why the clone was refused:\n%s", p.stderr)
	}
	c.Close()
	t.Logf("%d submits acknowledged, %d refused, in %v; upload acknowledged %v, drop acknowledged %v", len(acked), refused, filled.Round(time.Millisecond), uploaded, dropped)

	p.cmd.Process.Kill()
	p.cmd.Process.Wait()
	// d's file damaged: a byte flipped in place (no room is needed).
	dfile := filepath.Join(dir, "session-"+strings.TrimPrefix(d, "/sessions/")+".journal")
	data, err := os.ReadFile(dfile)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(dfile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// What the restarted scheduler must take back: the chunks the
	// journals it can restore name, no more.
	jd, err := journal.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := jd.Load()
	if err != nil {
		t.Fatal(err)
	}
	expect := 0
	for _, l := range loaded {
		if l.State != nil {
			chunks, uploads := l.State.Chunks()
			expect += len(chunks) + len(uploads) // an upload's chunk has two copies
		}
	}

	began = time.Now()
	p2 := startUp(t, bin, "--workers", "2", "--state-dir", dir, "--orphan-grace", "30s")
	restarted := time.Since(began)
	c2, err := fs.Dial(p2.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for name, sum := range wantB {
		if got, _ := hashFile(t, c2, b+"/tensors/"+name+"/data"); got != sum {
			t.Errorf("session %s, which only shared the filesystem: %s not bit-identical after the restart", b, name)
		}
	}
	if n := len(graphsOf(t, c2, a)); n != len(acked) {
		t.Errorf("%d graphs after the restart, %d acknowledged", n, len(acked))
	}
	for k, i := range acked {
		if st := readText(t, c2, a+"/graphs/"+strconv.Itoa(k+1)+"/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
			t.Errorf("graph %d after the restart: %s", k+1, st)
		}
		if k == 0 && dropped {
			if _, err := c2.ReadFile(a + "/tensors/" + first + "/meta"); err == nil {
				t.Errorf("%s, whose drop was acknowledged, is back", first)
			}
			continue
		}
		if got, _ := hashFile(t, c2, a+"/tensors/a"+strconv.Itoa(i)+"/data"); got != arangeSum(100, i) {
			t.Errorf("a%d after the restart: wrong bytes", i)
		}
	}
	if _, err := c2.ReadFile(a + "/tensors/big/meta"); (err == nil) != uploaded {
		t.Errorf("big after the restart: %v; its upload acknowledged: %v", err, uploaded)
	}
	log := p2.stderr.String()
	if !strings.Contains(log, "session "+strings.TrimPrefix(d, "/sessions/")+" lost") {
		t.Errorf("the damaged session is not reported lost:\n%s", log)
	}
	sessions, err := c2.ReadDir("/sessions")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range sessions {
		names = append(names, e.Name)
	}
	if want := []string{"clone", strings.TrimPrefix(b, "/sessions/"), strings.TrimPrefix(a, "/sessions/")}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("/sessions after the restart lists %v, want %v", names, want)
	}
	if got := adoptedIn(log); got != expect {
		t.Errorf("took back %d chunks, want the %d of the sessions restored:\n%s", got, expect, log)
	}
	t.Logf("restarted on the full state dir in %v: %d chunks taken back", restarted.Round(time.Millisecond), adoptedIn(log))
	p2.stop(t)
}

// writeNew creates dir/name through c and writes data to it.
func writeNew(t *testing.T, c *fs.Client, dir, name string, data []byte) {
	t.Helper()
	f, err := c.Create(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// graphsOf lists the numbers of session's graphs.
func graphsOf(t *testing.T, c *fs.Client, session string) []string {
	t.Helper()
	ents, err := c.ReadDir(session + "/graphs")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name); err == nil {
			out = append(out, e.Name)
		}
	}
	return out
}
