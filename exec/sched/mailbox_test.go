package sched

import (
	"testing"

	"marsfs/exec/wire"
)

// TestMailboxClosed: once its job has ended, a mailbox hands back what was
// not taken and refuses what a connection reader, which looked the job up
// before it ended, brings after. Before it was closed, such a report went
// into a mailbox nobody read again, and the chunk it reported was never
// freed (TestWorkerProcessCrash: a survivor held a chunk more than the
// result once).
func TestMailboxClosed(t *testing.T) {
	mb := newMailbox()
	done := func(key int) input {
		return input{worker: "w1", msg: wire.Msg{Kind: wire.MsgDone, Key: key, ID: uint64(100 + key)}}
	}
	if !mb.putAll([]input{done(1)}) {
		t.Fatal("an open mailbox refused a report")
	}
	left := mb.close()
	if len(left) != 1 || left[0].msg.Key != 1 {
		t.Fatalf("close handed back %v, want the report not taken", left)
	}
	if mb.putAll([]input{done(2)}) {
		t.Fatal("a closed mailbox took a report: its chunk would never be freed")
	}
	if got := mb.take(); len(got) != 0 {
		t.Fatalf("a closed mailbox holds %v", got)
	}
}
