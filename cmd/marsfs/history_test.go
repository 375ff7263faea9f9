package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hugelgupf/p9/linux"

	mfs "marsfs/fs"
)

// TestGraphHistoryMemory is issue 32's measurement: 3,000 small graphs
// (arange of up to 60 in chunks of 5) in one session of `marsfs up` (a
// worker process) grow the scheduler's resident memory by less than 64
// MiB; the last 16 graphs still answer with their plan, operands, events
// and timeline, an older one with its summary (spec, status, error), and
// the session's history has a line for every graph.
// On 84ae45d, before the bound, the scheduler grew by 554 MiB (196 KiB a
// graph) under a load of 22; with it by 29 MiB, most of it the collector's
// headroom (see gcHeadroom).
func TestGraphHistoryMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 graphs")
	}
	const n, warm = 3000, 100
	bin := build(t)
	up := startUp(t, bin, "--workers", "1")
	pid := strconv.Itoa(up.cmd.Process.Pid)
	c, err := mfs.Dial(up.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := newSession(t, c)
	run := func(i int) {
		spec := fmt.Sprintf("a = arange(%d, chunks=5)\n", 1+i%60)
		if err := c.WriteFile(s+"/submit", []byte(spec)); err != nil {
			t.Fatalf("graph %d: %v", i+1, err)
		}
		if st := readText(t, c, fmt.Sprintf("%s/graphs/%d/wait", s, i+1)); !strings.HasPrefix(st, "SUCCEEDED") {
			t.Fatalf("graph %d: %s", i+1, st)
		}
	}
	for i := range warm {
		run(i)
	}
	base := procKiB(t, pid, "status", "VmRSS")
	for i := warm; i < n; i++ {
		run(i)
	}
	rss := procKiB(t, pid, "status", "VmRSS")
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("scheduler RSS %d MiB after %d graphs, %d MiB after %d: %+d KiB, %d B a graph (load %s)",
		base>>10, warm, rss>>10, n, rss-base, (rss-base)<<10/(n-warm), strings.Join(strings.Fields(string(load))[:3], " "))
	if rss-base > 64<<10 {
		t.Errorf("the scheduler grew by %d MiB over %d graphs", (rss-base)>>10, n-warm)
	}

	for g := n - 15; g <= n; g++ {
		dir := fmt.Sprintf("%s/graphs/%d/", s, g)
		for _, f := range []string{"plan", "operands", "events", "timeline.svg", "plan.svg", "spec.json"} {
			if text := readText(t, c, dir+f); len(text) == 0 {
				t.Errorf("%s%s is empty", dir, f)
			}
		}
		if ops := readText(t, c, dir+"operands"); !strings.Contains(ops, "arange") {
			t.Errorf("%soperands:\n%s", dir, ops)
		}
	}
	old := fmt.Sprintf("%s/graphs/%d/", s, n-16)
	if _, err := c.ReadFile(old + "plan"); !mfs.IsErrno(err, linux.ENOENT) {
		t.Errorf("%splan: %v, want ENOENT (forgotten)", old, err)
	}
	if spec := readText(t, c, old+"spec"); spec != fmt.Sprintf("a = arange(%d, chunks=5)\n", 1+(n-17)%60) {
		t.Errorf("%sspec: %q", old, spec)
	}
	if st := readText(t, c, old+"status"); !strings.HasPrefix(st, "SUCCEEDED\n") {
		t.Errorf("%sstatus: %q", old, st)
	}
	hist := strings.Split(strings.TrimSuffix(readText(t, c, s+"/history"), "\n"), "\n")
	if len(hist) != n || !strings.HasPrefix(hist[0], "1 SUCCEEDED ") || !strings.HasSuffix(hist[0], ` "a = arange(1, chunks=5)" ""`) {
		t.Errorf("history: %d lines, the first %q", len(hist), hist[0])
	}
	up.stop(t)
}
