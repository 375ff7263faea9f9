package worker

import (
	"fmt"

	"marsfs/tensor/kernel"
)

// need is the memory task t holds while it runs: its inputs, its output and
// the scratch its kernel draws blocks into.
func (t *task) need() int64 {
	n := int64(t.op.NBytes()) + kernel.ScratchBytes(t.op)
	for _, in := range t.inputs {
		n += in.NBytes
	}
	return n
}

// refuse returns the error task t fails with when it can never run under
// the worker's memory quota (WorkerConfig.Mem): its inputs and output alone
// exceed it. The worker refuses it when submitted, rather than let it wait
// for ever.
func (w *Worker) refuse(t *task) error {
	need := t.need()
	if w.cfg.Mem <= 0 || need <= w.cfg.Mem {
		return nil
	}
	out, scratch := int64(t.op.NBytes()), kernel.ScratchBytes(t.op)
	return fmt.Errorf("operand %d (%s) needs %d bytes (inputs %d + output %d + scratch %d), more than the worker's memory quota (--mem %d)",
		t.Key, t.op.Kind, need, need-out-scratch, out, scratch, w.cfg.Mem)
}

// admit reports whether the task at the head of the queue may start under
// the memory quota: when its need and the needs of the running tasks fit,
// besides the chunks the store holds in the worker's heap. A worker that
// runs nothing starts it anyway (refuse turned away what cannot fit at
// all), so that held chunks never stall it. w.mu is held.
func (w *Worker) admit(t *task) bool {
	if w.cfg.Mem <= 0 || len(w.running) == 0 {
		return true
	}
	used := t.need()
	if _, shared := w.store.(allocStore); !shared {
		used += w.store.Bytes() // a heap store's chunks are in private memory
	}
	for _, r := range w.running {
		used += r.need()
	}
	return used <= w.cfg.Mem
}

// quotaUsed is the memory the running tasks hold. w.mu is held.
func (w *Worker) quotaUsed() int64 {
	var used int64
	for _, r := range w.running {
		used += r.need()
	}
	return used
}
