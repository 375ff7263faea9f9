package engine

import (
	"testing"
	"unsafe"

	"marsfs/exec/core"
)

// TestTimingRecord keeps what each report measured, as the worker sent
// it: a run in a phase (its Since), one over (its Stored), the rare
// report with both, a large slot, and a later report replacing an
// earlier one (and its moved bytes).
func TestTimingRecord(t *testing.T) {
	const t0 = int64(1_790_000_000_000_000) // µs since the epoch, past 2^32
	cases := []core.Timing{
		{Received: t0, Started: t0 + 5, Phase: core.Loading, Since: t0 + 9, Slot: 1},
		{Received: t0, Started: t0 + 5, Allocated: t0 + 6, Loaded: t0 + 7, Computed: t0 + 8, Stored: t0 + 9, Slot: 3, Fetched: 100},
		{Received: t0 + 1, Started: t0 + 2, Stored: t0 + 4, Phase: core.Storing, Since: t0 + 3, Slot: 5000},
		{Received: t0 + 2, Since: t0 + 3},
	}
	g := &Graph{states: make([]core.OpState, len(cases))}
	// The first op is reported twice: the later report is its record.
	g.noteTiming(&core.Event{Key: 0, Worker: "w9", Timing: &core.Timing{Received: t0 - 50, Started: t0 - 40, Phase: core.Queued, Since: t0 - 50}})
	// The third was first reported having fetched and spilled bytes:
	// its later report has none, and its entry goes.
	g.noteTiming(&core.Event{Key: 2, Worker: "w9", Timing: &core.Timing{Received: t0 - 50, Fetched: 7, Spilled: 3, Since: t0 - 40, Stored: t0 - 30}})
	for k, tm := range cases {
		g.noteTiming(&core.Event{Key: k, Worker: "w2", Timing: &tm})
	}
	if len(g.moved) != 1 {
		t.Errorf("%d ops with moved bytes kept, want 1", len(g.moved))
	}
	for k, want := range cases {
		if want.Slot > maxSlot {
			want.Slot = maxSlot
		}
		got, ok := g.Run(k)
		if !ok || got.Worker != "w2" || got.Timing != want {
			t.Errorf("op %d: %+v %v, want %+v", k, got, ok, want)
		}
	}
	if n := unsafe.Sizeof(opTiming{}); n != 32 {
		t.Errorf("a timing record is %d bytes, want 32", n)
	}
}
