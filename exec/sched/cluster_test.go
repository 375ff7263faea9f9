package sched

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/spec"
	"marsfs/tensor/tensortest"
	"marsfs/tensor/tile"
)

// Worker processes for the tests: the test binary runs itself with
// MARSFS_TEST_WORKER set and becomes a worker until its stdin closes (the
// parent died or is done) or it is signalled.
func TestMain(m *testing.M) {
	if name := os.Getenv("MARSFS_TEST_WORKER"); name != "" {
		os.Exit(workerMain(name))
	}
	if os.Getenv("MARSFS_TEST_SCHEDULER") != "" {
		os.Exit(schedulerMain())
	}
	g0 := runtime.NumGoroutine()
	code := m.Run()
	// Nothing the tests started may outlive them. The runtime tells no
	// goroutine's end, so this one check looks again, at growing
	// intervals, for the few that are still returning from a Close.
	deadline := time.Now().Add(5 * time.Second)
	for wait := time.Millisecond; code == 0 && runtime.NumGoroutine() > g0; wait = min(2*wait, 100*time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "%d goroutines left after the tests (had %d):\n%s", runtime.NumGoroutine(), g0, buf[:runtime.Stack(buf, true)])
			code = 1
			break
		}
		time.Sleep(wait) // a backoff: no event says a goroutine ended
	}
	os.Exit(code)
}

func workerMain(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	slots, _ := strconv.Atoi(os.Getenv("MARSFS_TEST_SLOTS"))
	if dir := os.Getenv("MARSFS_TEST_WORKER_PROFILE"); dir != "" {
		// Profiles of worker processes, for BenchmarkOperandOverhead.
		f, err := os.Create(filepath.Join(dir, name+".prof"))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	if os.Getenv("MARSFS_TEST_SENDPAUSE") != "" {
		// Tell the test a chunk is half sent, and wait to be killed
		// (or told to stop, if the test ends otherwise).
		worker.SendPause = func() {
			fmt.Println("sending")
			<-ctx.Done()
		}
	}
	cfg := worker.Config{Name: name, Join: []string{os.Getenv("MARSFS_TEST_JOIN")}, Slots: slots, Fast: true,
		Listen: os.Getenv("MARSFS_TEST_LISTEN"), Gossip: os.Getenv("MARSFS_TEST_GOSSIP")}
	if k := os.Getenv("MARSFS_TEST_KEY"); k != "" {
		cfg.SecretKey = wire.DeriveKey([]byte(k))
	}
	err := worker.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

// testCluster is a scheduler with workers, in this process or not.
type testCluster struct {
	t       testing.TB
	s       *Scheduler
	workers []*worker.Worker
	procs   []*exec.Cmd
	stdins  []io.Closer
	killed  map[int]bool // indexes of procs killed by the test
	g0      int
}

func newTestCluster(t testing.TB, nworkers int, processes bool) *testCluster {
	t.Helper()
	if !processes {
		cfgs := make([]worker.Config, nworkers)
		for i := range cfgs {
			cfgs[i] = worker.Config{Name: fmt.Sprintf("w%d", i+1), Slots: 2}
		}
		return startTestCluster(t, cfgs...)
	}
	tc, ctx := newTestScheduler(t)
	for i := 0; i < nworkers; i++ {
		tc.spawn(nil, fmt.Sprintf("w%d", i+1))
	}
	if err := tc.s.WaitWorkers(ctx, nworkers); err != nil {
		t.Fatal(err)
	}
	return tc
}

// startTestCluster starts a scheduler and a worker in this process for each
// of cfgs (joined to the scheduler, with fast failure detection), waits for
// them, and closes them all when the test ends.
func startTestCluster(t testing.TB, cfgs ...worker.Config) *testCluster {
	t.Helper()
	tc, ctx := newTestScheduler(t)
	s := tc.s
	for _, cfg := range cfgs {
		cfg.Join, cfg.Fast = []string{s.GossipAddr()}, true
		w, err := worker.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		tc.workers = append(tc.workers, w)
	}
	if err := s.WaitWorkers(ctx, len(cfgs)); err != nil {
		t.Fatal(err)
	}
	return tc
}

// newTestScheduler starts the scheduler of a test cluster, with fast
// failure detection, and closes the cluster when the test ends. ctx bounds
// the start of its workers: 10 s.
func newTestScheduler(t testing.TB) (*testCluster, context.Context) {
	t.Helper()
	tc := &testCluster{t: t, g0: runtime.NumGoroutine(), killed: map[int]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	s, err := New(ctx, Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	tc.s = s
	t.Cleanup(tc.close)
	return tc, ctx
}

// spawn starts worker process name, the command prefixed by wrap (as in
// "ip netns exec NS"), with the extra environment env; it returns the
// process's standard output.
func (tc *testCluster) spawn(wrap []string, name string, env ...string) io.Reader {
	tc.t.Helper()
	args := append(append([]string(nil), wrap...), os.Args[0], "-test.run=^$")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "MARSFS_TEST_WORKER="+name, "MARSFS_TEST_JOIN="+tc.s.GossipAddr(), "MARSFS_TEST_SLOTS=2")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tc.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tc.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tc.t.Fatal(err)
	}
	tc.procs = append(tc.procs, cmd)
	tc.stdins = append(tc.stdins, in)
	return out
}

func (tc *testCluster) close() {
	for _, w := range tc.workers {
		w.Close()
	}
	for i, cmd := range tc.procs {
		tc.stdins[i].Close() // the worker leaves and exits
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil && !tc.killed[i] {
				tc.t.Errorf("worker process: %v", err)
			}
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
			tc.t.Errorf("worker process %d did not exit; killed", cmd.Process.Pid)
		}
	}
	tc.s.Close()
	checkGoroutines(tc.t, tc.g0)
}

// held returns the chunks and bytes each worker holds, from its status.
func (tc *testCluster) held() (chunks int, nbytes int64) {
	tc.t.Helper()
	for _, w := range tc.s.Workers() {
		text, ok := tc.s.WorkerStatus(w.Name)
		if !ok {
			tc.t.Fatalf("no status from %s", w.Name)
		}
		chunks += statusField(tc.t, text, "chunks")
		nbytes += int64(statusField(tc.t, text, "bytes"))
	}
	return chunks, nbytes
}

func statusField(t testing.TB, text, key string) int {
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("status %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("status has no %q:\n%s", key, text)
	return 0
}

// checkGoroutines fails if goroutines started since g0 outlive a grace
// period. The runtime tells no goroutine's end: it looks again at growing
// intervals, for those still returning from a Close.
func checkGoroutines(t testing.TB, g0 int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for wait := time.Millisecond; runtime.NumGoroutine() > g0; wait = min(2*wait, 100*time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines left (had %d):\n%s", runtime.NumGoroutine(), g0, buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(wait) // a backoff: no event says a goroutine ended
	}
}

type envMap = spec.Env

// putTensor cuts the 2-D array a into chunks, puts them on the workers
// under IDs from firstID on, and returns the tiled tensor naming them.
func putTensor(t *testing.T, s *Scheduler, a *tensor.Array, chunks [][]int, firstID uint64, stored map[uint64]*tensor.Array) *tensor.TiledTensor {
	t.Helper()
	tt := &tensor.TiledTensor{Shape: a.Shape, DType: a.DType, Chunks: chunks}
	offs := tensor.ChunkOffsets(chunks)
	es := a.DType.Size()
	id := firstID
	for i, rows := range chunks[0] {
		for j, cols := range chunks[1] {
			c := tensor.NewArray(a.DType, []int{rows, cols})
			for r := 0; r < rows; r++ {
				from := ((offs[0][i]+r)*a.Shape[1] + offs[1][j]) * es
				copy(c.Data[r*cols*es:(r+1)*cols*es], a.Data[from:from+cols*es])
			}
			if err := s.Put(context.Background(), id, c); err != nil {
				t.Fatal(err)
			}
			stored[id] = c
			tt.Keys = append(tt.Keys, id)
			id++
		}
	}
	return tt
}

// tileJob tiles g over env, computes the expected outputs in this process
// and returns the job that keeps the outputs' chunks.
func tileJob(t *testing.T, g *spec.Graph, env envMap, stored map[uint64]*tensor.Array) (*core.Job, []*tensor.Array) {
	t.Helper()
	cg, err := tile.Graph(g, env)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tensortest.Compute(context.Background(), cg, func(id uint64) (*tensor.Array, error) { return stored[id], nil })
	if err != nil {
		t.Fatal(err)
	}
	job := &core.Job{Graph: cg, IDs: make([]uint64, len(cg.Ops)), Keep: map[uint64]bool{}}
	for k, op := range cg.Ops {
		job.IDs[k] = 1000 + uint64(k)
		if op.Stored != 0 {
			job.IDs[k] = op.Stored
		}
	}
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			job.Keep[job.IDs[k]] = true
		}
	}
	return job, want
}

func ramp(dt tensor.DType, shape []int, scale float64) *tensor.Array {
	a := tensor.NewArray(dt, shape)
	for i := range a.Float64s() {
		a.Float64s()[i] = float64(i%17)*scale - 3
	}
	return a
}

// rechunkJob puts an 8x6 tensor as 2x3 chunks on the workers and returns a
// job that rechunks it twice (so that most ops read chunks of both workers)
// and multiplies it by a stored 6x4 matrix (block products summed in a tree).
func rechunkJob(t *testing.T, s *Scheduler) (*core.Job, []*tensor.Array, []uint64) {
	t.Helper()
	stored := map[uint64]*tensor.Array{}
	x := putTensor(t, s, ramp(tensor.Float64, []int{8, 6}, 1.5), [][]int{{2, 2, 2, 2}, {3, 3}}, 1, stored)
	m := putTensor(t, s, ramp(tensor.Float64, []int{6, 4}, 0.25), [][]int{{2, 2, 2}, {4}}, 100, stored)
	in := &spec.Node{ID: 0, Op: tensor.OpInput, Shape: x.Shape, DType: x.DType, Chunks: x.Chunks, Attrs: spec.Attrs{Name: "x"}}
	r1 := &spec.Node{ID: 1, Op: tensor.OpRechunk, Inputs: []*spec.Node{in}, Shape: x.Shape, DType: x.DType, Chunks: [][]int{{3, 5}, {4, 2}}}
	r2 := &spec.Node{ID: 2, Op: tensor.OpRechunk, Inputs: []*spec.Node{r1}, Shape: x.Shape, DType: x.DType, Chunks: [][]int{{1, 7}, {6}}}
	mi := &spec.Node{ID: 3, Op: tensor.OpInput, Shape: m.Shape, DType: m.DType, Chunks: m.Chunks, Attrs: spec.Attrs{Name: "m"}}
	mm := &spec.Node{ID: 4, Op: tensor.OpMatmul, Inputs: []*spec.Node{r1, mi}, Shape: []int{8, 4}, DType: tensor.Float64}
	g := &spec.Graph{Nodes: []*spec.Node{in, r1, r2, mi, mm}, Outputs: []spec.Output{{Name: "y", Node: r2}, {Name: "z", Node: mm}}}
	job, want := tileJob(t, g, envMap{"x": x, "m": m}, stored)
	var ids []uint64
	for id := range stored {
		ids = append(ids, id)
	}
	return job, want, ids
}

// chainsJob is a long job: n chains of length steps copying one 4-element
// chunk, the stored chunk storedID or, when it is 0, a zero chunk made at the
// head of each chain. Only the chains' ends are kept.
func chainsJob(n, steps int, storedID uint64) *core.Job {
	g := &chunk.Graph{}
	job := &core.Job{Keep: map[uint64]bool{}}
	add := func(op *chunk.Op) int {
		op.Key = len(g.Ops)
		g.Ops = append(g.Ops, op)
		job.IDs = append(job.IDs, 5000+uint64(op.Key))
		return op.Key
	}
	src := -1
	if storedID != 0 {
		src = add(&chunk.Op{Kind: "stored", Stored: storedID, Shape: []int{4}, DType: tensor.Float64})
		job.IDs[src] = storedID
	}
	copyArgs := chunk.AssembleArgs{Pieces: []chunk.Piece{{In: 0, Src: []tensor.Slice{{Start: 0, Step: 1, Len: 4}}, Dst: []int{0}}}}
	for c := 0; c < n; c++ {
		prev := src
		if src < 0 {
			prev = add(&chunk.Op{Kind: "assemble", Shape: []int{4}, DType: tensor.Float64, Args: chunk.AssembleArgs{}})
		}
		for i := 0; i < steps; i++ {
			prev = add(&chunk.Op{Kind: "assemble", Inputs: []int{prev}, Shape: []int{4}, DType: tensor.Float64, Args: copyArgs})
		}
		job.Keep[job.IDs[prev]] = true
	}
	job.Graph = g
	return job
}

// exercise runs the checks common to in-process and process workers.
func exercise(t *testing.T, tc *testCluster) {
	s := tc.s
	job, want, storedIDs := rechunkJob(t, s)
	base, baseBytes := tc.held()
	// An uploaded chunk is held on two workers.
	copies := min(2, connected(s))
	if base != copies*len(storedIDs) {
		t.Fatalf("workers hold %d chunks after put, want %d", base, copies*len(storedIDs))
	}
	var mu sync.Mutex
	var last core.Event
	running := map[string]bool{}
	job.Observe = func(ev core.Event) {
		mu.Lock()
		defer mu.Unlock()
		last = ev
		if ev.State == core.Finished {
			running[ev.Worker] = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Run(ctx, job); err != nil {
		t.Fatal(err)
	}
	// Results equal tensor.Compute's, bit for bit.
	var wantBytes int64
	nkept := 0
	for o, out := range job.Graph.Outputs {
		parts := make([]*tensor.Array, len(out.Keys))
		for i, k := range out.Keys {
			id := job.IDs[k]
			if s.Where(id) == "" {
				t.Fatalf("kept chunk %d has no holder", id)
			}
			a, _, err := s.Fetch(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			parts[i] = a
		}
		got, err := tensor.Gather(&out, parts)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, want[o].Data) {
			t.Fatalf("output %s differs from tensor.Compute:\n got %v\nwant %v", out.Name, got.Float64s(), want[o].Float64s())
		}
		wantBytes += int64(want[o].NBytes())
		nkept += len(out.Keys)
	}
	// Intermediates freed: the workers hold the stored and kept chunks only.
	chunks, nbytes := tc.held()
	if chunks != base+nkept || nbytes != baseBytes+wantBytes {
		t.Errorf("workers hold %d chunks (%d bytes), want %d (%d)", chunks, nbytes, base+nkept, baseBytes+wantBytes)
	}
	mu.Lock()
	if last.LiveChunks != nkept || last.LiveBytes != wantBytes {
		t.Errorf("last event: %d live chunks, %d bytes; want %d, %d", last.LiveChunks, last.LiveBytes, nkept, wantBytes)
	}
	if last.TransferBytes <= 0 {
		t.Errorf("no transfer counted for a graph across %d workers", len(running))
	}
	if len(running) != 2 {
		t.Errorf("ops ran on %v, want both workers", running)
	}
	t.Logf("transfer %d bytes, ops ran on %v", last.TransferBytes, running)
	mu.Unlock()

	// Free drops the kept chunks.
	var kept []uint64
	for id := range job.Keep {
		kept = append(kept, id)
	}
	s.Free(kept)
	if chunks, _ := tc.held(); chunks != base {
		t.Errorf("after Free workers hold %d chunks, want %d", chunks, base)
	}
	for _, id := range kept {
		if s.Where(id) != "" {
			t.Errorf("freed chunk %d still located", id)
		}
	}

	// Cancel a long job: it ends quickly and leaves no chunk behind.
	if err := s.Put(ctx, 900, ramp(tensor.Float64, []int{4}, 1)); err != nil {
		t.Fatal(err)
	}
	storedIDs = append(storedIDs, 900)
	base += copies
	long := chainsJob(4, 30000, 900) // long enough to be cancelled while small ops go out in units
	var runningOps sync.WaitGroup
	runningOps.Add(1)
	var once sync.Once
	var nfinished atomic.Int64
	long.Observe = func(ev core.Event) {
		// Cancelled once a thousand ops are done: well into the job (the
		// whole of which runs in a fraction of a second on an idle machine).
		if ev.State == core.Finished && ev.Key > 0 && nfinished.Add(1) == 1000 {
			once.Do(runningOps.Done)
		}
	}
	cctx, ccancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(cctx, long) }()
	// A run that ends first (its workers declared dead on a loaded
	// machine) fails the test, saying why, rather than hang it.
	thousand := make(chan struct{})
	go func() { runningOps.Wait(); close(thousand) }()
	select {
	case <-thousand:
	case err := <-errc:
		t.Fatalf("the long run ended after %d ops finished, before it could be cancelled: %v", nfinished.Load(), err)
	}
	start := time.Now()
	ccancel()
	select {
	case err := <-errc:
		if err != context.Canceled {
			t.Errorf("cancelled run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled run did not return")
	}
	took := time.Since(start)
	t.Logf("cancel after %d of %d ops took %v", nfinished.Load(), len(long.Graph.Ops), took)
	if took > 2*time.Second {
		t.Errorf("cancel took %v", took)
	}
	if chunks, _ := tc.held(); chunks != base {
		t.Errorf("after cancel workers hold %d chunks, want %d", chunks, base)
	}
	s.Free(storedIDs)
	if chunks, _ := tc.held(); chunks != 0 {
		t.Errorf("after freeing everything workers hold %d chunks", chunks)
	}
}

func TestClusterInProcess(t *testing.T) {
	tc := newTestCluster(t, 2, false)
	exercise(t, tc)
	// The worker side agrees with the status text.
	for _, w := range tc.workers {
		if w.Store().Len() != 0 {
			t.Errorf("%s holds %d chunks", w.Name(), w.Store().Len())
		}
	}
}

func TestClusterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	tc := newTestCluster(t, 2, true)
	pids := map[int]bool{}
	for _, w := range tc.s.Workers() {
		if w.PID == os.Getpid() || w.PID == 0 {
			t.Errorf("worker %s runs in pid %d", w.Name, w.PID)
		}
		pids[w.PID] = true
	}
	if len(pids) != 2 {
		t.Errorf("worker pids %v", pids)
	}
	exercise(t, tc)
}

// TestWorkerProcessCrash kills a worker process in the middle of a spec: the
// lost chunks are recomputed on the survivor, the result is bit-identical to
// the local scheduler's, the survivor keeps only the result, and the member
// table declares the dead worker failed. It does so for large ops sent one by
// one and for units of tiny ops, whose ops out on the dead worker go again.
func TestWorkerProcessCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	for _, tc := range []struct{ name, spec, out string }{
		{"large ops", "x = rand(8000000, chunks=250000, seed=1)\ny = rand(8000000, chunks=250000, seed=2)\npi = 4 * ((x*x + y*y) < 1).mean()", "pi"},
		{"units of tiny ops", "s = (ones(200000, chunks=10) + 1).sum()", "s"},
	} {
		t.Run(tc.name, func(t *testing.T) { workerProcessCrash(t, tc.spec, tc.out) })
	}
}

func workerProcessCrash(t *testing.T, spec, out string) {
	workerProcessCrashAt(t, spec, out, localResult(t, spec, out), crashAtThird)
}

// crashAtThird kills the worker once a third of the graph's operands have
// finished.
func crashAtThird(g *engine.Graph, first int) bool {
	return g.Status().Finished >= g.Status().Operands/3
}

// workerProcessCrashAt is workerProcessCrash against want, the local
// scheduler's bytes of out (computed once by a caller that crashes the
// same spec more than once), killing the worker once when says so of the
// graph (first: its operands when submitted, those of its first stage).
// The graph's 60 s run from its submit: the local run and the start of
// the worker processes, slow under -race on a loaded machine, are not
// what it bounds.
func workerProcessCrashAt(t *testing.T, spec, out string, want []byte, when func(g *engine.Graph, first int) bool) {
	tc := newTestCluster(t, 3, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := engine.New(tc.s)
	defer e.Close()
	s, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	first := g.Status().Operands
	if !waitGraph(g, 60*time.Second, func() bool { return when(g, first) }) {
		t.Fatalf("graph %v before the kill", g.Status().State)
	}
	tc.killed[1] = true
	if err := tc.procs[1].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	st := g.Wait(ctx)
	if st.State != engine.Succeeded {
		t.Fatalf("graph %v after the kill: %s", st.State, g.Err())
	}
	t.Logf("graph done %v after the kill (status: %d finished events for %d operands)", time.Since(begin), st.Finished, st.Operands)
	got := fetchNamed(t, s, out)
	if !bytes.Equal(got.Data, want) {
		t.Errorf("%s = %v on the cluster, %x locally", out, got.Float64s(), want)
	}
	// Every op whose chunk was lost, or which was running on w2, runs
	// again: a later event shows it FINISHED on a survivor.
	lost := map[int]bool{}
	evs, _, _ := g.Events(0)
	for _, ev := range evs {
		if (strings.HasPrefix(ev.Err, "chunk lost") || strings.Contains(ev.Err, "w2 left")) && ev.State != core.Freed {
			lost[ev.Key] = true
		}
		if lost[ev.Key] && ev.State == core.Finished {
			if ev.Worker == "w2" {
				t.Errorf("lost op %d re-ran on the killed worker", ev.Key)
			}
			delete(lost, ev.Key)
			lost[-1-ev.Key] = true // re-run seen
		}
	}
	rerun := 0
	for k := range lost {
		if k >= 0 {
			t.Errorf("lost op %d never finished again", k)
		} else {
			rerun++
		}
	}
	if rerun == 0 {
		t.Error("no event tells of an op re-run after the loss")
	}
	t.Logf("%d ops re-ran after the kill", rerun)
	held := 0
	for _, w := range []string{"w1", "w3"} {
		text, ok := tc.s.WorkerStatus(w)
		if !ok {
			t.Fatalf("no status from survivor %s", w)
		}
		held += statusField(t, text, "chunks")
	}
	tt, _ := s.Tensor(out)
	if n := len(tt.Tiled().Keys); held != n {
		t.Errorf("survivors hold %d chunks, want the result's %d", held, n)
	}
	if st := waitMember(tc.s, 5*time.Second, "w2", "failed"); st != "failed" {
		t.Fatalf("killed worker is %q", st)
	}
	t.Logf("w2 declared failed %v after the kill", time.Since(begin))
}

// notes returns the notes among g's events (workers joining and leaving,
// and why), for a failed graph's message.
func notes(g *engine.Graph) string {
	evs, _, _ := g.Events(0)
	var b strings.Builder
	for _, ev := range evs {
		if ev.Key == core.NoteKey {
			fmt.Fprintf(&b, "\n  %s %s", ev.At.Format("15:04:05.000"), ev.Err)
		}
	}
	return b.String()
}
