package main

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"marsfs/fs"
	"marsfs/tensor"
	"marsfs/tensor/codec"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// workerPIDs returns the pids of up's worker processes, by worker name.
func workerPIDs(p *upProcess) map[string]int {
	out := map[string]int{}
	for _, pid := range processesOf(p.bin) {
		cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		for i, a := range args {
			if a == "--name" && i+1 < len(args) && len(args) > 1 && args[1] == "worker" {
				n, _ := strconv.Atoi(pid)
				out[args[i+1]] = n
			}
		}
	}
	return out
}

// killWorker signals up's worker called name and waits for it to be gone.
func killWorker(t *testing.T, p *upProcess, name string, sig syscall.Signal) int {
	t.Helper()
	pid := workerPIDs(p)[name]
	if pid == 0 {
		t.Fatalf("no worker %s among %v", name, workerPIDs(p))
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
	if sig == syscall.SIGKILL {
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; {
			if time.Now().After(deadline) {
				t.Fatalf("worker %s (pid %d) still there 5s after SIGKILL", name, pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return pid
}

// waitFor reads path until it satisfies ok, for up to d; it returns the
// last text read.
func waitFor(t *testing.T, c *fs.Client, path string, d time.Duration, ok func(string) bool) string {
	t.Helper()
	var text string
	for deadline := time.Now().Add(d); ; {
		b, err := c.ReadFile(path)
		text = string(b)
		if err == nil && ok(text) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %v (%v):\n%s", path, d, err, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func newSession(t *testing.T, c *fs.Client) string {
	t.Helper()
	return "/sessions/" + strings.TrimSpace(readText(t, c, "/sessions/clone"))
}

// memberState is the state /cluster/members (text) gives member name.
func memberState(text, name string) string {
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == name {
			return f[3]
		}
	}
	return ""
}

// waitDropped waits until the scheduler has given worker name up: its
// status fails at once (a paused worker still connected fails it after
// the scheduler's 2 s wait for an answer). A worker that resumes before
// would lose nothing, and have nothing to be given back.
func waitDropped(t *testing.T, c *fs.Client, name string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		asked := time.Now()
		if _, err := c.ReadFile("/cluster/workers/" + name + "/status"); err != nil && time.Since(asked) < time.Second {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scheduler has not given %s up 20s after it was declared failed", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// upSession builds marsfs, starts `marsfs up` with args, dials it and
// opens a session; the client closes when the test ends.
func upSession(t *testing.T, args ...string) (*upProcess, *fs.Client, string) {
	t.Helper()
	p := startUp(t, build(t), args...)
	c, err := fs.Dial(p.unx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return p, c, newSession(t, c)
}

// runGraph submits spec to the session and waits for graph n to succeed.
func runGraph(t *testing.T, c *fs.Client, sess string, n int, spec string) {
	t.Helper()
	if err := submit(c, sess, spec); err != nil {
		t.Fatal(err)
	}
	if st := readText(t, c, fmt.Sprintf("%s/graphs/%d/wait", sess, n)); !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Fatalf("graph %d:\n%s", n, st)
	}
}

// longGraph runs for seconds however fast the products are (4096 block
// products of 400x400, 0.5 TFLOP): the tests that kill workers under a
// running graph cancel it when they have seen what they look for.
const longGraph = "a = rand(6400, 6400, chunks=400, seed=1)\nb = (a @ a).sum()\n"

// TestAllWorkersKilled kills every worker of `marsfs up --respawn=false`
// in the middle of a graph: the graph's status says it waits for a worker,
// then it FAILS with that reason after --worker-wait; a graph submitted
// to the empty cluster does the same, never a silent hang.
func TestAllWorkersKilled(t *testing.T) {
	p, c, sess := upSession(t, "--workers", "2", "--slots", "1", "--respawn=false", "--worker-wait", "3s")
	if err := submit(c, sess, longGraph); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, sess+"/graphs/1/status", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "\nrunning 1\n") || strings.Contains(s, "\nrunning 2\n")
	})
	for name := range workerPIDs(p) {
		killWorker(t, p, name, syscall.SIGKILL)
	}
	st := waitFor(t, c, sess+"/graphs/1/status", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "\nwaiting for a worker: none connected since")
	})
	if !strings.HasPrefix(st, "RUNNING\n") {
		t.Errorf("status while waiting:\n%s", st)
	}
	st = readText(t, c, sess+"/graphs/1/wait")
	if !strings.HasPrefix(st, "FAILED\n") || !strings.Contains(st, "error no worker to run the graph") {
		t.Errorf("status after the wait:\n%s", st)
	}
	evs := readText(t, c, sess+"/graphs/1/events")
	for _, want := range []string{"note worker worker-1 ", "note worker worker-2 ", "note waiting for a worker"} {
		if !strings.Contains(evs, want) {
			t.Errorf("events lack %q", want)
		}
	}
	// A new submission to the empty cluster says so too, then fails.
	began := time.Now()
	if err := submit(c, sess, "y = ones(10).sum()\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, sess+"/graphs/2/status", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "\nwaiting for a worker")
	})
	st = readText(t, c, sess+"/graphs/2/wait")
	if !strings.HasPrefix(st, "FAILED\n") || !strings.Contains(st, "no worker to run the graph") {
		t.Errorf("a graph submitted with no worker:\n%s", st)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("the graph submitted with no worker failed after %v, want about 3s", d)
	}
	p.stop(t)
}

// TestUpRespawns kills a worker of `marsfs up` with SIGKILL: up starts
// another in its place within 10 s (its log and /cluster/members show
// it), the running graph's events tell of it, and the new worker takes
// work.
func TestUpRespawns(t *testing.T) {
	p, c, sess := upSession(t, "--workers", "2", "--slots", "1")
	if err := submit(c, sess, longGraph); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, sess+"/graphs/1/status", 30*time.Second, func(s string) bool {
		return !strings.Contains(s, "\nrunning 0\n")
	})
	killed := time.Now()
	killWorker(t, p, "worker-1", syscall.SIGKILL)
	waitFor(t, c, "/cluster/members", 10*time.Second, func(s string) bool {
		return memberState(s, "worker-1.2") == "alive"
	})
	t.Logf("worker-1.2 alive in /cluster/members %v after worker-1 was killed", time.Since(killed).Round(time.Millisecond))
	// Once the scheduler is connected to it, the long graph has heard of
	// it: it is cancelled, its events read whole.
	waitFor(t, c, "/cluster/workers/worker-1.2/status", 10*time.Second, func(string) bool { return true })
	if err := c.WriteFile(sess+"/graphs/1/ctl", []byte("cancel\n")); err != nil {
		t.Fatal(err)
	}
	if st := readText(t, c, sess+"/graphs/1/wait"); !strings.HasPrefix(st, "CANCELLED\n") && !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Fatalf("graph after a worker was killed:\n%s", st)
	}
	evs := readText(t, c, sess+"/graphs/1/events")
	for _, want := range []string{"note worker worker-1 lost its connection", "up starts worker-1.2 in its place", "note worker worker-1.2 joined"} {
		if !strings.Contains(evs, want) {
			t.Errorf("events lack %q", want)
		}
	}
	// The new worker takes work: a graph of many chunks runs on both.
	if err := submit(c, sess, "x = rand(4000000, chunks=100000, seed=2)\nfetch x\n"); err != nil {
		t.Fatal(err)
	}
	if st := readText(t, c, sess+"/graphs/2/wait"); !strings.HasPrefix(st, "SUCCEEDED\n") || !strings.Contains(st, "worker-1.2=") {
		t.Errorf("graph 2 on the respawned cluster:\n%s", st)
	}
	if !bytes.Contains(p.stderr.Bytes(), []byte("marsfs: worker worker-1 (pid ")) || !bytes.Contains(p.stderr.Bytes(), []byte("marsfs: started worker worker-1.2")) {
		t.Errorf("up's log:\n%s", p.stderr)
	}
	if n := metric(t, c, "marsfs_up_worker_restarts_total", ""); n != 1 {
		t.Errorf("marsfs_up_worker_restarts_total %v, want 1", n)
	}
	if n := metric(t, c, "marsfs_scheduler_workers_lost_total", ""); n != 1 {
		t.Errorf("marsfs_scheduler_workers_lost_total %v, want 1", n)
	}
	p.stop(t)
}

// chunkWorker is the worker holding chunk idx of a tensor, from its
// chunk's meta.
func chunkWorker(t *testing.T, c *fs.Client, tensorDir, idx string) string {
	t.Helper()
	meta := readText(t, c, tensorDir+"/chunks/"+idx+"/meta")
	for _, line := range strings.Split(meta, "\n") {
		if w, ok := strings.CutPrefix(line, "worker "); ok {
			return w
		}
	}
	t.Fatalf("chunk meta:\n%s", meta)
	return ""
}

// TestKeptTensorSurvivesWorkerKill kills with SIGKILL the worker holding
// kept tensors after their graphs succeeded: the tensor's meta says it is
// recomputing, its data reads back bit-identical, and a later graph
// reading another tensor lost the same way succeeds with the same result
// as before the loss, its events telling of the recomputation.
func TestKeptTensorSurvivesWorkerKill(t *testing.T) {
	p, c, sess := upSession(t, "--workers", "2", "--slots", "1")
	runGraph(t, c, sess, 1, "x = rand(2000000, chunks=250000, seed=5)\ny = (x * 3 + 1).cumsum()\ns = y.sum()\nfetch x, y, s\n")
	x := sess + "/tensors/x"
	before, err := c.ReadFile(x + "/data")
	if err != nil {
		t.Fatal(err)
	}
	sum := readText(t, c, sess+"/tensors/s/text")
	victim := chunkWorker(t, c, x, "0")
	killed := time.Now()
	killWorker(t, p, victim, syscall.SIGKILL)
	meta := waitFor(t, c, x+"/meta", 5*time.Second, func(s string) bool { return !strings.Contains(s, "state stored\n") })
	if !strings.Contains(meta, "state recomputing\n") {
		t.Errorf("x's meta after its worker was killed:\n%s", meta)
	}
	after, err := c.ReadFile(x + "/data")
	if err != nil {
		t.Fatalf("x's data after its worker was killed: %v", err)
	}
	t.Logf("x (%d bytes) readable again %v after its worker was killed", len(after), time.Since(killed).Round(time.Millisecond))
	if !bytes.Equal(before, after) {
		t.Error("x made again differs")
	}
	if meta := readText(t, c, x+"/meta"); !strings.Contains(meta, "state stored\n") {
		t.Errorf("x's meta once read:\n%s", meta)
	}
	// y is lost too (its chunks were on both workers); a graph reads it.
	victim = chunkWorker(t, c, sess+"/tensors/y", "7")
	killWorker(t, p, victim, syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond) // the scheduler hears of it
	if err := submit(c, sess, "s = y.sum()\n"); err != nil {
		t.Fatal(err)
	}
	if st := readText(t, c, sess+"/graphs/2/wait"); !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Fatalf("graph 2 reading y lost:\n%s", st)
	}
	if got := readText(t, c, sess+"/tensors/s/text"); got != sum {
		t.Errorf("sum of y made again %q, was %q", got, sum)
	}
	if evs := readText(t, c, sess+"/graphs/2/events"); !strings.Contains(evs, "note recomputing") {
		t.Errorf("graph 2's events tell of no recomputation:\n%s", evs)
	}
	if n := metric(t, c, "marsfs_scheduler_chunks_recomputed_total", `result="made"`); n < 2 {
		t.Errorf("chunks recomputed %v, want at least x's and y's lost chunks", n)
	}
	if n := metric(t, c, "marsfs_scheduler_chunks_recomputed_total", `result="failed"`); n != 0 {
		t.Errorf("chunks whose recomputation failed %v, want 0", n)
	}
	p.stop(t)
}

// TestUploadSurvivesWorkerKill uploads a tensor to `marsfs up` with two
// workers and kills one with SIGKILL: the upload reads back the same from
// its other copies. Once up's new worker holds second copies again, the
// other first worker is killed too: the upload still reads back the same.
func TestUploadSurvivesWorkerKill(t *testing.T) {
	p, c, sess := upSession(t, "--workers", "2", "--slots", "1")
	a := tensor.NewArray(tensor.Float64, []int{1024, 512})
	for i, v := range a.Float64s() {
		a.Float64s()[i] = v + float64(i)*0.5
	}
	var npy bytes.Buffer
	codec.WriteNPY(&npy, a)
	if _, errs, code := p.marsfs(t, npy.String(), "write", "--addr", p.unx, sess+"/tensors/m.npy"); code != 0 {
		t.Fatalf("upload: exit %d: %s", code, errs)
	}
	before := readText(t, c, sess+"/tensors/m/meta")
	want, err := c.ReadFile(sess + "/tensors/m/data")
	if err != nil {
		t.Fatal(err)
	}
	killWorker(t, p, "worker-1", syscall.SIGKILL)
	got, err := c.ReadFile(sess + "/tensors/m/data")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("upload after worker-1 was killed: %v, same %v\n%s", err, bytes.Equal(got, want), before)
	}
	// worker-2 may go once worker-1.2 holds a copy of every chunk of
	// the upload (the second copies are made one after the other).
	var nchunks string
	for _, l := range strings.Split(before, "\n") {
		if v, ok := strings.CutPrefix(l, "chunks "); ok {
			nchunks = v
		}
	}
	if nchunks == "" {
		t.Fatalf("upload's meta names no chunks:\n%s", before)
	}
	began := time.Now()
	waitFor(t, c, "/cluster/workers/worker-1.2/status", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "\nchunks "+nchunks+"\n")
	})
	// The worker holds the copies before the scheduler records them:
	// worker-2 goes once the scheduler counts a copy made again.
	waitFor(t, c, "/cluster/metrics", 20*time.Second, func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if v, ok := strings.CutPrefix(l, "marsfs_scheduler_upload_copies_made_total "); ok {
				return v != "0"
			}
		}
		return false
	})
	t.Logf("worker-1.2 holds copies of all %s chunks %v after worker-1 was killed", nchunks, time.Since(began).Round(time.Millisecond))
	killWorker(t, p, "worker-2", syscall.SIGKILL)
	got, err = c.ReadFile(sess + "/tensors/m/data")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("upload after worker-2 was killed too: %v", err)
	}
	if meta := readText(t, c, sess+"/tensors/m/meta"); !strings.Contains(meta, "state stored\n") {
		t.Errorf("upload's meta:\n%s", meta)
	}
	if n := metric(t, c, "marsfs_scheduler_upload_copies_made_total", ""); n < 1 {
		t.Errorf("upload copies made again %v, want at least 1", n)
	}
	began = time.Now()
	p.stop(t)
	t.Logf("up stopped in %v", time.Since(began).Round(time.Millisecond))
}

// TestPausedWorkerReadopted stops a worker holding kept chunks with
// SIGSTOP until the cluster's failure detector declares it failed, then
// resumes it: its chunks are taken back (the log counts them) rather than
// made again, and the tensor reads back the same.
func TestPausedWorkerReadopted(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the failure detector (seconds)")
	}
	p, c, sess := upSession(t, "--workers", "2", "--slots", "1")
	runGraph(t, c, sess, 1, "x = rand(2000000, chunks=250000, seed=5)\n")
	x := sess + "/tensors/x"
	want, err := c.ReadFile(x + "/data")
	if err != nil {
		t.Fatal(err)
	}
	victim := chunkWorker(t, c, x, "0")
	held := 0
	for i := 0; i < 8; i++ {
		if chunkWorker(t, c, x, strconv.Itoa(i)) == victim {
			held++
		}
	}
	pid := killWorker(t, p, victim, syscall.SIGSTOP)
	stopped := time.Now()
	waitFor(t, c, "/cluster/members", 30*time.Second, func(s string) bool {
		return memberState(s, victim) == "failed"
	})
	waitDropped(t, c, victim)
	t.Logf("%s declared failed %v after SIGSTOP", victim, time.Since(stopped).Round(time.Millisecond))
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	want1 := fmt.Sprintf("worker %s came back holding %d of the chunks lost with it", victim, held)
	for !bytes.Contains(p.stderr.Bytes(), []byte(want1)) {
		if time.Since(resumed) > 20*time.Second {
			t.Fatalf("no %q in up's log 20s after SIGCONT:\n%s", want1, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d chunks of %s taken back %v after SIGCONT", held, victim, time.Since(resumed).Round(time.Millisecond))
	if meta := readText(t, c, x+"/meta"); !strings.Contains(meta, "state stored\n") {
		t.Errorf("x's meta after its worker came back:\n%s", meta)
	}
	got, err := c.ReadFile(x + "/data")
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("x after its worker came back: %v, same %v", err, bytes.Equal(got, want))
	}
	if w := chunkWorker(t, c, x, "0"); w != victim {
		t.Errorf("chunk 0 of x on %s, want %s again", w, victim)
	}
	if n := metric(t, c, "marsfs_scheduler_chunks_adopted_total", ""); n != float64(held) {
		t.Errorf("chunks adopted %v, want %d", n, held)
	}
	if n := metric(t, c, "marsfs_scheduler_chunks_recomputed_total", `result="made"`); n != 0 {
		t.Errorf("chunks recomputed %v, want 0: all were taken back", n)
	}
	p.stop(t)
}

// TestWorkerLeavesCleanly sends SIGTERM to a worker holding kept chunks
// and an upload's copies: it moves them to the other worker before it
// exits, so nothing is lost and nothing recomputed.
func TestWorkerLeavesCleanly(t *testing.T) {
	p, c, sess := upSession(t, "--workers", "2", "--slots", "1", "--respawn=false")
	runGraph(t, c, sess, 1, "x = rand(2000000, chunks=250000, seed=5)\n")
	x := sess + "/tensors/x"
	want, err := c.ReadFile(x + "/data")
	if err != nil {
		t.Fatal(err)
	}
	victim := chunkWorker(t, c, x, "0")
	pid := killWorker(t, p, victim, syscall.SIGTERM)
	for deadline := time.Now().Add(20 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("%s still running 20s after SIGTERM", victim)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !bytes.Contains(p.stderr.Bytes(), []byte("worker "+victim+" is leaving: ")) {
		t.Errorf("up's log tells of no hand-off:\n%s", p.stderr)
	}
	if meta := readText(t, c, x+"/meta"); !strings.Contains(meta, "state stored\n") {
		t.Errorf("x's meta after %s left:\n%s", victim, meta)
	}
	if w := chunkWorker(t, c, x, "0"); w == victim {
		t.Errorf("chunk 0 of x still on %s", w)
	}
	got, err := c.ReadFile(x + "/data")
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("x after %s left: %v", victim, err)
	}
	p.stop(t)
}

// TestUploadSurvivesKillMidway kills a worker with SIGKILL halfway through
// an upload of four chunks: the chunks put before have their other copy,
// those put after go to the workers left, and the whole reads back the
// same.
func TestUploadSurvivesKillMidway(t *testing.T) {
	p, c, sess := upSession(t, "--workers", "2", "--slots", "1")
	a := tensor.NewArray(tensor.Float64, []int{16 << 20}) // 128 MiB: four default chunks of 32 MiB
	for i := range a.Float64s() {
		a.Float64s()[i] = float64(i%1000) * 0.25
	}
	var npy bytes.Buffer
	codec.WriteNPY(&npy, a)
	cmd := osexec.Command(p.bin, "write", "--addr", p.unx, sess+"/tensors/m.npy")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := npy.Bytes()
	half := len(b) - len(a.Data)/2
	if _, err := stdin.Write(b[:half]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the first two chunks are put
	killWorker(t, p, "worker-1", syscall.SIGKILL)
	if _, err := stdin.Write(b[half:]); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("upload with a worker killed halfway: %v: %s", err, errb.String())
	}
	got, err := c.ReadFile(sess + "/tensors/m/data")
	if err != nil || !bytes.Equal(got, a.Data) {
		t.Fatalf("upload read back: %v, same %v", err, bytes.Equal(got, a.Data))
	}
	p.stop(t)
}

// metric reads sample name{labels} of /cluster/metrics (labels as they
// are printed, e.g. `result="made"`; "" for none) with Prometheus' own
// parser of the text format; -1 when there is no such sample.
func metric(t *testing.T, c *fs.Client, name, labels string) float64 {
	t.Helper()
	text := readText(t, c, "/cluster/metrics")
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("/cluster/metrics does not parse: %v", err)
	}
	f, ok := fams[name]
	if !ok {
		return -1
	}
	for _, m := range f.GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		if strings.Join(ls, ",") != labels {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
