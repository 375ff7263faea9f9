package sched

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/exec/wire"
	"marsfs/internal/netnstest"
)

// The multi-host test puts the scheduler and two workers in network
// namespaces of their own, joined by a bridge in a fourth: each process
// sees only its own address on a private subnet, so every message and
// chunk crosses a (virtual) wire, and the cluster traffic beyond loopback
// is authenticated with the cluster key.

const netnsKey = "netns-test-secret"

// schedulerMain runs a scheduler in a process of its own: it waits for
// MARSFS_TEST_NWORKERS workers, computes MARSFS_TEST_SPEC, and prints the
// workers ("worker NAME ADDR PID") and the SHA-256 of the output
// MARSFS_TEST_OUTPUT ("result HEX").
func schedulerMain() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "scheduler:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := New(ctx, Config{Gossip: os.Getenv("MARSFS_TEST_GOSSIP"), Fast: true,
		SecretKey: wire.DeriveKey([]byte(os.Getenv("MARSFS_TEST_KEY")))})
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	fmt.Println("gossip", s.GossipAddr())
	n, _ := strconv.Atoi(os.Getenv("MARSFS_TEST_NWORKERS"))
	if err := s.WaitWorkers(ctx, n); err != nil {
		return fail(err)
	}
	for _, w := range s.Workers() {
		fmt.Println("worker", w.Name, w.Addr, w.PID)
	}
	e := engine.New(s)
	defer e.Close()
	sess, err := e.NewSession("netns")
	if err != nil {
		return fail(err)
	}
	g, err := sess.Submit(os.Getenv("MARSFS_TEST_SPEC"))
	if err != nil {
		return fail(err)
	}
	if st := g.Wait(ctx); st.State != engine.Succeeded {
		return fail(fmt.Errorf("graph %v: %s", st.State, g.Err()))
	}
	out, ok := sess.Tensor(os.Getenv("MARSFS_TEST_OUTPUT"))
	if !ok {
		return fail(fmt.Errorf("no output %q", os.Getenv("MARSFS_TEST_OUTPUT")))
	}
	a, err := out.Fetch(ctx)
	if err != nil {
		return fail(err)
	}
	sum := sha256.Sum256(a.Data)
	fmt.Println("result", hex.EncodeToString(sum[:]))
	fmt.Println("transfer", g.Status().TransferBytes)
	return 0
}

func TestMultiHost(t *testing.T) {
	netnstest.Need(t)
	const spec = "x = rand(600, 400, chunks=(100, 400), seed=7)\ny = (x.T @ x + x.T.sum(axis=1)).sum(axis=0)"
	want := localResult(t, spec, "y")
	wantSum := sha256.Sum256(want)

	prefix := fmt.Sprintf("mfs%d", os.Getpid())
	hub := prefix + "h"
	hosts := netnstest.Hosts(prefix, "10.213.0", "scheduler", "wa", "wb")
	netnstest.Bridge(t, hub, hosts)

	gossip := hosts[0].IP + ":7946"
	start := func(ns string, env ...string) (*exec.Cmd, io.WriteCloser, io.Reader) {
		cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MARSFS_TEST_KEY="+netnsKey)
		cmd.Env = append(cmd.Env, env...)
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			in.Close()
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		})
		return cmd, in, out
	}
	sched, _, sout := start(hosts[0].NS, "MARSFS_TEST_SCHEDULER=1", "MARSFS_TEST_GOSSIP="+gossip,
		"MARSFS_TEST_NWORKERS=2", "MARSFS_TEST_SPEC="+spec, "MARSFS_TEST_OUTPUT=y")
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(sout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l := <-lines:
		if l != "gossip "+gossip {
			t.Fatalf("scheduler said %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the scheduler did not start")
	}
	for _, h := range hosts[1:] {
		start(h.NS, "MARSFS_TEST_WORKER="+h.Name, "MARSFS_TEST_JOIN="+gossip,
			"MARSFS_TEST_LISTEN="+h.IP+":0", "MARSFS_TEST_GOSSIP="+h.IP+":0", "MARSFS_TEST_SLOTS=2")
	}
	got := map[string]string{}
	timeout := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				done = true
				break
			}
			t.Log(l)
			f := strings.Fields(l)
			switch f[0] {
			case "worker":
				got[f[1]] = f[2]
				if f[3] == strconv.Itoa(os.Getpid()) || f[3] == strconv.Itoa(sched.Process.Pid) {
					t.Errorf("worker %s runs in pid %s", f[1], f[3])
				}
			case "result", "transfer":
				got[f[0]] = f[1]
			}
		case <-timeout:
			t.Fatal("the scheduler did not finish")
		}
	}
	if err := sched.Wait(); err != nil {
		t.Fatalf("scheduler: %v", err)
	}
	for _, h := range hosts[1:] {
		if a := got[h.Name]; !strings.HasPrefix(a, h.IP+":") {
			t.Errorf("worker %s serves at %q, want %s", h.Name, a, h.IP)
		}
	}
	if got["result"] != hex.EncodeToString(wantSum[:]) {
		t.Errorf("result digest %s, want %x", got["result"], wantSum)
	}
	if n, _ := strconv.Atoi(got["transfer"]); n == 0 {
		t.Error("no chunk moved between the hosts")
	}
}
