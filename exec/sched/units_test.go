package sched

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestWorkerRunsUnit submits units over a control connection: the worker
// runs a unit's ops in order in one slot, the later ones reading what the
// earlier made, and reports the ends of all in order (the first's start start only if its end did not go out with it); when
// the first fails, the others, missing their input, fail too.
func TestWorkerRunsUnit(t *testing.T) {
	g0 := runtime.NumGoroutine()
	w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 2, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	cc, recv := dialControl(t, w)
	copyArgs := chunk.AssembleArgs{Pieces: []chunk.Piece{{In: 0, Src: []tensor.Slice{{Start: 0, Step: 1, Len: 3}}, Dst: []int{0}}}}
	unit := func(job uint64, first any) []*wire.Msg {
		ms := []*wire.Msg{{Kind: wire.MsgSubmit, Job: job, Key: 0, Attempt: 1, Unit: 3, ID: job*10 + 0,
			Op: &chunk.Op{Kind: "assemble", Shape: []int{3}, DType: tensor.Int64, Args: first}}}
		for k := 1; k < 3; k++ {
			ms = append(ms, &wire.Msg{Kind: wire.MsgSubmit, Job: job, Key: k, Attempt: 1, ID: job*10 + uint64(k),
				Op:     &chunk.Op{Kind: "assemble", Inputs: []int{k - 1}, Shape: []int{3}, DType: tensor.Int64, Args: copyArgs},
				Inputs: []core.Location{{ID: job*10 + uint64(k-1), Worker: "w", NBytes: 24}}, Addrs: []string{w.Addr()}})
		}
		return ms
	}
	if err := cc.SendAll(unit(1, chunk.AssembleArgs{})); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 || got[len(got)-1] != "done 2" {
		m := recv()
		got = append(got, map[uint8]string{wire.MsgStarted: "started", wire.MsgDone: "done", wire.MsgFailed: "failed", wire.MsgCancelled: "cancelled"}[m.Kind]+" "+string(rune('0'+m.Key)))
	}
	if got[0] == "started 0" {
		got = got[1:] // sent unless the end of op 0 went out with it
	}
	if want := "done 0 | done 1 | done 2"; strings.Join(got, " | ") != want {
		t.Errorf("reports %s, want %s", strings.Join(got, " | "), want)
	}
	if w.Store().Len() != 3 {
		t.Errorf("worker holds %d chunks, want 3", w.Store().Len())
	}
	bad := chunk.AssembleArgs{Pieces: []chunk.Piece{{In: 5, Src: []tensor.Slice{{Start: 0, Step: 1, Len: 3}}, Dst: []int{0}}}}
	cc.SendAll(unit(2, bad))
	failed := 0
	for failed < 3 {
		switch m := recv(); m.Kind {
		case wire.MsgFailed:
			if m.Key != failed {
				t.Errorf("op %d failed before op %d", m.Key, failed)
			}
			if m.Final != (m.Key == 0) {
				t.Errorf("op %d failed, final %v: %s", m.Key, m.Final, m.Err)
			}
			failed++
		case wire.MsgDone:
			t.Errorf("op %d of the failed unit done", m.Key)
		}
	}
	cc.Close()
	w.Close()
	checkGoroutines(t, g0)
}
