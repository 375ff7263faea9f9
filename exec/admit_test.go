package exec

import (
	"context"
	"strings"
	"testing"
	"time"

	"marsfs/tensor"
)

// TestMemQuotaAdmission checks a worker's memory quota: ops wait, a slot
// free, while their inputs and output do not fit beside the running op's,
// then start in priority order; an op that can never fit fails for good at
// once with an error naming the sizes.
func TestMemQuotaAdmission(t *testing.T) {
	w, err := StartWorker(context.Background(), WorkerConfig{Name: "w", Slots: 2, Mem: 1000, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mute := newMutePeer(t) // accepts connections, never answers
	defer mute.Close()
	cc, recv := dialControl(t, w)
	defer cc.close()
	op := func(n int, inputs ...int) *tensor.ChunkOp {
		return &tensor.ChunkOp{Kind: "assemble", Inputs: inputs, Shape: []int{n}, DType: tensor.Float64, Args: tensor.AssembleArgs{}}
	}
	// Op 0 needs 400 + 400 bytes and blocks on its input's peer.
	cc.send(&ctlMsg{Kind: msgSubmit, Job: 1, Key: 0, Attempt: 1, Priority: 0, Op: op(50, 0), ID: 10,
		Inputs: []Location{{ID: 5, Worker: "peer", NBytes: 400}}, Addrs: []string{mute.Addr()}})
	if m := recv(); m.Kind != msgStarted || m.Key != 0 {
		t.Fatalf("got %+v", m)
	}
	// Ops 1 and 2 need 600 bytes each: neither fits beside op 0, nor
	// beside each other. Op 2 is the more urgent.
	cc.send(&ctlMsg{Kind: msgSubmit, Job: 1, Key: 1, Attempt: 1, Priority: 7, Op: op(75), ID: 11})
	cc.send(&ctlMsg{Kind: msgSubmit, Job: 1, Key: 2, Attempt: 1, Priority: 3, Op: op(75), ID: 12})
	// Op 3 needs 8000 bytes: it can never run.
	cc.send(&ctlMsg{Kind: msgSubmit, Job: 1, Key: 3, Attempt: 1, Priority: 9, Op: op(1000), ID: 13})
	cc.send(&ctlMsg{Kind: msgStatus, Seq: 1})
	var failed ctlMsg
	for {
		m := recv()
		if m.Kind == msgFailed {
			failed = m
			continue
		}
		if m.Kind != msgStatusReply {
			t.Fatalf("got %+v", m)
		}
		if !strings.Contains(m.Text, "running 1\nqueued 2\n") || statusField(t, m.Text, "quota_used") != 800 ||
			statusField(t, m.Text, "quota_limit") != 1000 {
			t.Errorf("ops not held back by the quota:\n%s", m.Text)
		}
		break
	}
	if failed.Kind != msgFailed {
		failed = recv()
	}
	if failed.Kind != msgFailed || failed.Key != 3 || !failed.Final {
		t.Fatalf("the op that cannot fit: %+v", failed)
	}
	for _, s := range []string{"needs 8000 bytes", "output 8000", "--mem 1000"} {
		if !strings.Contains(failed.Err, s) {
			t.Errorf("error %q does not say %q", failed.Err, s)
		}
	}
	// Once op 0 ends, op 2 runs before op 1. The starts tell the order:
	// an op's start goes out before it runs, so before the op after it is
	// admitted, while two slots' ends may go out in either order.
	cc.send(&ctlMsg{Kind: msgCancel, Job: 1, Key: 0, Attempt: 1})
	var started []int
	for done := 0; done < 2; {
		m := recv()
		switch m.Kind {
		case msgDone:
			done++
		case msgStarted:
			started = append(started, m.Key)
		case msgCancelled:
		default:
			t.Fatalf("got %+v", m)
		}
	}
	if len(started) != 2 || started[0] != 2 || started[1] != 1 {
		t.Errorf("ops started in order %v, want [2 1]", started)
	}
}

// TestMemQuotaFailsGraph runs a graph with an op too large for the
// workers' memory quota: the graph fails, without retries, with an error
// naming the sizes, rather than wait for ever.
func TestMemQuotaFailsGraph(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc := startTestCluster(t, WorkerConfig{Name: "w1", Slots: 2, Mem: 3 << 19})
	e := NewEngine(tc.s)
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
	gr, err := sess.start("# too big", nil, job.Graph, stages{})
	if err != nil {
		t.Fatal(err)
	}
	st := gr.Wait(ctx)
	if st.State != Failed {
		t.Fatalf("graph %v, want failed", st.State)
	}
	if msg := gr.Err(); !strings.Contains(msg, "needs 3145728 bytes") || !strings.Contains(msg, "--mem 1572864") {
		t.Errorf("graph error %q does not name the sizes", msg)
	}
}
