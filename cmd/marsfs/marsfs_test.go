package main

import (
	"bufio"
	"bytes"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"marsfs/fs"
	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// build compiles the marsfs command into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "marsfs")
	args := []string{"build", "-o", bin}
	if os.Getenv("MARSFS_TEST_RACE") != "" {
		// The processes under the race detector: a race is in their logs
		// ("WARNING: DATA RACE"), which noRace checks.
		args = append(args, "-race")
	}
	out, err := osexec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// upProcess is a running `marsfs up`.
type upProcess struct {
	cmd      *osexec.Cmd
	bin      string
	tcp, unx string
	join     string // the scheduler's gossip address, with workers
	stderr   *bytes.Buffer
}

var (
	servingRE = regexp.MustCompile(`serving 9P2000.L at (\S+)`)
	joinRE    = regexp.MustCompile(`marsfs worker --join (\S+)`)
)

func startUp(t *testing.T, bin string, args ...string) *upProcess {
	t.Helper()
	return startServer(t, bin, "up", args...)
}

// startServer starts `marsfs VERB` (up or scheduler) on a free loopback
// port and a socket of its own, and waits until it serves.
func startServer(t *testing.T, bin, verb string, args ...string) *upProcess {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "m.sock")
	cmd := osexec.Command(bin, append([]string{verb, "--listen", "127.0.0.1:0", "--socket", sock}, args...)...)
	return startCmd(t, cmd, bin, verb)
}

// startCmd starts cmd, a `marsfs VERB` (up or scheduler) serving at an
// address and a socket, and waits until it serves.
func startCmd(t *testing.T, cmd *osexec.Cmd, bin, verb string) *upProcess {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &upProcess{cmd: cmd, bin: bin, stderr: new(bytes.Buffer)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string)
	joined := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := joinRE.FindStringSubmatch(sc.Text()); m != nil {
				joined <- m[1]
			}
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	timeout := time.After(60 * time.Second)
	for p.tcp == "" || p.unx == "" {
		select {
		case a, ok := <-found:
			if !ok {
				t.Fatalf("marsfs %s ended before serving:\n%s", verb, p.stderr)
			}
			if strings.HasPrefix(a, "unix:") {
				p.unx = a
			} else {
				p.tcp = a
			}
		case <-timeout:
			t.Fatalf("marsfs %s did not serve in 60s:\n%s", verb, p.stderr)
		}
	}
	select {
	case p.join = <-joined: // printed before serving, when there are workers
	default:
	}
	return p
}

// marsfs runs a client verb, returning its stdout, stderr and exit code.
func (p *upProcess) marsfs(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := osexec.Command(p.bin, args...)
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

// stop sends SIGTERM and checks that up exits cleanly leaving no process
// of its binary behind.
func (p *upProcess) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("marsfs up after SIGTERM: %v\n%s", err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("marsfs up did not exit 20s after SIGTERM")
	}
	if left := processesOf(p.bin); len(left) > 0 {
		t.Errorf("processes of %s left after up exited: %v", p.bin, left)
	}
	if _, err := os.Stat(strings.TrimPrefix(p.unx, "unix:")); !os.IsNotExist(err) {
		t.Errorf("socket %s left behind", p.unx)
	}
}

// processesOf lists the pids of the processes running the binary bin.
func processesOf(bin string) []string {
	var pids []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if arg0, _, _ := bytes.Cut(cmdline, []byte{0}); string(arg0) == bin {
			pids = append(pids, d.Name())
		}
	}
	return pids
}

func TestUp(t *testing.T) {
	bin := build(t)
	for _, workers := range []string{"0", "2"} {
		t.Run("workers="+workers, func(t *testing.T) {
			p := startUp(t, bin, "--workers", workers)
			if workers != "0" {
				if n := len(processesOf(bin)); n != 3 {
					t.Errorf("%d processes of marsfs with 2 workers, want 3", n)
				}
			}
			out, errs, code := p.marsfs(t, "", "ls", "--addr", p.tcp, "/")
			if code != 0 || out != "README\nsessions/\ncluster/\n" {
				t.Errorf("marsfs ls /: %d %q %s", code, out, errs)
			}
			out, _, _ = p.marsfs(t, "", "cat", "--addr", p.unx, "/cluster/members")
			if members := strings.Count(out, "\n"); workers == "2" && members != 3 {
				t.Errorf("cluster/members with 2 workers:\n%s", out)
			}
			// $MARSFS_ADDR names the server.
			cmd := osexec.Command(bin, "cat", "/README")
			cmd.Env = append(os.Environ(), "MARSFS_ADDR="+p.unx)
			if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "/sessions/clone") {
				t.Errorf("MARSFS_ADDR=%s marsfs cat /README: %v\n%s", p.unx, err, out)
			}
			// The p9 client over both transports.
			for _, addr := range []string{p.tcp, p.unx} {
				c, err := fs.Dial(addr)
				if err != nil {
					t.Fatal(err)
				}
				id, err := c.ReadFile("/sessions/clone")
				if err != nil || !regexp.MustCompile(`^\d+\n$`).Match(id) {
					t.Errorf("clone over %s: %q %v", addr, id, err)
				}
				c.Close()
			}
			// A refused control message: non-zero exit and the reason.
			_, errs, code = p.marsfs(t, "frobnicate\n", "write", "--addr", p.tcp, "/sessions/1/ctl")
			if code == 0 || !strings.Contains(errs, `unknown control message "frobnicate"`) {
				t.Errorf("marsfs write of a bad ctl message: exit %d, stderr %q", code, errs)
			}
			testRun(t, p)
			p.stop(t)
		})
	}
}

func testRun(t *testing.T, p *upProcess) {
	spec := filepath.Join(t.TempDir(), "spec")
	os.WriteFile(spec, []byte("a = arange(6, chunks=4)\nb = a * 3\nfetch b\n"), 0644)
	out, errs, code := p.marsfs(t, "", "run", "--addr", p.unx, spec)
	if code != 0 || out != "[ 0  3  6  9 12 15]\n" {
		t.Errorf("marsfs run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Upload with write, then name the tensor in a spec of that session.
	var npy bytes.Buffer
	a := &tensor.Array{DType: tensor.Int32, Shape: []int{2, 2}, Data: []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}}
	codec.WriteNPY(&npy, a)
	id, _, _ := p.marsfs(t, "", "cat", "--addr", p.tcp, "/sessions/clone")
	sess := "/sessions/" + strings.TrimSpace(id)
	if _, errs, code := p.marsfs(t, npy.String(), "write", "--addr", p.tcp, sess+"/tensors/m.npy"); code != 0 {
		t.Fatalf("marsfs write of an upload: exit %d: %s", code, errs)
	}
	if _, errs, code := p.marsfs(t, "s = m.sum(axis=1)\n", "write", "--addr", p.tcp, sess+"/submit"); code != 0 {
		t.Fatalf("marsfs write of a spec: exit %d: %s", code, errs)
	}
	out, _, _ = p.marsfs(t, "", "cat", "--addr", p.unx, sess+"/graphs/last/wait", sess+"/tensors/s/text")
	if !strings.HasPrefix(out, "SUCCEEDED\n") || !strings.HasSuffix(out, "[3 7]\n") {
		t.Errorf("sum of an upload:\n%s", out)
	}
	_, errs, code = p.marsfs(t, "x = ones(3)\ny = frobnicate(x)\n", "run", "--addr", p.tcp, "-")
	if code == 0 || !regexp.MustCompile(`2:\d+: .*frobnicate`).MatchString(errs) {
		t.Errorf("marsfs run of a bad spec: exit %d, stderr %q", code, errs)
	}
}

// TestREADMEExample runs the README's first example verbatim against
// `marsfs up` with two workers (the build line aside: the test built the
// binary), and checks the outputs the README's comments promise.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## A first example")
	if !ok {
		t.Fatal("README.md has no first example")
	}
	rest, _, _ = strings.Cut(rest, "## Mounting")
	var lines []string
	for _, block := range strings.Split(rest, "```sh\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
			if !strings.HasPrefix(l, "go build ") {
				lines = append(lines, l)
			}
		}
	}
	bin := build(t)
	p := startUp(t, bin, "--workers", "2")
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "marsfs")); err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command("bash", "-c", strings.Join(lines, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MARSFS_ADDR="+p.tcp)
	out, _ := cmd.CombinedOutput()
	checked := 0
	for _, l := range lines {
		_, comment, ok := strings.Cut(l, "# ")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		want := strings.TrimPrefix(comment, "fails: ")
		if strings.HasPrefix(want, "[") || strings.HasPrefix(want, "1:5:") || strings.HasPrefix(want, "3.14") || want != comment {
			checked++
			if !strings.Contains(string(out), want) {
				t.Errorf("README promises %q; the example printed:\n%s", want, out)
			}
		}
	}
	if checked < 4 {
		t.Errorf("checked %d promised outputs of the README, want 4", checked)
	}
	if npy, err := os.ReadFile(filepath.Join(dir, "a.npy")); err != nil || !bytes.HasPrefix(npy, []byte("\x93NUMPY")) {
		t.Errorf("a.npy: %v", err)
	}
	p.stop(t)
}
