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
		elapsed     time.Duration
		state       engine.GraphState
		want        string
	}{
		{0, 1000, 0, 0, engine.RunningGraph,
			"[------------------------------] 0.0% 0/1000 operands 0B/8.0MiB 0.0s elapsed ? left RUNNING\n"},
		{400, 1000, 3 << 20, 2 * time.Second, engine.RunningGraph,
			"[############------------------] 40.0% 400/1000 operands 3.0MiB/8.0MiB 2.0s elapsed 3.0s left RUNNING\n"},
		{1000, 1000, 8 << 20, 5 * time.Second, engine.Succeeded,
			"[##############################] 100.0% 1000/1000 operands 8.0MiB/8.0MiB 5.0s elapsed 0.0s left SUCCEEDED\n"},
		{3, 1000, 24, 1500 * time.Millisecond, engine.Failed,
			"[------------------------------] 0.3% 3/1000 operands 24B/8.0MiB 1.5s elapsed 0.0s left FAILED\n"},
	} {
		if got := progressLine(tc.done, tc.total, tc.bytes, 8<<20, tc.elapsed, tc.state); got != tc.want {
			t.Errorf("progress %d/%d:\n got %q\nwant %q", tc.done, tc.total, got, tc.want)
		}
	}
}
