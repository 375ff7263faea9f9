package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"marsfs/internal/netnstest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var nhosts = flag.Int("hosts", 16, "worker hosts (network namespaces) of TestManyHosts")

// TestManyHosts runs one graph on a cluster of -hosts worker hosts (16 by
// default) and a scheduler host, each a network namespace of its own on a
// bridge, set up as docs/multihost.md says (`marsfs scheduler` and
// `marsfs worker` with the cluster key): every chunk a worker reads from
// another crosses a virtual wire, over TLS. The spec reverses an array so
// that each chunk meets another host's (and a product's partials go up a
// tree), and its result is checked against the closed form. The test logs
// what the network moved: the graph's transfer_bytes, and the bytes each
// host's interface sent and received.
func TestManyHosts(t *testing.T) {
	netnstest.Need(t)
	n := *nhosts
	if n < 1 || n > 200 {
		t.Fatalf("-hosts %d: want 1 to 200", n)
	}
	bin := build(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("many hosts: one key for the cluster\n"), 0600)

	prefix := fmt.Sprintf("mfm%d", os.Getpid())
	hub := prefix + "h"
	names := []string{"scheduler"}
	for i := range n {
		names = append(names, fmt.Sprintf("h%02d", i))
	}
	hosts := netnstest.Hosts(prefix, "10.215.0", names...)
	netnstest.Bridge(t, hub, hosts)

	// start runs a process in h's namespace until the test ends; its
	// standard error is logged if the test fails.
	start := func(h netnstest.Host, args ...string) *bufio.Scanner {
		cmd := osexec.Command("ip", append([]string{"netns", "exec", h.NS, bin}, args...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				t.Logf("%s's stderr:\n%s", h.Name, errb.String())
			}
		})
		return bufio.NewScanner(out)
	}
	s := hosts[0]
	// The scheduler serves once it says so; then the workers join.
	sched := start(s, "scheduler", "--listen", s.IP+":5640", "--socket", "", "--gossip", s.IP+":7946", "--key-file", keyFile)
	serving := make(chan bool, 1)
	go func() {
		for sched.Scan() {
			if strings.Contains(sched.Text(), "serving 9P2000.L at") {
				serving <- true
				break
			}
		}
		close(serving)
		for sched.Scan() { // the rest of its output, unread
		}
	}()
	select {
	case ok := <-serving:
		if !ok {
			t.Fatal("the scheduler ended before it served")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduler did not serve in 30 s")
	}
	// The workers keep chunks in their heaps: namespaces of one machine
	// share /dev/shm, and workers there map each other's chunks, which
	// is right on one host but would carry nothing over the wires.
	for _, h := range hosts[1:] {
		start(h, "worker", "--join", s.IP+":7946", "--listen", h.IP+":0", "--gossip", h.IP+":0",
			"--key-file", keyFile, "--name", h.Name, "--slots", "1", "--store", "mem", "--mem", "256MiB")
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		out := nsRun(t, s.NS, bin, "", "cat", "--addr", s.IP+":5640", "--key-file", keyFile, "/cluster/members")
		if strings.Count(out, " worker alive") == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d workers joined in 60 s:\n%s", strings.Count(out, " worker alive"), n, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := netnstest.Bytes(t, hosts)

	// i * (N-1-i) summed over i is N(N-1)(N-2)/6; chunk k of the reversed
	// array is chunk n-1-k of x, made on another host. The product's
	// partials go up a tree across the hosts.
	const N, cols = 1_600_000, 100
	spec := fmt.Sprintf("x = arange(%d, chunks=%d)\ny = (x[::-1] * x).sum()\na = x.reshape(%d, %d)\nz = ((a.T @ a) %% 997).sum()\nfetch y, z\n",
		N, N/(2*n), N/cols, cols)
	verb := func(stdin string, args ...string) string {
		t.Helper()
		return nsRun(t, s.NS, bin, stdin, append([]string{args[0], "--addr", s.IP + ":5640", "--key-file", keyFile}, args[1:]...)...)
	}
	sess := "/sessions/" + strings.TrimSpace(verb("", "cat", "/sessions/clone"))
	begin := time.Now()
	verb(spec, "write", sess+"/submit")
	if st := verb("", "cat", sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph: %s", st)
	}
	took := time.Since(begin)
	out := "y:\n" + verb("", "cat", sess+"/tensors/y/text") + "z:\n" + verb("", "cat", sess+"/tensors/z/text")
	var wantZ int64
	for i := range cols {
		for j := range cols {
			var dot int64
			for k := range int64(N / cols) {
				dot += (k*cols + int64(i)) * (k*cols + int64(j))
			}
			wantZ += dot % 997
		}
	}
	want := map[string]int64{"y": int64(N) * (N - 1) * (N - 2) / 6, "z": wantZ}
	got := map[string]string{}
	lines := strings.Fields(out)
	for i := 0; i+1 < len(lines); i += 2 {
		got[strings.TrimSuffix(lines[i], ":")] = lines[i+1]
	}
	for name, w := range want {
		if v, err := strconv.ParseInt(got[name], 10, 64); err != nil || v != w {
			t.Errorf("%s on %d hosts: %q, want %d (marsfs run printed %q)", name, n, got[name], w, out)
		}
	}
	after := netnstest.Bytes(t, hosts)

	// What the graph says it moved, and what the wires carried.
	status := verb("", "cat", sess+"/graphs/last/status")
	var busy int
	var tx, rx, most int64
	for i := range hosts {
		d := [2]int64{after[i][0] - before[i][0], after[i][1] - before[i][1]}
		tx += d[0]
		rx += d[1]
		if i > 0 {
			most = max(most, d[0]+d[1])
			if d[0] > 64<<10 {
				busy++
			}
		}
	}
	t.Logf("%d worker hosts: the graph took %v; %s", n, took.Round(time.Millisecond), strings.Join(statusLines(status, "transfer_bytes", "operands", "peak_bytes"), ", "))
	t.Logf("the wires: %d bytes sent, %d received by the %d hosts; the scheduler's %d/%d; the busiest worker host %d; %d worker hosts sent over 64 KiB",
		tx, rx, n+1, after[0][0]-before[0][0], after[0][1]-before[0][1], most, busy)
	if busy < n/2 {
		t.Errorf("only %d of %d worker hosts sent over 64 KiB: the graph did not spread", busy, n)
	}
}

// nsRun runs bin with args in namespace ns, stdin its standard input.
func nsRun(t *testing.T, ns, bin, stdin string, args ...string) string {
	t.Helper()
	cmd := osexec.Command("ip", append([]string{"netns", "exec", ns, bin}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("marsfs %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// statusLines returns the lines of a graph's status that begin with keys.
func statusLines(status string, keys ...string) []string {
	var out []string
	for _, l := range strings.Split(status, "\n") {
		for _, k := range keys {
			if strings.HasPrefix(l, k+" ") {
				out = append(out, l)
			}
		}
	}
	return out
}
