package main

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marsfs/fs"
)

// memberNamed is the name of the member of /cluster/members (text) at
// gossip address addr.
func memberNamed(text, addr string) string {
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == addr {
			return f[0]
		}
	}
	return ""
}

// homeOf is the home a session's ctl names.
func homeOf(t *testing.T, c *fs.Client, sess string) string {
	t.Helper()
	for _, l := range strings.Split(readText(t, c, sess+"/ctl"), "\n") {
		if h, ok := strings.CutPrefix(l, "home "); ok {
			return h
		}
	}
	return ""
}

// TestTakeoverFromReplica: two schedulers with state dirs share two
// workers. A session homed on the first, with an upload and a kept
// tensor, is copied into the second's replica of the first's journal;
// the first is killed with SIGKILL. Within 30 s the second serves the
// session (ctl: home the second), its tensors bit-identical, their
// chunks taken from the workers rather than made again, the graph that
// was running runs again to the result of a fresh run, and a new graph
// on them succeeds. The time from the kill to the first good read is
// logged: the takeover time.
func TestTakeoverFromReplica(t *testing.T) {
	bin := build(t)
	gossip, dirA, dirB := freeGossip(t), t.TempDir(), t.TempDir()
	a := startServer(t, bin, "scheduler", "--gossip", gossip, "--state-dir", dirA)
	startWorker(t, bin, gossip, "w1")
	startWorker(t, bin, gossip, "w2")
	b := startServer(t, bin, "scheduler", "--gossip", "127.0.0.1:0", "--join", gossip, "--state-dir", dirB)
	takeOver(t, a, b, gossip, dirA, dirB)
}

// TestUpTakesOver: `up --state-dir` and a scheduler joined to it with a
// state dir of its own; the scheduler, home of a session, is killed, and
// up takes the session over (the same as TestTakeoverFromReplica the
// other way round: up's replica, up's workers).
func TestUpTakesOver(t *testing.T) {
	bin := build(t)
	gossip, dirUp, dirB := freeGossip(t), t.TempDir(), t.TempDir()
	up := startUp(t, bin, "--workers", "2", "--state-dir", dirUp)
	b := startServer(t, bin, "scheduler", "--gossip", gossip, "--join", up.join, "--state-dir", dirB)
	takeOver(t, b, up, gossip, dirB, dirUp)
}

// takeOver makes a session homed on scheduler a (at gossip address
// gossip, state dir dirA) through scheduler b (state dir dirB), kills a
// with SIGKILL, and checks that b takes the session over.
func takeOver(t *testing.T, a, b *upProcess, gossip, dirA, dirB string) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the first scheduler's log:\n%s\nthe second's:\n%s", a.stderr, b.stderr)
		}
	})
	ca, err := fs.Dial(a.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close()
	cb, err := fs.Dial(b.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	for _, c := range []*fs.Client{ca, cb} {
		waitFor(t, c, "/cluster/members", 60*time.Second, func(s string) bool {
			return strings.Count(s, " scheduler alive") == 2 && strings.Count(s, " worker alive") == 2
		})
		ents, err := c.ReadDir("/cluster/workers")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			waitFor(t, c, "/cluster/workers/"+e.Name+"/status", 30*time.Second, func(s string) bool { return s != "" })
		}
	}
	aName := memberNamed(readText(t, ca, "/cluster/members"), gossip)
	if aName == "" {
		t.Fatalf("no member at %s:\n%s", gossip, readText(t, ca, "/cluster/members"))
	}
	// A session homed on the first, cloned through the second.
	sess := ""
	for range 20 {
		s := newSession(t, cb)
		if homeOf(t, cb, s) == aName {
			sess = s
			break
		}
	}
	if sess == "" {
		t.Fatalf("20 sessions and none homed on %s", aName)
	}
	want := fillForKill(t, cb, sess)
	// The second's replica catches up with the first's file.
	file := filepath.Base(sess)
	file = "session-" + file + ".journal"
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		x, _ := os.ReadFile(filepath.Join(dirA, file))
		y, _ := os.ReadFile(filepath.Join(dirB, "replica", aName, file))
		if len(x) > 0 && bytes.Equal(x, y) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica of %s has %d bytes after 20 s, the file %d", file, len(y), len(x))
		}
	}

	ca.Close()
	killed := time.Now()
	a.cmd.Process.Kill() // SIGKILL
	a.cmd.Wait()
	var took time.Duration
	for deadline := killed.Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if data, err := cb.ReadFile(sess + "/tensors/y/data"); err == nil {
			took = time.Since(killed)
			if sha256.Sum256(data) != want["y"] {
				t.Fatal("y, read first after the takeover, differs")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not served 30 s after its home was killed", sess)
		}
	}
	t.Logf("takeover: %v from kill -9 to the first good read of %s through the survivor", took.Round(time.Millisecond), sess)
	for _, name := range []string{"u", "x", "y"} {
		if got, _ := hashFile(t, cb, sess+"/tensors/"+name+"/data"); got != want[name] {
			t.Errorf("%s differs after the takeover", name)
		}
	}
	if h := homeOf(t, cb, sess); h == aName || h == "" {
		t.Errorf("ctl says home %q after the takeover", h)
	}
	if st := readText(t, cb, sess+"/graphs/2/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph 2, running at the kill, after the takeover:\n%s", st)
	}
	finished := time.Since(killed)
	other := newSession(t, cb)
	submitOK(t, cb, other, longGraphSpec)
	if x, y := readText(t, cb, sess+"/tensors/z/text"), readText(t, cb, other+"/tensors/z/text"); x != y {
		t.Errorf("z of the graph run again after the takeover = %q, of a fresh run %q", x, y)
	}
	t.Logf("the graph running at the kill finished %v after it", finished.Round(time.Millisecond))
	submitOK(t, cb, sess, "s = (y - x * 2).sum() + u.sum()\n")
	log := b.stderr.String()
	if !strings.Contains(log, "took over 1 sessions of "+aName) {
		t.Errorf("the second's log does not tell the takeover:\n%s", log)
	}
	if strings.Contains(log, " 0 chunks taken from the workers") {
		t.Errorf("no chunk taken from the workers:\n%s", log)
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "took over") {
			t.Log(l)
		}
	}
	if n := metric(t, cb, "marsfs_scheduler_takeovers_total", ""); n != 1 {
		t.Errorf("marsfs_scheduler_takeovers_total %v, want 1", n)
	}
	if n := metric(t, cb, "marsfs_scheduler_taken_sessions_total", ""); n != 1 {
		t.Errorf("marsfs_scheduler_taken_sessions_total %v, want 1", n)
	}
	if n := metric(t, cb, "marsfs_scheduler_chunks_adopted_total", ""); n < 1 {
		t.Errorf("marsfs_scheduler_chunks_adopted_total %v, want the chunks taken from the workers", n)
	}
	b.halt(t)
}
