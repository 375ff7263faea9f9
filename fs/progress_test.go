package fs

import (
	"testing"
	"time"

	"marsfs/exec/engine"
)

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		done, total int
		bytes       int64
		work        int64 // of 100
		elapsed     time.Duration
		state       engine.GraphState
		want        string
	}{
		{0, 1000, 0, 0, 0, engine.RunningGraph,
			"[------------------------------] 0.0% 0/1000 operands 0B/8.0MiB 0.0s elapsed ? left RUNNING\n"},
		// The time left goes by the work: 400 of 1000 operands done, but
		// 80% of the work (the map steps of a reduction), in 2 s.
		{400, 1000, 3 << 20, 80, 2 * time.Second, engine.RunningGraph,
			"[############------------------] 40.0% 400/1000 operands 3.0MiB/8.0MiB 2.0s elapsed 0.5s left RUNNING\n"},
		// Without the work known, by the operands.
		{400, 1000, 3 << 20, -1, 2 * time.Second, engine.RunningGraph,
			"[############------------------] 40.0% 400/1000 operands 3.0MiB/8.0MiB 2.0s elapsed 3.0s left RUNNING\n"},
		{1000, 1000, 8 << 20, 100, 5 * time.Second, engine.Succeeded,
			"[##############################] 100.0% 1000/1000 operands 8.0MiB/8.0MiB 5.0s elapsed 0.0s left SUCCEEDED\n"},
		{3, 1000, 24, 1, 1500 * time.Millisecond, engine.Failed,
			"[------------------------------] 0.3% 3/1000 operands 24B/8.0MiB 1.5s elapsed 0.0s left FAILED\n"},
	} {
		work, total := tc.work, int64(100)
		if work < 0 {
			work, total = 0, 0
		}
		if got := progressLine(tc.done, tc.total, tc.bytes, 8<<20, work, total, tc.elapsed, tc.state); got != tc.want {
			t.Errorf("progress %d/%d:\n got %q\nwant %q", tc.done, tc.total, got, tc.want)
		}
	}
}
