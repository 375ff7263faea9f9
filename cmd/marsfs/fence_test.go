package main

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"

	"marsfs/fs"
	"marsfs/internal/netnstest"
)

// waitLog waits until the process's log holds want, and returns the log.
// The log is the event: the processes say what they did there.
func waitLog(t *testing.T, p *upProcess, want string, d time.Duration) string {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for {
		if log := p.stderr.String(); strings.Contains(log, want) {
			return log
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no %q in the log after %v:\n%s", want, d, p.stderr)
		}
	}
}

// noRace fails the test if a process's log reports a data race (the
// binary built with MARSFS_TEST_RACE=1).
func noRace(t *testing.T, ps ...*upProcess) {
	t.Helper()
	for _, p := range ps {
		if log := p.stderr.String(); strings.Contains(log, "DATA RACE") {
			t.Errorf("a data race in %v:\n%s", p.cmd.Args[:2], log)
		}
	}
}

// fencedPair starts two schedulers with state dirs (a at gossip, b
// joined to it) and two workers, and makes a session homed on b, cloned
// through a, holding an upload u, kept tensors x and y and a graph still
// running (fillForKill), and x3 = arange(100000) * 3. It returns the
// clients of both trees, the session's path, b's name, and the hashes of
// u, x and y.
func fencedPair(t *testing.T, bin string) (a, b *upProcess, ca, cb *fs.Client, sess, bName, dirB, gossip string, want map[string][32]byte) {
	gossip, dirA := freeGossip(t), t.TempDir()
	dirB = t.TempDir()
	a = startServer(t, bin, "scheduler", "--gossip", gossip, "--state-dir", dirA)
	startWorker(t, bin, gossip, "w1")
	startWorker(t, bin, gossip, "w2")
	b = startServer(t, bin, "scheduler", "--gossip", "127.0.0.1:0", "--join", gossip, "--state-dir", dirB)
	t.Cleanup(func() {
		noRace(t, a, b)
		if t.Failed() {
			t.Logf("the first scheduler's log:\n%s\nthe second's:\n%s", a.stderr, b.stderr)
		}
	})
	var err error
	if ca, err = fs.Dial(a.unx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ca.Close() })
	if cb, err = fs.Dial(b.unx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cb.Close() })
	for _, c := range []*fs.Client{ca, cb} {
		waitFor(t, c, "/cluster/members", 60*time.Second, func(s string) bool {
			return strings.Count(s, " scheduler alive") == 2 && strings.Count(s, " worker alive") == 2
		})
		waitFor(t, c, "/cluster/workers/w1/status", 30*time.Second, func(s string) bool { return s != "" })
		waitFor(t, c, "/cluster/workers/w2/status", 30*time.Second, func(s string) bool { return s != "" })
	}
	aName := memberNamed(readText(t, ca, "/cluster/members"), gossip)
	for range 20 {
		s := newSession(t, ca)
		if h := homeOf(t, ca, s); h != aName && h != "" {
			sess, bName = s, h
			break
		}
	}
	if sess == "" {
		t.Fatalf("20 sessions and none homed on the second scheduler")
	}
	want = fillForKill(t, ca, sess)
	submitOK(t, ca, sess, "x3 = arange(100000, chunks=10000) * 3\n")
	return a, b, ca, cb, sess, bName, dirB, gossip, want
}

// sameTensors checks u, x and y through c against their hashes.
func sameTensors(t *testing.T, c *fs.Client, sess string, want map[string][32]byte) {
	t.Helper()
	for name, h := range want {
		if got, _ := hashFile(t, c, sess+"/tensors/"+name+"/data"); got != h {
			t.Errorf("%s differs", name)
		}
	}
}

// sumOf submits d = x.sum() through c and reads it back.
//
// A scheduler that cannot yet tell whether it still holds the session
// (back from a pause, its lease run out, the new epoch not heard yet)
// answers EAGAIN, whose meaning is "try again": sumOf does, for 30 s.
func sumOf(t *testing.T, c *fs.Client, sess, expr string) string {
	t.Helper()
	spec := "d = " + expr + "\n"
	for deadline := time.Now().Add(30 * time.Second); ; {
		err := c.WriteFile(sess+"/submit", []byte(spec))
		if err == nil {
			break
		}
		if !fs.IsErrno(err, linux.EAGAIN) || time.Now().After(deadline) {
			t.Fatalf("submit %q to %s: %v", spec, sess, err)
		}
		time.Sleep(100 * time.Millisecond) // another process decides: nothing here to wait on
	}
	if st := readText(t, c, sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("%q in %s:\n%s", spec, sess, st)
	}
	return strings.TrimSpace(readText(t, c, sess+"/tensors/d/text"))
}

// listed counts the session in /sessions through c.
func listed(t *testing.T, c *fs.Client, sess string) int {
	t.Helper()
	ents, err := c.ReadDir("/sessions")
	if err != nil {
		t.Fatalf("ls /sessions: %v", err)
	}
	n := 0
	for _, e := range ents {
		if "/sessions/"+e.Name == sess {
			n++
		}
	}
	return n
}

// TestPausedHomeFenced is issue 30's first case: the home of a session is
// paused (SIGSTOP) past failure detection, the other scheduler takes the
// session over, and the home is let go on (SIGCONT). Writes through both
// trees then reach one home: one value through both, one home, one
// listing, and the write acknowledged before the pause is there. The
// paused one gives the session up (its log says it moved) before it
// serves a request on it.
func TestPausedHomeFenced(t *testing.T) {
	bin := build(t)
	a, b, ca, cb, sess, bName, dirB, _, want := fencedPair(t, bin)
	file := filepath.Join(dirB, "session-"+filepath.Base(sess)+".journal")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the home's journal: %v", err)
	}
	stopped := time.Now()
	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, a, "took over 1 sessions of "+bName, 60*time.Second)
	took := time.Since(stopped)
	if err := syscall.Kill(b.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	// The first write after the pause goes through the paused one's tree.
	x5 := sumOf(t, cb, sess, "(x3 * 5).sum()")
	first := time.Since(resumed)
	x7 := sumOf(t, ca, sess, "(x3 * 7).sum()")
	if want := strconv.Itoa(5 * 3 * 99999 * 100000 / 2); x5 != want {
		t.Errorf("(x*5).sum() through the paused one's tree = %s, want %s", x5, want)
	}
	for _, c := range []*fs.Client{ca, cb} {
		if d := strings.TrimSpace(readText(t, c, sess+"/tensors/d/text")); d != x7 {
			t.Errorf("d = %s through one tree, %s through the other", d, x7)
		}
		if h := homeOf(t, c, sess); h == bName || h == "" {
			t.Errorf("home %q after the takeover", h)
		}
		if n := listed(t, c, sess); n != 1 {
			t.Errorf("%s listed %d times", sess, n)
		}
	}
	// What was acknowledged before the pause, through the paused one's
	// tree (forwarded to the new home).
	sameTensors(t, cb, sess, want)
	if want := strconv.Itoa(7 * 3 * 99999 * 100000 / 2); x7 != want {
		t.Errorf("(x*7).sum() = %s, want %s", x7, want)
	}
	log := waitLog(t, b, "moved to", 10*time.Second)
	if !strings.Contains(log, "given up here") {
		t.Errorf("the paused one's log does not say it gave the session up:\n%s", log)
	}
	// The paused one's connections to the workers never broke, so they
	// offered nothing: the new home's claim at epoch 1 took its chunks
	// from them, not made again.
	waitLog(t, a, "for its earlier home: taken at epoch 1, not recomputed", 10*time.Second)
	// The worker processes learned the session's new epoch from the new
	// home's claims and runs, and refuse what the paused one sends them
	// of the session at its old epoch: the runs of the graph it was
	// running, a free (exec/sched's TestStaleHomeFenced shows each).
	taken := filepath.Base(sess) + ":1"
	learned, fenced := 0, 0
	for _, w := range []string{"w1", "w2"} {
		st := readText(t, ca, "/cluster/workers/"+w+"/status")
		for _, line := range strings.Split(st, "\n") {
			if k, v, _ := strings.Cut(line, " "); k == "epochs" && slices.Contains(strings.Fields(v), taken) {
				learned++
			} else if k == "fenced" {
				n, _ := strconv.Atoi(v)
				fenced += n
			}
		}
	}
	if learned == 0 {
		t.Errorf("no worker knows session %s at epoch 1 after the takeover", sess)
	}
	if refusals := strings.Count(log, " refuses "); refusals > 0 || fenced > 0 {
		t.Logf("the workers refused %d messages of the paused one at its old epoch; its log names %d refusals", fenced, refusals)
	}
	// Given up in the background: the file goes once the session's
	// last write there has ended.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); ; <-tick.C {
		if _, err := os.Stat(file); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the paused one's journal of the session is still there 10 s after it gave the session up")
		}
	}
	t.Logf("takeover %v after SIGSTOP; the first write after SIGCONT, through the paused one's tree, acknowledged in %v",
		took.Round(time.Millisecond), first.Round(time.Millisecond))
}

// TestRestartAfterTakeover is issue 30's second case: the home of a
// session is killed, the other scheduler takes the session over, and the
// killed one is started again on its old state dir. It restores nothing
// of the session (its log says it moved), lists it once and reads it
// from the new home, whose value is the one written before the kill.
func TestRestartAfterTakeover(t *testing.T) {
	bin := build(t)
	a, b, ca, _, sess, bName, dirB, gossip, hashes := fencedPair(t, bin)
	want := sumOf(t, ca, sess, "x3.sum()")
	b.cmd.Process.Kill()
	b.cmd.Wait()
	waitLog(t, a, "took over 1 sessions of "+bName, 60*time.Second)
	b2 := startServer(t, bin, "scheduler", "--gossip", "127.0.0.1:0", "--join", gossip, "--state-dir", dirB)
	t.Cleanup(func() { noRace(t, b2) })
	log := waitLog(t, b2, "while this scheduler was down: not restored", 30*time.Second)
	if strings.Contains(log, "restored 1 sessions") {
		t.Errorf("the restarted one restored the session:\n%s", log)
	}
	cb2, err := fs.Dial(b2.unx)
	if err != nil {
		t.Fatal(err)
	}
	defer cb2.Close()
	for _, c := range []*fs.Client{ca, cb2} {
		if n := listed(t, c, sess); n != 1 {
			t.Errorf("%s listed %d times", sess, n)
		}
		if d := strings.TrimSpace(readText(t, c, sess+"/tensors/d/text")); d != want {
			t.Errorf("d = %s, want %s", d, want)
		}
		sameTensors(t, c, sess, hashes)
	}
	if _, err := os.Stat(filepath.Join(dirB, "session-"+filepath.Base(sess)+".journal")); !os.IsNotExist(err) {
		t.Errorf("the restarted one kept the session's journal: %v", err)
	}
	if got := sumOf(t, cb2, sess, "(x3 * 2).sum()"); got == want {
		t.Errorf("a write through the restarted one's tree did not take: %s", got)
	}
}

// TestPartitionedHomeFenced is issue 30's partition: the home of a
// session, a host of its own in a network namespace, is cut off from the
// other scheduler and the workers (its link down) but not from its
// clients (a unix socket), until the other has taken the session over
// and a write through the cut-off one's tree has been refused; then the
// link comes back. The cut-off one acknowledges nothing meanwhile, and
// afterwards both trees show one value, one home and one listing, with
// the write made through the new home during the partition.
func TestPartitionedHomeFenced(t *testing.T) {
	netnstest.Need(t)
	bin := build(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte("partition test secret\n"), 0o600)
	prefix := fmt.Sprintf("mfp%d", os.Getpid()%100000)
	hub := prefix + "h"
	type host = netnstest.Host
	hosts := netnstest.Hosts(prefix, "10.216.0", "a", "b", "1", "2")
	netnstest.Bridge(t, hub, hosts)
	sa, sb, w1, w2 := hosts[0], hosts[1], hosts[2], hosts[3]
	sched := func(h host, args ...string) *upProcess {
		sock := filepath.Join(t.TempDir(), "m.sock")
		cmd := osexec.Command("ip", append([]string{"netns", "exec", h.NS, bin, "scheduler", "--listen", h.IP + ":5640", "--socket", sock,
			"--gossip", h.IP + ":7946", "--key-file", keyFile, "--state-dir", t.TempDir()}, args...)...)
		return startCmd(t, cmd, bin, "scheduler")
	}
	a := sched(sa)
	for _, w := range []host{w1, w2} {
		cmd := osexec.Command("ip", "netns", "exec", w.NS, bin, "worker", "--join", sa.IP+":7946", "--listen", w.IP+":0",
			"--gossip", w.IP+":7946", "--key-file", keyFile, "--name", w.NS, "--store", "mem", "--slots", "1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	b := sched(sb, "--join", sa.IP+":7946")
	t.Cleanup(func() {
		noRace(t, a, b)
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
		for _, w := range []host{w1, w2} {
			waitFor(t, c, "/cluster/workers/"+w.NS+"/status", 30*time.Second, func(s string) bool { return s != "" })
		}
	}
	bName := memberNamed(readText(t, ca, "/cluster/members"), sb.IP+":7946")
	sess := ""
	for range 20 {
		if s := newSession(t, ca); homeOf(t, ca, s) == bName {
			sess = s
			break
		}
	}
	if sess == "" {
		t.Fatalf("20 sessions and none homed on %s", bName)
	}
	submitOK(t, ca, sess, "x = arange(100000, chunks=10000) * 3\n")

	cut := time.Now()
	netnstest.Link(t, sb, false)
	waitLog(t, a, "took over 1 sessions of "+bName, 60*time.Second)
	took := time.Since(cut)
	// The cut-off one acknowledges no write: it has no lease, and cannot
	// go on alone without the workers.
	err = cb.WriteFile(sess+"/submit", []byte("d = (x * 5).sum()\n"))
	if err == nil {
		t.Errorf("a write through the cut-off home's tree was acknowledged %v into the partition", time.Since(cut).Round(time.Millisecond))
	}
	t.Logf("a write through the cut-off home's tree, %v into the partition: %v", time.Since(cut).Round(time.Millisecond), err)
	want := sumOf(t, ca, sess, "(x * 7).sum()")
	netnstest.Link(t, sb, true)
	healed := time.Now()
	waitLog(t, b, "moved to "+memberNamed(readText(t, ca, "/cluster/members"), sa.IP+":7946"), 60*time.Second)
	learned := time.Since(healed)
	for _, c := range []*fs.Client{ca, cb} {
		waitFor(t, c, "/cluster/members", 30*time.Second, func(s string) bool { return strings.Count(s, " scheduler alive") == 2 })
		if d := strings.TrimSpace(readText(t, c, sess+"/tensors/d/text")); d != want {
			t.Errorf("d = %s through one tree, want %s", d, want)
		}
		if h := homeOf(t, c, sess); h == bName || h == "" {
			t.Errorf("home %q after the partition", h)
		}
		if n := listed(t, c, sess); n != 1 {
			t.Errorf("%s listed %d times", sess, n)
		}
	}
	if got := sumOf(t, cb, sess, "(x * 2).sum()"); got != strconv.Itoa(2*3*99999*100000/2) {
		t.Errorf("(x*2).sum() through the healed one's tree = %s", got)
	}
	t.Logf("takeover %v into the partition; the cut-off one learned of it %v after the link came back", took.Round(time.Millisecond), learned.Round(time.Millisecond))
}
