package sched

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// zerosJob is n independent "assemble" ops with no pieces (zero chunks),
// all kept.
func zerosJob(n int) *core.Job {
	g := &chunk.Graph{}
	job := &core.Job{Keep: map[uint64]bool{}}
	for k := 0; k < n; k++ {
		g.Ops = append(g.Ops, &chunk.Op{Key: k, Kind: "assemble", Shape: []int{3}, DType: tensor.Int64, Args: chunk.AssembleArgs{}})
		job.IDs = append(job.IDs, uint64(7000+k))
		job.Keep[uint64(7000+k)] = true
	}
	job.Graph = g
	return job
}

// TestRunWaitsForWorkers runs a job on a scheduler without workers: it
// fails with ctx's error when nobody joins in time, and succeeds once a
// worker joins.
func TestRunWaitsForWorkers(t *testing.T) {
	g0 := runtime.NumGoroutine()
	s, err := New(context.Background(), Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err = s.Run(ctx, zerosJob(3))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run without workers: %v", err)
	}
	errc := make(chan error, 1)
	job := zerosJob(3)
	go func() { errc <- s.Run(context.Background(), job) }()
	// The worker joins once the job waits for one.
	if !waitChange(s, 5*time.Second, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.jobs) == 1 }) {
		t.Fatal("the job did not begin")
	}
	w, err := worker.Start(context.Background(), worker.Config{Name: "late", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not finish after a worker joined")
	}
	for _, id := range job.IDs {
		if s.Where(id) != "late" {
			t.Errorf("chunk %d on %q", id, s.Where(id))
		}
	}
	if w.Store().Len() != 3 {
		t.Errorf("worker holds %d chunks, want 3", w.Store().Len())
	}
	w.Close()
	s.Close()
	checkGoroutines(t, g0)
}

// TestOpFailure runs a job whose op's kernel rejects its arguments: the
// error is deterministic, so the op is FATAL at once with its successor, and
// the job's chunks are all freed.
func TestOpFailure(t *testing.T) {
	tc := newTestCluster(t, 2, false)
	job := zerosJob(3)
	g := job.Graph
	bad := chunk.AssembleArgs{Pieces: []chunk.Piece{{In: 5, Src: []tensor.Slice{{Start: 0, Step: 1, Len: 3}}, Dst: []int{0}}}}
	g.Ops = append(g.Ops, &chunk.Op{Key: 3, Kind: "assemble", Inputs: []int{0}, Shape: []int{3}, DType: tensor.Int64, Args: bad})
	g.Ops = append(g.Ops, &chunk.Op{Key: 4, Kind: "assemble", Inputs: []int{3}, Shape: []int{3}, DType: tensor.Int64, Args: chunk.AssembleArgs{}})
	job.IDs = append(job.IDs, 7003, 7004)
	var mu sync.Mutex
	var states []string
	job.Observe = func(ev core.Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Key >= 3 && (ev.State == core.Ready || ev.State == core.Fatal) {
			states = append(states, ev.State.String()+":"+ev.Err)
		}
	}
	err := tc.s.Run(context.Background(), job)
	if err == nil || !strings.Contains(err.Error(), "operand 3 (assemble) failed") || !strings.Contains(err.Error(), "after 1 attempt:") ||
		!strings.Contains(err.Error(), "piece reads input 5 of 1") {
		t.Fatalf("run: %v", err)
	}
	mu.Lock()
	got := strings.Join(states, " | ")
	mu.Unlock()
	want := "READY: | FATAL:assemble: piece reads input 5 of 1 | FATAL:input operand 3 failed"
	if got != want {
		t.Errorf("transitions\n got %s\nwant %s", got, want)
	}
	if n, _ := tc.held(); n != 0 {
		t.Errorf("failed job left %d chunks", n)
	}
	for _, id := range job.IDs {
		if s := tc.s.Where(id); s != "" {
			t.Errorf("chunk %d of a failed job located on %s", id, s)
		}
	}
}

// TestKernelPanic runs an op whose arguments make its kernel panic: the op
// fails, the worker lives on.
func TestKernelPanic(t *testing.T) {
	tc := newTestCluster(t, 1, false)
	job := zerosJob(1)
	outside := chunk.AssembleArgs{Pieces: []chunk.Piece{{In: 0, Src: []tensor.Slice{{Start: 100, Step: 1, Len: 3}}, Dst: []int{0}}}}
	job.Graph.Ops = append(job.Graph.Ops, &chunk.Op{Key: 1, Kind: "assemble", Inputs: []int{0}, Shape: []int{3}, DType: tensor.Int64, Args: outside})
	job.IDs = append(job.IDs, 7001)
	err := tc.s.Run(context.Background(), job)
	if err == nil || !strings.Contains(err.Error(), "assemble kernel panicked") {
		t.Fatalf("run: %v", err)
	}
	if err := tc.s.Run(context.Background(), zerosJob(2)); err != nil {
		t.Fatalf("worker unusable after a kernel panic: %v", err)
	}
}

// TestStoredMissing runs a job naming a chunk nobody holds.
func TestStoredMissing(t *testing.T) {
	tc := newTestCluster(t, 1, false)
	job := chainsJob(1, 2, 4242)
	err := tc.s.Run(context.Background(), job)
	if err == nil || !strings.Contains(err.Error(), "stored chunk 4242 is gone") {
		t.Fatalf("run: %v", err)
	}
}

// TestWorkerStatus checks the worker's status text and the worker list.
func TestWorkerStatus(t *testing.T) {
	tc := newTestCluster(t, 2, false)
	if err := tc.s.Put(context.Background(), 1, ramp(tensor.Float64, []int{10}, 1)); err != nil {
		t.Fatal(err)
	}
	ws := tc.s.Workers()
	if len(ws) != 2 || ws[0].Name != "w1" || ws[1].Name != "w2" {
		t.Fatalf("workers %+v", ws)
	}
	for _, w := range ws {
		if w.State != "alive" || !w.Connected || w.Slots != 2 || w.Addr == "" || w.Gossip == "" {
			t.Errorf("worker %+v", w)
		}
	}
	text, ok := tc.s.WorkerStatus(tc.s.Where(1))
	if !ok {
		t.Fatal("no status")
	}
	for _, want := range []string{"slots 2\n", "running 0\n", "queued 0\n", "chunks 1\n", "bytes 80\n", "pid "} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	if _, ok := tc.s.WorkerStatus("nobody"); ok {
		t.Error("status of an unknown worker")
	}
	if _, _, err := tc.s.Fetch(context.Background(), 99); err == nil {
		t.Error("fetch of an unknown chunk")
	}
	if names := len(tc.s.Members()); names != 3 {
		t.Errorf("%d members, want 3", names)
	}
}

// TestWorkerLeaves stops a worker during a long job: the scheduler notices
// at once (its connection drops), recomputes the chunks lost with it on the
// other worker (whole chains of freed inputs), and the job succeeds with only
// its kept chunks left, all on the survivor.
func TestWorkerLeaves(t *testing.T) {
	tc := newTestCluster(t, 2, false)
	ctx := context.Background()
	victim, other := tc.workers[0], tc.workers[1]
	job := chainsJob(4, 1500, 0)
	started := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	recomputed, onVictim := 0, 0
	job.Observe = func(ev core.Event) {
		mu.Lock()
		if ev.State == core.Finished && ev.Worker == victim.Name() {
			if onVictim++; onVictim == 200 {
				once.Do(func() { close(started) })
			}
		}
		if (ev.State == core.Ready || ev.State == core.Unscheduled) && ev.Err != "" {
			recomputed++
		}
		mu.Unlock()
	}
	errc := make(chan error, 1)
	go func() { errc <- tc.s.Run(ctx, job) }()
	select {
	case <-started:
	case err := <-errc:
		t.Fatalf("run ended before %s ran much: %v", victim.Name(), err)
	}
	victim.Close()
	begin := time.Now()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		t.Logf("job done %v after the departure", time.Since(begin))
	case <-time.After(20 * time.Second):
		t.Fatal("run did not end after a worker left")
	}
	mu.Lock()
	if recomputed == 0 {
		t.Error("nothing was recomputed")
	}
	t.Logf("%d ops to run again", recomputed)
	mu.Unlock()
	for id := range job.Keep {
		if w := tc.s.Where(id); w != other.Name() {
			t.Errorf("kept chunk %d on %q", id, w)
		}
		a, _, err := tc.s.Fetch(ctx, id)
		if err != nil || len(a.Data) != 32 {
			t.Fatalf("fetch %d: %v", id, err)
		}
	}
	// The status request travels behind the frees on the control connection.
	text, ok := tc.s.WorkerStatus(other.Name())
	if !ok {
		t.Fatal("no status from the survivor")
	}
	if n := statusField(t, text, "chunks"); n != len(job.Keep) {
		t.Errorf("surviving worker holds %d chunks, want the %d kept", n, len(job.Keep))
	}
	if st := waitMember(tc.s, 3*time.Second, victim.Name(), "left"); st != "left" {
		t.Fatalf("departed worker is %q", st)
	}
}

// TestCancelRunningTask checks on a worker alone that a cancel reaches a
// task blocked while loading an input from a peer that never answers.
func TestCancelRunningTask(t *testing.T) {
	g0 := runtime.NumGoroutine()
	s, err := New(context.Background(), Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	mute := newMutePeer(t) // accepts connections, never answers
	cc, recv := dialControl(t, w)
	op := &chunk.Op{Kind: "assemble", Inputs: []int{0}, Shape: []int{1}, DType: tensor.Float64, Args: chunk.AssembleArgs{}}
	submit := func(key int) {
		err := cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: key, Attempt: 1, Op: op, ID: uint64(10 + key),
			Inputs: []core.Location{{ID: 5, Worker: "peer", NBytes: 8}}, Addrs: []string{mute.Addr()}})
		if err != nil {
			t.Fatal(err)
		}
	}
	submit(0) // runs, blocked on the mute peer
	submit(1) // queued behind it: one slot
	expect := func(kind uint8, key int) {
		t.Helper()
		if m := recv(); m.Kind != kind || m.Key != key {
			t.Fatalf("got message %d for op %d, want %d for %d", m.Kind, m.Key, kind, key)
		}
	}
	expect(wire.MsgStarted, 0)
	begin := time.Now()
	cc.Send(&wire.Msg{Kind: wire.MsgCancel, Job: 1, Key: 1, Attempt: 1})
	expect(wire.MsgCancelled, 1)
	cc.Send(&wire.Msg{Kind: wire.MsgCancel, Job: 1, Key: 0, Attempt: 1})
	expect(wire.MsgCancelled, 0)
	if d := time.Since(begin); d > time.Second {
		t.Errorf("cancel took %v", d)
	}
	if w.Store().Len() != 0 {
		t.Errorf("worker holds %d chunks", w.Store().Len())
	}
	cc.Close()
	mute.Close()
	w.Close()
	s.Close()
	checkGoroutines(t, g0)
}

// TestRunWorkerReturns checks that RunWorker leaves and returns when its
// context ends, leaving no goroutine behind.
func TestRunWorkerReturns(t *testing.T) {
	g0 := runtime.NumGoroutine()
	s, err := New(context.Background(), Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- worker.Run(ctx, worker.Config{Name: "rw", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true})
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := s.WaitWorkers(wctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	s.Close()
	checkGoroutines(t, g0)
	if err := worker.Run(context.Background(), worker.Config{Name: "bad", Listen: "127.0.0.1:notaport"}); err == nil {
		t.Error("worker started on a bad address")
	}
}

// TestMemBound checks that a worker with a memory bound keeps an op queued,
// though a slot is free, while its output would not fit beside the running
// op's.
func TestMemBound(t *testing.T) {
	g0 := runtime.NumGoroutine()
	s, err := New(context.Background(), Config{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Join: []string{s.GossipAddr()}, Slots: 2, Mem: 1000, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	mute := newMutePeer(t) // accepts connections, never answers
	cc, recv := dialControl(t, w)
	big := func(inputs []int) *chunk.Op {
		return &chunk.Op{Kind: "assemble", Inputs: inputs, Shape: []int{75}, DType: tensor.Float64, Args: chunk.AssembleArgs{}} // 600 bytes
	}
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 0, Attempt: 1, Op: big([]int{0}), ID: 10,
		Inputs: []core.Location{{ID: 5, Worker: "peer"}}, Addrs: []string{mute.Addr()}})
	if m := recv(); m.Kind != wire.MsgStarted {
		t.Fatalf("first op: %+v", m)
	}
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 1, Attempt: 1, Op: big(nil), ID: 11})
	cc.Send(&wire.Msg{Kind: wire.MsgStatus, Seq: 1})
	m := recv()
	if m.Kind != wire.MsgStatusReply {
		t.Fatalf("status: %+v", m)
	}
	if !strings.Contains(m.Text, "running 1\nqueued 1\n") {
		t.Errorf("second op not held back by the memory bound:\n%s", m.Text)
	}
	cc.Send(&wire.Msg{Kind: wire.MsgCancel, Job: 1, Key: 0, Attempt: 1})
	got := map[uint8]int{}
	for {
		_, cancelled := got[wire.MsgCancelled]
		_, done := got[wire.MsgDone]
		if cancelled && done {
			break
		}
		m := recv()
		got[m.Kind] = m.Key
	}
	if k, ok := got[wire.MsgCancelled]; !ok || k != 0 {
		t.Errorf("messages %v: op 0 not cancelled", got)
	}
	if k, ok := got[wire.MsgDone]; !ok || k != 1 {
		t.Errorf("messages %v: op 1 not done", got)
	}
	cc.Close()
	mute.Close()
	w.Close()
	s.Close()
	checkGoroutines(t, g0)
}

// TestThroughput measures small-op throughput and bulk transfer speed.
func TestThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	tc := newTestCluster(t, 2, false)
	ctx := context.Background()
	job := chainsJob(8, 1000, 0)
	begin := time.Now()
	if err := tc.s.Run(ctx, job); err != nil {
		t.Fatal(err)
	}
	d := time.Since(begin)
	t.Logf("%d tiny ops in %v: %.0f ops/s", len(job.Graph.Ops), d, float64(len(job.Graph.Ops))/d.Seconds())
	a := ramp(tensor.Float64, []int{8 << 20}, 1) // 64 MiB
	begin = time.Now()
	if err := tc.s.Put(ctx, 1, a); err != nil {
		t.Fatal(err)
	}
	put := time.Since(begin)
	begin = time.Now()
	b, _, err := tc.s.Fetch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	fetch := time.Since(begin)
	if !bytes.Equal(a.Data, b.Data) {
		t.Fatal("fetched chunk differs")
	}
	mb := float64(len(a.Data)) / (1 << 20)
	t.Logf("64 MiB chunk: put %.0f MiB/s, fetch %.0f MiB/s", mb/put.Seconds(), mb/fetch.Seconds())
}

// TestSecretKey runs a cluster with encrypted gossip: a worker with the key
// joins and runs a job, one with another key cannot join.
func TestSecretKey(t *testing.T) {
	g0 := runtime.NumGoroutine()
	key := []byte("marsfs-test-key-0123456789abcdef")
	s, err := New(context.Background(), Config{Fast: true, SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.Start(context.Background(), worker.Config{Name: "good", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true, SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	bad, err := worker.Start(ctx, worker.Config{Name: "bad", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true,
		SecretKey: []byte("another-key-of-32-bytes-00000000")})
	cancel()
	if err == nil {
		bad.Close()
		t.Error("worker with the wrong key joined")
	}
	if err := s.Run(context.Background(), zerosJob(2)); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Members() {
		if m.Name == "bad" {
			t.Errorf("member table lists %+v", m)
		}
	}
	w.Close()
	s.Close()
	checkGoroutines(t, g0)
}

// TestReconnect breaks the scheduler's control connection to a live worker:
// the scheduler dials it again and jobs run on it.
func TestReconnect(t *testing.T) {
	tc := newTestCluster(t, 1, false)
	lost := tc.s.workersLost.Load()
	tc.s.mu.Lock()
	tc.s.workers["w1"].cc.Close()
	tc.s.mu.Unlock()
	// The scheduler forgets the worker before WaitWorkers looks.
	if !waitChange(tc.s, 5*time.Second, func() bool { return tc.s.workersLost.Load() > lost }) {
		t.Fatal("the scheduler did not see its connection break")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	begin := time.Now()
	if err := tc.s.WaitWorkers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("reconnected after %v", time.Since(begin))
	job := zerosJob(2)
	if err := tc.s.Run(ctx, job); err != nil {
		t.Fatal(err)
	}
	if w := tc.s.Where(job.IDs[0]); w != "w1" {
		t.Errorf("chunk on %q", w)
	}
}

// TestCloseDuringRun closes the scheduler under a running job: the job
// ends promptly with an error.
func TestCloseDuringRun(t *testing.T) {
	tc := newTestCluster(t, 2, false)
	job := chainsJob(2, 5000, 0)
	started := make(chan struct{})
	var once sync.Once
	job.Observe = func(ev core.Event) {
		if ev.State == core.Finished {
			once.Do(func() { close(started) })
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- tc.s.Run(context.Background(), job) }()
	<-started
	begin := time.Now()
	tc.s.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("run succeeded on a closed scheduler")
		}
		t.Logf("%v after %v", err, time.Since(begin))
	case <-time.After(5 * time.Second):
		t.Fatal("run did not end")
	}
	if err := tc.s.Run(context.Background(), zerosJob(1)); err == nil {
		t.Error("run on a closed scheduler")
	}
}

// TestNoWorkerFailsJob runs a job whose only worker dies partway: after
// NoWorkerWait with nobody to run it, the job fails saying so rather than
// stay RUNNING for ever, and a job submitted to the empty cluster then
// fails the same way.
func TestNoWorkerFailsJob(t *testing.T) {
	g0 := runtime.NumGoroutine()
	s, err := New(context.Background(), Config{Fast: true, NoWorkerWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close(); checkGoroutines(t, g0) }()
	w, err := worker.Start(context.Background(), worker.Config{Name: "only", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	job := chainsJob(2, 4000, 0)
	started := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var waiting, notes []string
	job.Observe = func(ev core.Event) {
		if ev.Key == core.NoteKey {
			mu.Lock()
			notes = append(notes, ev.Err)
			mu.Unlock()
		}
		if ev.State == core.Finished && ev.Key >= 0 {
			once.Do(func() { close(started) })
		}
	}
	job.Waiting = func(why string) {
		mu.Lock()
		waiting = append(waiting, why)
		mu.Unlock()
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Run(context.Background(), job) }()
	select {
	case <-started:
	case err := <-errc:
		t.Fatalf("run ended before the worker ran anything: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("nothing ran")
	}
	w.Close()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "no worker to run the graph") {
			t.Fatalf("run after the only worker died: %v", err)
		}
		t.Log(err)
	case <-time.After(15 * time.Second):
		t.Fatal("run still going with no worker")
	}
	// While it waited, the job said so, and its events tell why.
	mu.Lock()
	if len(waiting) == 0 || !strings.HasPrefix(waiting[0], "for a worker: none connected since") {
		t.Errorf("the job told it waited with %q", waiting)
	}
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, "worker only ") || !strings.Contains(all, "waiting for a worker") {
		t.Errorf("the job's notes:\n%s", all)
	}
	mu.Unlock()
	begin := time.Now()
	err = s.Run(context.Background(), zerosJob(2))
	if err == nil || !strings.Contains(err.Error(), "no worker to run the graph") {
		t.Fatalf("run on the empty cluster: %v", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("run on the empty cluster failed after %v, want about 300ms", d)
	}
}
