package sched

import (
	"context"
	"strings"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestMemQuotaAdmission checks a worker's memory quota: ops wait, a slot
// free, while their inputs and output do not fit beside the running op's,
// then start in priority order; an op that can never fit fails for good at
// once with an error naming the sizes.
func TestMemQuotaAdmission(t *testing.T) {
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 2, Mem: 1000, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mute := newMutePeer(t) // accepts connections, never answers
	defer mute.Close()
	cc, recv := dialControl(t, w)
	defer cc.Close()
	op := func(n int, inputs ...int) *chunk.Op {
		return &chunk.Op{Kind: "assemble", Inputs: inputs, Shape: []int{n}, DType: tensor.Float64, Args: chunk.AssembleArgs{}}
	}
	// Op 0 needs 400 + 400 bytes and blocks on its input's peer.
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 0, Attempt: 1, Priority: 0, Op: op(50, 0), ID: 10,
		Inputs: []core.Location{{ID: 5, Worker: "peer", NBytes: 400}}, Addrs: []string{mute.Addr()}})
	if m := recv(); m.Kind != wire.MsgStarted || m.Key != 0 {
		t.Fatalf("got %+v", m)
	}
	// Ops 1 and 2 need 600 bytes each: neither fits beside op 0, nor
	// beside each other. Op 2 is the more urgent.
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 1, Attempt: 1, Priority: 7, Op: op(75), ID: 11})
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 2, Attempt: 1, Priority: 3, Op: op(75, 0), ID: 12,
		Inputs: []core.Location{{ID: 6, Worker: "peer"}}, Addrs: []string{mute.Addr()}})
	// Op 3 needs 8000 bytes: it can never run.
	cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: 3, Attempt: 1, Priority: 9, Op: op(1000), ID: 13})
	cc.Send(&wire.Msg{Kind: wire.MsgStatus, Seq: 1})
	var failed wire.Msg
	for {
		m := recv()
		if m.Kind == wire.MsgFailed {
			failed = m
			continue
		}
		if m.Kind != wire.MsgStatusReply {
			t.Fatalf("got %+v", m)
		}
		if !strings.Contains(m.Text, "running 1\nqueued 2\n") || statusField(t, m.Text, "quota_used") != 800 ||
			statusField(t, m.Text, "quota_limit") != 1000 {
			t.Errorf("ops not held back by the quota:\n%s", m.Text)
		}
		break
	}
	if failed.Kind != wire.MsgFailed {
		failed = recv()
	}
	if failed.Kind != wire.MsgFailed || failed.Key != 3 || !failed.Final {
		t.Fatalf("the op that cannot fit: %+v", failed)
	}
	for _, s := range []string{"needs 8000 bytes", "output 8000", "--mem 1000"} {
		if !strings.Contains(failed.Err, s) {
			t.Errorf("error %q does not say %q", failed.Err, s)
		}
	}
	// Once op 0 ends, op 2 runs before op 1 and, blocked on the peer too,
	// keeps op 1 queued: had op 1 been admitted first it would have run
	// (it reads nothing) and left op 2 queued. The first op to start after
	// op 0's cancel is therefore op 2, whose "started" report says so.
	cc.Send(&wire.Msg{Kind: wire.MsgCancel, Job: 1, Key: 0, Attempt: 1})
	for {
		m := recv()
		if (m.Kind == wire.MsgStarted || m.Kind == wire.MsgDone) && m.Key == 1 {
			t.Fatalf("op 1 ran before op 2 ended: %+v", m)
		}
		if m.Kind == wire.MsgStarted && m.Key == 2 {
			break
		}
	}
	cc.Send(&wire.Msg{Kind: wire.MsgStatus, Seq: 2})
	if m := recv(); m.Kind != wire.MsgStatusReply || !strings.Contains(m.Text, "running 1\nqueued 1\n") {
		t.Fatalf("op 1 did not wait behind op 2: %+v", m)
	}
	cc.Send(&wire.Msg{Kind: wire.MsgCancel, Job: 1, Key: 2, Attempt: 1})
	for {
		m := recv()
		if m.Kind == wire.MsgDone {
			if m.Key != 1 {
				t.Errorf("op %d done, want op 1", m.Key)
			}
			break
		}
		if m.Kind != wire.MsgStarted && m.Kind != wire.MsgCancelled {
			t.Fatalf("got %+v", m)
		}
	}
}

// TestMemQuotaFailsGraph runs a graph with an op too large for the
// workers' memory quota: the graph fails, without retries, with an error
// naming the sizes, rather than wait for ever.
func TestMemQuotaFailsGraph(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc := startTestCluster(t, worker.Config{Name: "w1", Slots: 2, Mem: 3 << 19})
	e := engine.New(tc.s)
	defer e.Close()
	sess, err := e.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	// 1 MiB chunks: the full fits (1 MiB), the adds (3 MiB) do not.
	job := addChainsJob(1, 1<<17, 1<<30)
	job.Graph.Outputs = []tensor.TiledTensor{{Name: "r", Shape: []int{1 << 17}, DType: tensor.Float64, Chunks: [][]int{{1 << 17}},
		Keys: []uint64{uint64(len(job.Graph.Ops) - 1)}}}
	gr, err := sess.Start("# too big", nil, job.Graph, engine.Stages{})
	if err != nil {
		t.Fatal(err)
	}
	st := gr.Wait(ctx)
	if st.State != engine.Failed {
		t.Fatalf("graph %v, want failed", st.State)
	}
	if msg := gr.Err(); !strings.Contains(msg, "needs 3145728 bytes") || !strings.Contains(msg, "--mem 1572864") {
		t.Errorf("graph error %q does not name the sizes", msg)
	}
}
