package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"marsfs/fs"
)

// TestSecondSchedulerKeepsNumbersApart is the reproduction of issue 20:
// `up` and a `marsfs scheduler --join` beside it share up's workers. A
// graph on the second scheduler once overwrote a kept tensor of the first
// (each numbered chunks from 1, and the workers key chunks by number):
// a.sum() gave 695005750000 instead of 1999999000000, and SUCCEEDED. With
// a space of numbers a scheduler, both tensors stay whole, and the two
// schedulers' sessions have different numbers and names.
func TestSecondSchedulerKeepsNumbersApart(t *testing.T) {
	bin := build(t)
	up := startUp(t, bin, "--workers", "2")
	second := startServer(t, bin, "scheduler", "--gossip", "127.0.0.1:0", "--join", up.join)

	c1, err := fs.Dial(up.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := fs.Dial(second.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	waitFor(t, c2, "/cluster/members", 20*time.Second, func(s string) bool {
		return strings.Count(s, " worker alive") == 2
	})
	// Wait for the second scheduler's control connections to the workers.
	waitFor(t, c2, "/cluster/workers/worker-1/status", 20*time.Second, func(s string) bool { return s != "" })
	waitFor(t, c2, "/cluster/workers/worker-2/status", 20*time.Second, func(s string) bool { return s != "" })

	s1 := newSession(t, c1)
	submitOK(t, c1, s1, "a = arange(2000000, chunks=100000)\n")
	s2 := newSession(t, c2)
	if s1 == s2 {
		t.Errorf("both schedulers made session %s", s1)
	}
	// More chunks than a has, with other values, under what would have
	// been the same numbers.
	submitOK(t, c2, s2, "b = arange(2000000, chunks=50000) * 7 + 3\n")
	submitOK(t, c1, s1, "t = a.sum()\n")
	if got := strings.TrimSpace(readText(t, c1, s1+"/tensors/t/text")); got != "1999999000000" {
		t.Errorf("a.sum() on the first scheduler after a graph on the second = %s, want 1999999000000", got)
	}
	submitOK(t, c2, s2, "u = b.sum()\n")
	if got := strings.TrimSpace(readText(t, c2, s2+"/tensors/u/text")); got != "13999999000000" {
		t.Errorf("b.sum() on the second scheduler = %s, want 13999999000000", got)
	}
	members := readText(t, c1, "/cluster/members")
	if n := strings.Count(members, " scheduler alive"); n != 2 {
		t.Errorf("%d schedulers alive in the first's member table, want 2:\n%s", n, members)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(members), "\n") {
		name := strings.Fields(line)[0]
		if names[name] {
			t.Errorf("two members named %s:\n%s", name, members)
		}
		names[name] = true
	}
	second.halt(t)
	up.stop(t)
}

// halt stops a server with SIGTERM and waits for it to exit cleanly, the
// processes of others started from the same binary aside.
func (p *upProcess) halt(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%v after SIGTERM: %v\n%s", p.cmd.Args[:2], err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%v did not exit 20s after SIGTERM", p.cmd.Args[:2])
	}
}

// submitOK writes spec to session's submit file and waits for its graph to
// succeed.
func submitOK(t *testing.T, c *fs.Client, session, spec string) {
	t.Helper()
	if err := c.WriteFile(session+"/submit", []byte(spec)); err != nil {
		t.Fatalf("submit %q to %s: %v", spec, session, err)
	}
	if st := readText(t, c, session+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("%q in %s:\n%s", spec, session, st)
	}
}
