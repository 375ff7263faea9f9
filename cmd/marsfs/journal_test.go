package main

import (
	"bytes"
	"net"
	"os"
	osexec "os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"marsfs/fs"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// freeGossip returns a loopback address whose port is free for TCP and
// UDP, for a scheduler started twice at the same gossip address.
func freeGossip(t *testing.T) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		u, err := net.ListenPacket("udp", addr)
		l.Close()
		if err == nil {
			u.Close()
			return addr
		}
	}
	t.Fatal("no free gossip port")
	return ""
}

// startWorker starts `marsfs worker` joined at gossip; it is killed when
// the test ends.
func startWorker(t *testing.T, bin, gossip, name string) *osexec.Cmd {
	t.Helper()
	cmd := osexec.Command(bin, "worker", "--join", gossip, "--name", name, "--slots", "1", "--orphan-grace", "2m")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("worker %s:\n%s", name, stderr.String())
		}
	})
	return cmd
}

// waitWorkers waits until w1 and w2 are connected to the scheduler of c.
func waitWorkers(t *testing.T, c *fs.Client) {
	t.Helper()
	waitFor(t, c, "/cluster/members", 30*time.Second, func(s string) bool { return strings.Count(s, " worker alive") == 2 })
	waitFor(t, c, "/cluster/workers/w1/status", 30*time.Second, func(s string) bool { return s != "" })
	waitFor(t, c, "/cluster/workers/w2/status", 30*time.Second, func(s string) bool { return s != "" })
}

var adoptedRE = regexp.MustCompile(`came back holding (\d+) of the chunks`)

// adoptedIn sums the chunks a scheduler's log says it took back.
func adoptedIn(log string) int {
	n := 0
	for _, m := range adoptedRE.FindAllStringSubmatch(log, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

// TestSchedulerRestartFromJournal kills -9 a scheduler (only it: its
// workers are their own processes) after a graph and while another runs,
// and starts a scheduler again at the same gossip address on the same
// state dir: the session is served again, its kept and uploaded tensors
// bit-identical, their chunks taken back from the workers (counted in the
// log) rather than made again, and the graph that was running finishes.
func TestSchedulerRestartFromJournal(t *testing.T) {
	bin := build(t)
	gossip, state := freeGossip(t), t.TempDir()
	sch := startServer(t, bin, "scheduler", "--gossip", gossip, "--state-dir", state)
	startWorker(t, bin, gossip, "w1")
	startWorker(t, bin, gossip, "w2")
	c, err := fs.Dial(sch.unx)
	if err != nil {
		t.Fatal(err)
	}
	waitWorkers(t, c)
	sess := newSession(t, c)
	want := fillForKill(t, c, sess)
	c.Close()
	sch.cmd.Process.Kill() // SIGKILL: no goodbye to anyone
	sch.cmd.Wait()

	began := time.Now()
	sch2 := startServer(t, bin, "scheduler", "--gossip", gossip, "--state-dir", state)
	c2, err := fs.Dial(sch2.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	readText(t, c2, sess+"/tensors/u/meta")
	served := time.Since(began)
	for name, sum := range want {
		got, _ := hashFile(t, c2, sess+"/tensors/"+name+"/data")
		if got != sum {
			t.Errorf("tensor %s not bit-identical after the restart", name)
		}
	}
	readable := time.Since(began)
	if st := readText(t, c2, sess+"/graphs/2/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph 2 (running before the kill) after the restart:\n%s", st)
	}
	finished := time.Since(began)
	// What the graph run again made is what a run never cut short makes.
	other := newSession(t, c2)
	submitOK(t, c2, other, longGraphSpec)
	if a, b := readText(t, c2, sess+"/tensors/z/text"), readText(t, c2, other+"/tensors/z/text"); a != b {
		t.Errorf("z of the graph run again after the restart = %q, of a fresh run %q", a, b)
	}
	// Every chunk of u (two copies), x and y was on a worker: taken back.
	adopted := adoptedIn(sch2.stderr.String())
	if adopted != 10+10+2 {
		t.Errorf("%d chunks taken back, want the 22 of x, y and u's two copies:\n%s", adopted, sch2.stderr)
	}
	if strings.Contains(sch2.stderr.String(), "recomputing") {
		t.Errorf("chunks made again that the workers held:\n%s", sch2.stderr)
	}
	if !strings.Contains(sch2.stderr.String(), "restored 1 sessions") {
		t.Errorf("the log does not say the session was restored:\n%s", sch2.stderr)
	}
	t.Logf("restart → session served %v, tensors read bit-identical %v, running graph finished %v; %d chunks taken back",
		served.Round(time.Millisecond), readable.Round(time.Millisecond), finished.Round(time.Millisecond), adopted)
	sch2.halt(t)
}

// TestSchedulerRestartGiB measures a scheduler's restart with a kept
// tensor of 1 GiB (16 chunks of 64 MiB on two worker processes): from the
// new process's start to its session served, and to the tensor read
// whole, bit-identical, through 9P. Set MARSFS_RESTART_GIB=1 to run it.
func TestSchedulerRestartGiB(t *testing.T) {
	if os.Getenv("MARSFS_RESTART_GIB") == "" {
		t.Skip("set MARSFS_RESTART_GIB=1 to measure a scheduler restart with a 1 GiB tensor")
	}
	bin := build(t)
	gossip, state := freeGossip(t), t.TempDir()
	sch := startServer(t, bin, "scheduler", "--gossip", gossip, "--state-dir", state)
	startWorker(t, bin, gossip, "w1")
	startWorker(t, bin, gossip, "w2")
	c, err := fs.Dial(sch.unx)
	if err != nil {
		t.Fatal(err)
	}
	waitWorkers(t, c)
	sess := newSession(t, c)
	submitOK(t, c, sess, "x = rand(134217728, chunks=8388608, seed=11)\n")
	want, n := hashFile(t, c, sess+"/tensors/x/data")
	c.Close()
	sch.cmd.Process.Kill()
	sch.cmd.Wait()

	began := time.Now()
	sch2 := startServer(t, bin, "scheduler", "--gossip", gossip, "--state-dir", state)
	c2, err := fs.Dial(sch2.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	meta := readText(t, c2, sess+"/tensors/x/meta")
	served := time.Since(began)
	got, m := hashFile(t, c2, sess+"/tensors/x/data")
	read := time.Since(began)
	if got != want || m != n {
		t.Fatalf("x not bit-identical after the restart (%d bytes, want %d)", m, n)
	}
	if a := adoptedIn(sch2.stderr.String()); a != 16 {
		t.Errorf("%d chunks taken back, want 16:\n%s", a, sch2.stderr)
	}
	t.Logf("1 GiB kept: restart → session served (meta read) %v, x read whole and bit-identical %v; meta: %q",
		served.Round(time.Millisecond), read.Round(time.Millisecond), strings.SplitN(meta, "\n", 2)[0])
	sch2.halt(t)
}

// TestUpRestartFromJournal kills -9 `up --state-dir` (only it: with a
// state dir its workers outlive it) and starts it again on the same state
// dir: it binds the gossip address the first used, its workers come back
// to it with their chunks and are taken as its own (no new ones), and the
// session's tensors read back bit-identical, none made again. Stopping
// the second up stops them all.
func TestUpRestartFromJournal(t *testing.T) {
	bin := build(t)
	t.Cleanup(func() { // whatever fails, no process of this binary is left
		for _, pid := range processesOf(bin) {
			if n, err := strconv.Atoi(pid); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
	})
	state := t.TempDir()
	p := startUp(t, bin, "--workers", "2", "--state-dir", state, "--orphan-grace", "20s")
	c, err := fs.Dial(p.unx)
	if err != nil {
		t.Fatal(err)
	}
	sess := newSession(t, c)
	submitOK(t, c, sess, "x = rand(1000000, chunks=100000, seed=5)\ny = (x * 3).cumsum()\nfetch x, y\n")
	want := map[string][32]byte{}
	for _, name := range []string{"x", "y"} {
		want[name], _ = hashFile(t, c, sess+"/tensors/"+name+"/data")
	}
	c.Close()
	p.cmd.Process.Kill()
	// Not cmd.Wait: it would wait for the end of up's stderr, which the
	// workers that outlive it hold open.
	p.cmd.Process.Wait()
	time.Sleep(200 * time.Millisecond)
	if n := len(processesOf(bin)); n != 2 {
		t.Fatalf("%d processes of marsfs after up was killed, want its 2 workers", n)
	}

	began := time.Now()
	p2 := startUp(t, bin, "--workers", "2", "--state-dir", state, "--orphan-grace", "20s")
	c2, err := fs.Dial(p2.unx)
	if err != nil {
		t.Fatal(err)
	}
	for name, sum := range want {
		if got, _ := hashFile(t, c2, sess+"/tensors/"+name+"/data"); got != sum {
			t.Errorf("tensor %s not bit-identical after up's restart", name)
		}
	}
	c2.Close()
	log := p2.stderr.String()
	if n := strings.Count(log, "of the up before this one is back: taken"); n != 2 {
		t.Errorf("%d workers taken back, want 2:\n%s", n, log)
	}
	if n := len(processesOf(bin)); n != 3 {
		t.Errorf("%d processes of marsfs, want up and its 2 workers", n)
	}
	if a := adoptedIn(log); a != 20 {
		t.Errorf("%d chunks taken back, want the 20 of x and y:\n%s", a, log)
	}
	t.Logf("up restarted: tensors read back bit-identical %v after its start; %d chunks taken back", time.Since(began).Round(time.Millisecond), adoptedIn(log))
	p2.stop(t)
}

// longGraphSpec is a graph long enough to be running when a scheduler is
// killed a moment after its submission.
const longGraphSpec = "m = rand((2000, 2000), chunks=500, seed=9)\nz = (m @ m @ m).sum()\n"

// fillForKill gives session sess what a scheduler killed under it must
// not lose: an upload u, kept tensors x and y made from it (graph 1), and
// graph 2 (longGraphSpec) running. It returns the SHA-256 of u's, x's and
// y's data.
func fillForKill(t *testing.T, c *fs.Client, sess string) map[string][32]byte {
	t.Helper()
	u := tensor.NewArray(tensor.Float64, []int{200000})
	for i := range u.Float64s() {
		u.Float64s()[i] = float64(i) * 0.25
	}
	var npy bytes.Buffer
	codec.WriteNPY(&npy, u)
	f, err := c.Create(sess+"/tensors", "u.npy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(npy.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	submitOK(t, c, sess, "x = rand(2000000, chunks=200000, seed=3)\ny = x * 2 + u.sum()\nfetch x, y\n")
	want := map[string][32]byte{}
	for _, name := range []string{"u", "x", "y"} {
		want[name], _ = hashFile(t, c, sess+"/tensors/"+name+"/data")
	}
	if err := c.WriteFile(sess+"/submit", []byte(longGraphSpec)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if running := readText(t, c, sess+"/graphs/2/status"); !strings.HasPrefix(running, "RUNNING") {
		t.Fatalf("graph 2 not running when its scheduler is to be killed:\n%s", running)
	}
	return want
}
