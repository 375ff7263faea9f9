package fs

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPhasesWhileRunning runs a matrix product whose one operand computes
// for a second or more, and reads the operands file while it runs: the
// RUNNING operand shows the phase its worker reported (computing, once it
// has computed for a tick) and the seconds spent in each phase so far; the
// events show the change of phase; once cancelled, nothing runs.
func TestPhasesWhileRunning(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	// One 4000x4000 product, its operands drawn by the product itself: 128
	// GFLOP, over a second even at 80 GFLOP/s (a 2000x2000 one took 0.2 s
	// on a fast CI machine, too short for the watcher's 100 ms tick to be
	// seen between two reads).
	submit(t, c, s, "a = rand(4000, 4000, chunks=4000, seed=1)\nb = rand(4000, 4000, chunks=4000, seed=2)\nc = a @ b\n")
	running := regexp.MustCompile(`(?m)^(\d+) .+ RUNNING \S+ 1 [0-9.]+ computing queued=[0-9.]+ allocating=[0-9.]+ loading=[0-9.]+ computing=([0-9.]+)$`)
	deadline := time.Now().Add(20 * time.Second)
	var ops string
	for {
		ops = read(t, c, s+"/graphs/1/operands")
		if m := running.FindStringSubmatch(ops); m != nil {
			t.Logf("operand line: %s", m[0])
			break
		}
		if strings.HasPrefix(read(t, c, s+"/graphs/1/status"), "SUCCEEDED") || time.Now().After(deadline) {
			t.Fatalf("no RUNNING operand showed its computing phase; operands:\n%s", ops)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.WriteFile(s+"/graphs/1/ctl", []byte("cancel\n")); err != nil {
		t.Fatal(err)
	}
	read(t, c, s+"/graphs/1/wait")
	evs := read(t, c, s+"/graphs/1/events")
	if !regexp.MustCompile(`(?m) RUNNING \S+ 1 loading$`).MatchString(evs) ||
		!regexp.MustCompile(`(?m) RUNNING \S+ 1 computing$`).MatchString(evs) {
		t.Errorf("events show no change of phase:\n%s", evs)
	}
}

// TestPhasesOfFinished checks the phases a finished operand's event shows:
// each in seconds, in order, as many as the run went through.
func TestPhasesOfFinished(t *testing.T) {
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	submit(t, c, s, "y = sqrt(arange(12, chunks=4)).sum()\n")
	read(t, c, s+"/graphs/1/wait")
	evs := read(t, c, s+"/graphs/1/events")
	fin := regexp.MustCompile(`(?m) FINISHED \S+ 1 - queued=[0-9.]+ allocating=[0-9.]+ loading=[0-9.]+ computing=[0-9.]+ storing=[0-9.]+$`)
	if n, want := len(fin.FindAllString(evs, -1)), strings.Count(evs, " FINISHED "); n != want || n == 0 {
		t.Errorf("%d of %d FINISHED events show their phases:\n%s", n, want, evs)
	}
}
