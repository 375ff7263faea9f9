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

// netns runs ip with args, failing the test on error.
func netns(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestMultiHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes in network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	const spec = "x = rand(600, 400, chunks=(100, 400), seed=7)\ny = (x.T @ x + x.T.sum(axis=1)).sum(axis=0)"
	want := localResult(t, spec, "y")
	wantSum := sha256.Sum256(want)

	prefix := fmt.Sprintf("mfs%d", os.Getpid())
	hub := prefix + "h"
	hosts := []struct{ ns, ip, name string }{
		{prefix + "s", "10.213.0.1", "scheduler"},
		{prefix + "a", "10.213.0.2", "wa"},
		{prefix + "b", "10.213.0.3", "wb"},
	}
	var made []string
	t.Cleanup(func() {
		for _, ns := range made {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	netns(t, "netns", "add", hub)
	made = append(made, hub)
	netns(t, "-n", hub, "link", "add", "br0", "type", "bridge")
	netns(t, "-n", hub, "link", "set", "br0", "up")
	for i, h := range hosts {
		netns(t, "netns", "add", h.ns)
		made = append(made, h.ns)
		port := fmt.Sprintf("p%d", i)
		netns(t, "link", "add", "name", port, "netns", hub, "type", "veth", "peer", "name", "eth0", "netns", h.ns)
		netns(t, "-n", hub, "link", "set", port, "master", "br0")
		netns(t, "-n", hub, "link", "set", port, "up")
		netns(t, "-n", h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
		netns(t, "-n", h.ns, "link", "set", "eth0", "up")
		netns(t, "-n", h.ns, "link", "set", "lo", "up")
	}

	gossip := hosts[0].ip + ":7946"
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
	sched, _, sout := start(hosts[0].ns, "MARSFS_TEST_SCHEDULER=1", "MARSFS_TEST_GOSSIP="+gossip,
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
		start(h.ns, "MARSFS_TEST_WORKER="+h.name, "MARSFS_TEST_JOIN="+gossip,
			"MARSFS_TEST_LISTEN="+h.ip+":0", "MARSFS_TEST_GOSSIP="+h.ip+":0", "MARSFS_TEST_SLOTS=2")
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
		if a := got[h.name]; !strings.HasPrefix(a, h.ip+":") {
			t.Errorf("worker %s serves at %q, want %s", h.name, a, h.ip)
		}
	}
	if got["result"] != hex.EncodeToString(wantSum[:]) {
		t.Errorf("result digest %s, want %x", got["result"], wantSum)
	}
	if n, _ := strconv.Atoi(got["transfer"]); n == 0 {
		t.Error("no chunk moved between the hosts")
	}
}
