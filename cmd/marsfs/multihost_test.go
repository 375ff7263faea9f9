package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"marsfs/internal/netnstest"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain lets the test binary be the capturing proxy of
// TestMultiHostWalkthrough, run inside a network namespace.
func TestMain(m *testing.M) {
	if target := os.Getenv("MARSFS_TEST_PROXY"); target != "" {
		os.Exit(proxyMain(os.Getenv("MARSFS_TEST_PROXY_LISTEN"), target, os.Getenv("MARSFS_TEST_PROXY_DIR")))
	}
	os.Exit(m.Run())
}

// proxyMain forwards TCP connections from listen to target, writing the
// bytes of connection N each way to dir/N.up (client to server) and
// dir/N.down, as a capture on the wire would see them. It runs until its
// standard input closes.
func proxyMain(listen, target, dir string) int {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "proxy:", err)
		return 1
	}
	fmt.Println("proxy", l.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	for n := 1; ; n++ {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		go func() {
			defer c.Close()
			s, err := net.Dial("tcp", target)
			if err != nil {
				return
			}
			defer s.Close()
			up, _ := os.Create(filepath.Join(dir, fmt.Sprintf("%d.up", n)))
			down, _ := os.Create(filepath.Join(dir, fmt.Sprintf("%d.down", n)))
			defer up.Close()
			defer down.Close()
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				io.Copy(io.MultiWriter(s, up), c)
				s.(*net.TCPConn).CloseWrite()
				wg.Done()
			}()
			go func() {
				io.Copy(io.MultiWriter(c, down), s)
				c.(*net.TCPConn).CloseWrite()
				wg.Done()
			}()
			wg.Wait()
		}()
	}
}

// TestMultiHostWalkthrough runs docs/multihost.md in network namespaces:
// hosts on a private subnet joined by a bridge, each seeing only its own
// address. A scheduler host, two worker hosts and a second scheduler form
// one cluster with a key; from a "laptop" a client with the key runs
// specs on both schedulers; without the key, or with another, it is
// refused, saying so. The laptop reaches the first scheduler through a
// proxy that records every byte: the keyed connections carry no plain 9P
// (the keyless one, refused, shows what plain 9P looks like there).
func TestMultiHostWalkthrough(t *testing.T) {
	netnstest.Need(t)
	bin := build(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte("walkthrough secret: use 32 random bytes in earnest\n"), 0600)
	otherKey := filepath.Join(dir, "other")
	os.WriteFile(otherKey, []byte("another secret\n"), 0600)
	capture := filepath.Join(dir, "capture")
	os.Mkdir(capture, 0755)

	prefix := fmt.Sprintf("mfw%d", os.Getpid())
	hub := prefix + "h"
	type host = netnstest.Host
	hosts := netnstest.Hosts(prefix, "10.214.0", "s1", "wa", "wb", "s2", "laptop")
	netnstest.Bridge(t, hub, hosts)
	s1, wa, wb, s2, laptop := hosts[0], hosts[1], hosts[2], hosts[3], hosts[4]

	// start runs a long-lived process in h's namespace and returns a
	// channel of its output's lines; the cleanup stops it.
	start := func(h host, name string, env []string, args ...string) <-chan string {
		cmd := osexec.Command("ip", append([]string{"netns", "exec", h.NS}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		stdin, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stdin.Close()
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
				t.Logf("%s's stderr:\n%s", name, errb.String())
			}
		})
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		return lines
	}
	waitLine := func(lines <-chan string, re *regexp.Regexp, what string) string {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("%s ended before saying %v", what, re)
				}
				if m := re.FindStringSubmatch(l); m != nil {
					return m[len(m)-1]
				}
			case <-timeout:
				t.Fatalf("%s did not say %v in 30s", what, re)
			}
		}
	}
	serving := regexp.MustCompile(`serving 9P2000.L at (\S+)`)

	// The walkthrough's commands, host by host.
	sched1 := start(s1, "scheduler 1", nil, bin, "scheduler", "--listen", s1.IP+":5640", "--socket", "", "--gossip", s1.IP+":7946", "--key-file", keyFile)
	waitLine(sched1, serving, "the first scheduler")
	for _, w := range []struct {
		h    host
		name string
	}{{wa, "wa"}, {wb, "wb"}} {
		start(w.h, w.name, nil, bin, "worker", "--join", s1.IP+":7946", "--listen", w.h.IP+":0", "--gossip", w.h.IP+":0", "--key-file", keyFile, "--name", w.name, "--store", "mem")
	}
	sched2 := start(s2, "scheduler 2", nil, bin, "scheduler", "--listen", s2.IP+":5640", "--socket", "", "--gossip", s2.IP+":7946", "--join", s1.IP+":7946", "--key-file", keyFile)
	waitLine(sched2, serving, "the second scheduler")
	// The proxy is the test binary (see TestMain), on the laptop.
	proxy := start(laptop, "proxy", []string{"MARSFS_TEST_PROXY=" + s1.IP + ":5640", "MARSFS_TEST_PROXY_LISTEN=127.0.0.1:0",
		"MARSFS_TEST_PROXY_DIR=" + capture}, os.Args[0], "-test.run=^$")
	viaProxy := waitLine(proxy, regexp.MustCompile(`^proxy (\S+)`), "the proxy")

	// client runs a client verb on the laptop.
	client := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		cmd := osexec.Command("ip", append([]string{"netns", "exec", laptop.NS, bin}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*osexec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	a1, a2 := s1.IP+":5640", s2.IP+":5640"
	// Both workers connected to both schedulers.
	for deadline := time.Now().Add(30 * time.Second); ; {
		out1, _, _ := client("", "cat", "--addr", a1, "--key-file", keyFile, "/cluster/members")
		st1, _, _ := client("", "cat", "--addr", a1, "--key-file", keyFile, "/cluster/workers/wb/status")
		st2, _, _ := client("", "cat", "--addr", a2, "--key-file", keyFile, "/cluster/workers/wb/status")
		if strings.Count(out1, " alive") == 4 && strings.Contains(st1, "slots") && strings.Contains(st2, "slots") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster did not form in 30s:\n%s", out1)
		}
		time.Sleep(200 * time.Millisecond)
	}
	spec := "x = arange(1000000, chunks=100000)\ny = (x * 3).sum()\n"
	for _, a := range []string{a1, a2} {
		out, errs, code := client(spec, "run", "--addr", a, "--key-file", keyFile, "-")
		if code != 0 || strings.TrimSpace(out) != "1499998500000" {
			t.Errorf("marsfs run on %s from the laptop: exit %d, %q, %s", a, code, out, errs)
		}
	}
	// Sessions made through the second scheduler are served by the first,
	// which forwards to their homes (over TLS between the hosts).
	for range 4 {
		id, errs, code := client("", "cat", "--addr", a2, "--key-file", keyFile, "/sessions/clone")
		if code != 0 {
			t.Fatalf("clone on the second scheduler: %s", errs)
		}
		sess := "/sessions/" + strings.TrimSpace(id)
		if _, errs, code := client(spec, "write", "--addr", a2, "--key-file", keyFile, sess+"/submit"); code != 0 {
			t.Fatalf("submit on the second scheduler: %s", errs)
		}
		out, errs, code := client("", "cat", "--addr", a1, "--key-file", keyFile, sess+"/graphs/last/wait", sess+"/tensors/y/text", sess+"/ctl")
		if code != 0 || !strings.Contains(out, "1499998500000\n") || !strings.Contains(out, "\nhome scheduler") {
			t.Errorf("%s through the first scheduler: exit %d:\n%s%s", sess, code, out, errs)
		}
	}
	// Without the key, or with another, the laptop is refused.
	_, errs, code := client("", "ls", "--addr", a1, "/")
	if code == 0 || !strings.Contains(errs, "key") {
		t.Errorf("ls without the key: exit %d, %s", code, errs)
	}
	t.Logf("without the key: %s", errs)
	_, errs, code = client("", "ls", "--addr", a1, "--key-file", otherKey, "/")
	if code == 0 || !strings.Contains(errs, "another key") {
		t.Errorf("ls with another key: exit %d, %s", code, errs)
	}
	t.Logf("with another key: %s", errs)

	// Through the recording proxy: a session, a spec, its result read
	// back; then a client without the key, refused.
	sess, errs, code := client("", "cat", "--addr", viaProxy, "--key-file", keyFile, "/sessions/clone")
	sess = "/sessions/" + strings.TrimSpace(sess)
	if code != 0 {
		t.Fatalf("clone through the proxy: %s", errs)
	}
	if _, errs, code := client(spec, "write", "--addr", viaProxy, "--key-file", keyFile, sess+"/submit"); code != 0 {
		t.Fatalf("submit through the proxy: %s", errs)
	}
	out, errs, code := client("", "cat", "--addr", viaProxy, "--key-file", keyFile, sess+"/graphs/last/wait", sess+"/tensors/y/text")
	if code != 0 || !strings.HasPrefix(out, "SUCCEEDED") || !strings.HasSuffix(out, "1499998500000\n") {
		t.Errorf("through the proxy: exit %d:\n%s%s", code, out, errs)
	}
	if _, errs, code := client("", "ls", "--addr", viaProxy, "/"); code == 0 {
		t.Errorf("plain 9P through the proxy was served: %s", errs)
	}
	time.Sleep(200 * time.Millisecond) // the proxy's last writes
	files, _ := filepath.Glob(filepath.Join(capture, "*.up"))
	if len(files) != 4 {
		t.Fatalf("%d connections captured, want 4: %v", len(files), files)
	}
	plain := regexp.MustCompile(`9P2000|sessions|clone|arange|SUCCEEDED|1499998500000`)
	for i := 1; i <= 4; i++ {
		var both []byte
		for _, dir := range []string{"up", "down"} {
			b, _ := os.ReadFile(filepath.Join(capture, fmt.Sprintf("%d.%s", i, dir)))
			both = append(both, b...)
		}
		keyless := i == 4
		switch m := plain.Find(both); {
		case keyless && m == nil:
			t.Errorf("the keyless connection's capture shows no plain 9P: the capture sees nothing")
		case !keyless && m != nil:
			t.Errorf("connection %d, with the key, carries %q in clear", i, m)
		case !keyless && len(both) < 1000:
			t.Errorf("connection %d captured only %d bytes", i, len(both))
		}
	}
}
