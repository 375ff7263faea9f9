package main

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"marsfs/fs"
	"marsfs/tensor"
	"marsfs/tensor/codec"
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
	waitFor(t, c2, "/cluster/members", 60*time.Second, func(s string) bool {
		return strings.Count(s, " worker alive") == 2
	})
	// Wait for the second scheduler's control connections to the workers.
	waitFor(t, c2, "/cluster/workers/worker-1/status", 60*time.Second, func(s string) bool { return s != "" })
	waitFor(t, c2, "/cluster/workers/worker-2/status", 60*time.Second, func(s string) bool { return s != "" })

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

// TestSchedulersOneTree: `up` and two more schedulers make one tree.
// Sessions cloned on any of them get homes on the ring of the three
// (ctl says "home NAME"), and every scheduler lists every session and
// serves its files, forwarding to the home: a spec submitted through one
// scheduler to a session homed on another runs there, and its tensor
// reads back through the third. Ownership is checked at the home: another
// user, through another scheduler, is refused.
func TestSchedulersOneTree(t *testing.T) {
	bin := build(t)
	up := startUp(t, bin, "--workers", "2")
	s2 := startServer(t, bin, "scheduler", "--gossip", "127.0.0.1:0", "--join", up.join)
	s3 := startServer(t, bin, "scheduler", "--gossip", "127.0.0.1:0", "--join", up.join)
	servers := []*upProcess{up, s2, s3}
	clients := make([]*fs.Client, len(servers))
	for i, p := range servers {
		c, err := fs.Dial(p.unx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	for _, c := range clients {
		// (minutes, not seconds: on a loaded machine gossip is slow)
		waitFor(t, c, "/cluster/members", 60*time.Second, func(s string) bool { return strings.Count(s, " scheduler alive") == 3 })
		waitFor(t, c, "/cluster/workers/worker-2/status", 20*time.Second, func(s string) bool { return s != "" })
	}
	// Nine sessions, three cloned through each scheduler.
	type session struct {
		path, home string
		sum        string
	}
	var sessions []session
	homes := map[string]int{}
	for i := range 9 {
		c := clients[i%3]
		path := newSession(t, c)
		n := i + 1
		submitOK(t, c, path, fmt.Sprintf("a = arange(100000, chunks=10000) * %d\nt = a.sum()\nfetch a, t\n", n))
		ctl := readText(t, c, path+"/ctl")
		home := ""
		for _, l := range strings.Split(ctl, "\n") {
			if h, ok := strings.CutPrefix(l, "home "); ok {
				home = h
			}
		}
		if home == "" {
			t.Fatalf("%s/ctl has no home line:\n%s", path, ctl)
		}
		homes[home]++
		sessions = append(sessions, session{path, home, fmt.Sprint(4999950000 * n)})
	}
	if len(homes) < 2 {
		t.Errorf("nine sessions all homed on %v: the ring spreads nothing", homes)
	}
	t.Logf("homes: %v", homes)
	// Every scheduler lists and serves every session.
	for i, c := range clients {
		ents, err := c.ReadDir("/sessions")
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]bool{}
		for _, e := range ents {
			listed["/sessions/"+e.Name] = true
		}
		for _, s := range sessions {
			if !listed[s.path] {
				t.Errorf("scheduler %d does not list %s (home %s)", i+1, s.path, s.home)
			}
			if got := strings.TrimSpace(readText(t, c, s.path+"/tensors/t/text")); got != s.sum {
				t.Errorf("%s/tensors/t/text through scheduler %d = %s, want %s", s.path, i+1, got, s.sum)
			}
		}
	}
	// A graph submitted through a scheduler that is not the session's home.
	s := sessions[0]
	via := clients[1] // up made sessions[0]; its home is up only by chance
	if s.home != "scheduler" {
		via = clients[0]
	}
	submitOK(t, via, s.path, "u = (a + 1).sum()\n")
	if got := strings.TrimSpace(readText(t, clients[2], s.path+"/tensors/u/text")); got != "5000050000" {
		t.Errorf("u through the third scheduler = %s", got)
	}
	// An upload through a scheduler that is not the session's home, then
	// named in a spec; then removed.
	var npy bytes.Buffer
	codec.WriteNPY(&npy, &tensor.Array{DType: tensor.Int32, Shape: []int{2, 2}, Data: []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}})
	f, err := via.Create(s.path+"/tensors", "m.npy")
	if err != nil {
		t.Fatalf("create an upload through a non-home: %v", err)
	}
	if _, err := f.Write(npy.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	submitOK(t, via, s.path, "ms = m.sum(axis=1)\n")
	if got := strings.TrimSpace(readText(t, via, s.path+"/tensors/ms/text")); got != "[3 7]" {
		t.Errorf("sum of an upload through a non-home: %s", got)
	}
	// Another user, through another scheduler, is refused at the home.
	if os.Getuid() == 0 {
		if setpriv, err := osexec.LookPath("setpriv"); err == nil {
			pub := publicCopy(t, bin)
			for _, p := range servers {
				out, err := osexec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", pub, "cat", "--addr", p.tcp, s.path+"/tensors/t/text").CombinedOutput()
				if err == nil || !strings.Contains(string(out), "not permitted") {
					t.Errorf("nobody reading %s through %s: %v\n%s", s.path, p.tcp, err, out)
				}
			}
		}
	}
	// kill -9 of the third scheduler: its sessions leave the tree (no
	// takeover without a journal: see the manual), the others' stay
	// whole, and new sessions go to the two left.
	n3, _ := strconv.Atoi(strings.TrimPrefix(sessions[2].path, "/sessions/"))
	s3name := fmt.Sprintf("scheduler-%d", (n3-1)/1000000)
	killed := time.Now()
	s3.cmd.Process.Kill()
	s3.cmd.Wait()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("up's log:\n%s\nthe second scheduler's log:\n%s", up.stderr, s2.stderr)
		}
	})
	waitFor(t, clients[0], "/cluster/members", 60*time.Second, func(m string) bool { return strings.Contains(m, " scheduler failed") })
	t.Logf("%s declared failed %v after kill -9", s3name, time.Since(killed).Round(10*time.Millisecond))
	for _, s := range sessions {
		text, err := clients[0].ReadFile(s.path + "/tensors/t/text")
		switch {
		case s.home == s3name && err == nil:
			t.Errorf("%s, homed on the dead %s, still served", s.path, s3name)
		case s.home != s3name && (err != nil || strings.TrimSpace(string(text)) != s.sum):
			t.Errorf("%s (home %s) after %s died: %q %v", s.path, s.home, s3name, text, err)
		}
	}
	for range 6 {
		path := newSession(t, clients[1])
		if ctl := readText(t, clients[1], path+"/ctl"); strings.Contains(ctl, "home "+s3name+"\n") {
			t.Errorf("a session made after %s died is homed on it", s3name)
		}
	}
	s2.halt(t)
	up.stop(t)
}
