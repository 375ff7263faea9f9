package fs

import (
	"strconv"
	"strings"
	"testing"
)

// TestPlanFile reads a graph's plan: the header, with each worker's
// projected peak bytes, then one line an operand with its inputs, worker
// and priority (its rank in the run order). The status shows the measured
// peak beside it.
func TestPlanFile(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	submit(t, c, s, "y = sqrt(arange(12, chunks=4)).sum()\n")
	waitSucceeded(t, c, s, "last")
	text := read(t, c, s+"/graphs/1/plan")
	head, body, ok := strings.Cut(text, "\n\n")
	if !ok {
		t.Fatalf("plan has no blank line after its header:\n%s", text)
	}
	n := strings.Count(read(t, c, s+"/graphs/1/operands"), "\n")
	// Three map ops make a float64 partial each, held until the final op
	// that reads them makes the sum: 4 x 8 bytes at the peak.
	if want := "operands " + strconv.Itoa(n) + "\nworkers 1\ninitial local=3\ntransfer_bytes 0\npeak_bytes local=32"; head != want {
		t.Errorf("plan header:\n%s\nwant:\n%s", head, want)
	}
	if st := read(t, c, s+"/graphs/1/status"); !strings.Contains(st, "\nworker_peak_bytes local=") {
		t.Errorf("status has no worker_peak_bytes line:\n%s", st)
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d operand lines, want %d:\n%s", len(lines), n, body)
	}
	for k, l := range lines {
		f := strings.Fields(l)
		if _, err := strconv.Atoi(f[4]); len(f) != 5 || f[0] != strconv.Itoa(k) || f[3] != "local" || err != nil {
			t.Errorf("line %d: %q", k, l)
			continue
		}
		if f[2] != "-" {
			for _, in := range strings.Split(f[2], ",") {
				if i, err := strconv.Atoi(in); err != nil || i >= k {
					t.Errorf("line %d: bad input %q", k, in)
				}
			}
		}
	}
	// Fused: three expr ops (arange, sqrt and the sum's map in one kernel)
	// feed the combine and final sum, chain-fused into one op.
	want := []string{"expr(arange+sqrt+sum.map)", "expr(arange+sqrt+sum.map)", "expr(arange+sqrt+sum.map)", "fuse(sum.combine+sum.final)"}
	for k, l := range lines {
		if f := strings.Fields(l); k >= len(want) || f[1] != want[k] {
			t.Errorf("line %d: %q, want op %v", k, l, want)
		}
	}
}
