package exec

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"marsfs/tensor"
)

// Worker processes for the tests: the test binary runs itself with
// MARSFS_TEST_WORKER set and becomes a worker until its stdin closes (the
// parent died or is done) or it is signalled.
func TestMain(m *testing.M) {
	if name := os.Getenv("MARSFS_TEST_WORKER"); name != "" {
		os.Exit(workerMain(name))
	}
	os.Exit(m.Run())
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
	err := RunWorker(ctx, WorkerConfig{Name: name, Join: []string{os.Getenv("MARSFS_TEST_JOIN")}, Slots: slots, Fast: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	return 0
}

// testCluster is a scheduler with workers, in this process or not.
type testCluster struct {
	t       *testing.T
	s       *Scheduler
	workers []*Worker
	procs   []*exec.Cmd
	stdins  []io.Closer
	g0      int
}

func newTestCluster(t *testing.T, nworkers int, processes bool) *testCluster {
	t.Helper()
	tc := &testCluster{t: t, g0: runtime.NumGoroutine()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := NewScheduler(ctx, SchedulerConfig{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	tc.s = s
	for i := 0; i < nworkers; i++ {
		name := fmt.Sprintf("w%d", i+1)
		if processes {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "MARSFS_TEST_WORKER="+name, "MARSFS_TEST_JOIN="+s.GossipAddr(), "MARSFS_TEST_SLOTS=2")
			cmd.Stderr = os.Stderr
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tc.procs = append(tc.procs, cmd)
			tc.stdins = append(tc.stdins, in)
			continue
		}
		w, err := StartWorker(ctx, WorkerConfig{Name: name, Join: []string{s.GossipAddr()}, Slots: 2, Fast: true})
		if err != nil {
			t.Fatal(err)
		}
		tc.workers = append(tc.workers, w)
	}
	t.Cleanup(tc.close)
	if err := s.WaitWorkers(ctx, nworkers); err != nil {
		t.Fatal(err)
	}
	return tc
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
			if err != nil {
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

func statusField(t *testing.T, text, key string) int {
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

// checkGoroutines fails if goroutines started since g0 outlive a grace period.
func checkGoroutines(t *testing.T, g0 int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > g0 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines left (had %d):\n%s", runtime.NumGoroutine(), g0, buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type envMap map[string]*tensor.TiledTensor

func (e envMap) Lookup(name string) (*tensor.TiledTensor, bool) { t, ok := e[name]; return t, ok }

// rechunkJob puts an 8x6 tensor as 2x3 chunks on the workers and returns
// a job rechunking it twice (so that most ops read chunks of both workers),
// with the expected output computed in this process.
func rechunkJob(t *testing.T, s *Scheduler) (*Job, *tensor.Array, []uint64) {
	t.Helper()
	src := tensor.NewArray(tensor.Float64, []int{8, 6})
	for i := range src.Float64s() {
		src.Float64s()[i] = float64(i) * 1.5
	}
	from := [][]int{{2, 2, 2, 2}, {3, 3}}
	tt := &tensor.TiledTensor{Name: "x", Shape: src.Shape, DType: src.DType, Chunks: from}
	stored := map[uint64]*tensor.Array{}
	offs := tensor.ChunkOffsets(from)
	var storedIDs []uint64
	for i := range from[0] {
		for j := range from[1] {
			c := tensor.NewArray(tensor.Float64, []int{2, 3})
			for r := 0; r < 2; r++ {
				for q := 0; q < 3; q++ {
					c.Float64s()[r*3+q] = src.Float64s()[(offs[0][i]+r)*6+offs[1][j]+q]
				}
			}
			id := uint64(1 + len(storedIDs))
			if err := s.Put(context.Background(), id, c); err != nil {
				t.Fatal(err)
			}
			stored[id] = c
			storedIDs = append(storedIDs, id)
			tt.Keys = append(tt.Keys, id)
		}
	}
	in := &tensor.Node{ID: 0, Op: tensor.OpInput, Shape: src.Shape, DType: src.DType, Chunks: from, Attrs: tensor.Attrs{Name: "x"}}
	r1 := &tensor.Node{ID: 1, Op: tensor.OpRechunk, Inputs: []*tensor.Node{in}, Shape: src.Shape, DType: src.DType, Chunks: [][]int{{3, 5}, {4, 2}}}
	r2 := &tensor.Node{ID: 2, Op: tensor.OpRechunk, Inputs: []*tensor.Node{r1}, Shape: src.Shape, DType: src.DType, Chunks: [][]int{{1, 7}, {6}}}
	g := &tensor.Graph{Nodes: []*tensor.Node{in, r1, r2}, Outputs: []tensor.Output{{Name: "y", Node: r2}}}
	cg, err := tensor.Tile(g, envMap{"x": tt})
	if err != nil {
		t.Fatal(err)
	}
	want, err := tensor.Compute(context.Background(), cg, func(id uint64) (*tensor.Array, error) { return stored[id], nil })
	if err != nil {
		t.Fatal(err)
	}
	job := &Job{Graph: cg, IDs: make([]uint64, len(cg.Ops)), Keep: map[uint64]bool{}}
	for k, op := range cg.Ops {
		job.IDs[k] = 1000 + uint64(k)
		if op.Stored != 0 {
			job.IDs[k] = op.Stored
		}
	}
	for _, k := range cg.Outputs[0].Keys {
		job.Keep[job.IDs[k]] = true
	}
	return job, want[0], storedIDs
}

// chainsJob is a long job: n chains of length steps copying one 4-element
// chunk. Only the chains' ends are kept.
func chainsJob(n, steps int, storedID uint64) *Job {
	g := &tensor.ChunkGraph{}
	add := func(op *tensor.ChunkOp) int {
		op.Key = len(g.Ops)
		g.Ops = append(g.Ops, op)
		return op.Key
	}
	src := add(&tensor.ChunkOp{Kind: "stored", Stored: storedID, Shape: []int{4}, DType: tensor.Float64})
	copyArgs := tensor.AssembleArgs{Pieces: []tensor.Piece{{In: 0, Src: []tensor.Slice{{Start: 0, Step: 1, Len: 4}}, Dst: []int{0}}}}
	job := &Job{Keep: map[uint64]bool{}}
	for c := 0; c < n; c++ {
		prev := src
		for i := 0; i < steps; i++ {
			prev = add(&tensor.ChunkOp{Kind: "assemble", Inputs: []int{prev}, Shape: []int{4}, DType: tensor.Float64, Args: copyArgs})
		}
		job.Keep[5000+uint64(prev)] = true
	}
	job.Graph = g
	job.IDs = make([]uint64, len(g.Ops))
	for k := range g.Ops {
		job.IDs[k] = 5000 + uint64(k)
	}
	job.IDs[src] = storedID
	return job
}

// exercise runs the checks common to in-process and process workers.
func exercise(t *testing.T, tc *testCluster) {
	s := tc.s
	job, want, storedIDs := rechunkJob(t, s)
	base, baseBytes := tc.held()
	if base != len(storedIDs) {
		t.Fatalf("workers hold %d chunks after put, want %d", base, len(storedIDs))
	}
	var mu sync.Mutex
	var last Event
	running := map[string]bool{}
	job.Observe = func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		last = ev
		if ev.State == Running {
			running[ev.Worker] = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Run(ctx, job); err != nil {
		t.Fatal(err)
	}
	// Results equal tensor.Compute's.
	out := job.Graph.Outputs[0]
	parts := make([]*tensor.Array, len(out.Keys))
	for i, k := range out.Keys {
		id := job.IDs[k]
		if s.Where(id) == "" {
			t.Fatalf("kept chunk %d has no holder", id)
		}
		a, err := s.Fetch(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = a
	}
	got, err := tensor.Gather(&out, parts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("result differs from tensor.Compute:\n got %v\nwant %v", got.Float64s(), want.Float64s())
	}
	// Intermediates freed: the workers hold the stored and kept chunks only.
	chunks, nbytes := tc.held()
	if chunks != base+len(out.Keys) || nbytes != baseBytes+int64(want.NBytes()) {
		t.Errorf("workers hold %d chunks (%d bytes), want %d (%d)", chunks, nbytes, base+len(out.Keys), baseBytes+int64(want.NBytes()))
	}
	mu.Lock()
	if last.LiveChunks != len(out.Keys) || last.LiveBytes != int64(want.NBytes()) {
		t.Errorf("last event: %d live chunks, %d bytes; want %d, %d", last.LiveChunks, last.LiveBytes, len(out.Keys), want.NBytes())
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
	long := chainsJob(4, 3000, storedIDs[0])
	var runningOps sync.WaitGroup
	runningOps.Add(1)
	var once sync.Once
	long.Observe = func(ev Event) {
		if ev.State == Finished && ev.Key > 0 {
			once.Do(runningOps.Done)
		}
	}
	cctx, ccancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(cctx, long) }()
	runningOps.Wait()
	time.Sleep(200 * time.Millisecond)
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
	t.Logf("cancel took %v", took)
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
