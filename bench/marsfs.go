package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"marsfs/fs"
)

// buildMarsfs builds cmd/marsfs of the module at root into dir, with the
// BLAS blas asks for: "default" or "" (the default build, whose products
// run on marsfs' own assembly kernels where the CPU has AVX2 and FMA),
// "openblas" (the openblas build tag, which needs libopenblas), or "gonum"
// (the purego build tag: gonum's pure-Go BLAS). It returns the binary and
// a phrase naming the BLAS it calls.
func buildMarsfs(root, dir, blas string) (bin, used string, err error) {
	bin = filepath.Join(dir, "marsfs")
	build := func(tags ...string) error {
		args := append([]string{"build", "-o", bin}, tags...)
		cmd := osexec.Command("go", append(args, "./cmd/marsfs")...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, out)
		}
		return nil
	}
	switch blas {
	case "openblas":
		return bin, "OpenBLAS (-tags openblas)", build("-tags", "openblas")
	case "gonum":
		return bin, "gonum, pure Go (-tags purego)", build("-tags", "purego")
	case "", "default":
		return bin, "marsfs' gemm (the default build: assembly kernels on AVX2+FMA, else gonum)", build()
	}
	return "", "", fmt.Errorf("--blas %q: want default, openblas or gonum", blas)
}

// upProc is a running `marsfs up`: the scheduler, the 9P server and its
// worker processes.
type upProc struct {
	cmd    *osexec.Cmd
	sock   string
	shmDir string
	log    *os.File
	exited chan error
}

// servingRE matches the line up prints for its unix socket, once its
// workers have joined.
var servingRE = regexp.MustCompile(`serving 9P2000.L at (unix:\S+)`)

// startUp starts `marsfs up` on a free loopback port and a socket in tmp,
// with its chunk files in a fresh directory under /dev/shm, and returns
// once its workers have joined. cpuprofile and store, if set, are passed on,
// and extra after them.
func startUp(bin, tmp, cpuprofile, store string, extra []string) (*upProc, error) {
	shm, err := os.MkdirTemp("/dev/shm", "marsfs-bench-")
	if err != nil {
		shm = "" // no /dev/shm: marsfs' default applies
	}
	args := []string{"up", "--listen", "127.0.0.1:0", "--socket", filepath.Join(tmp, "marsfs.sock")}
	if shm != "" {
		args = append(args, "--shm-dir", shm)
	}
	if cpuprofile != "" {
		args = append(args, "--cpuprofile", cpuprofile)
	}
	if store != "" {
		args = append(args, "--store", store)
	}
	args = append(args, extra...)
	logf, err := os.Create(filepath.Join(tmp, "marsfs-up.log"))
	if err != nil {
		return nil, err
	}
	cmd := osexec.Command(bin, args...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &upProc{cmd: cmd, shmDir: shm, log: logf, exited: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
		p.exited <- cmd.Wait()
	}()
	select {
	case p.sock = <-ready:
		return p, nil
	case err := <-p.exited:
		p.exited <- err
		return nil, fmt.Errorf("marsfs up ended before its workers joined (%v); see %s", err, logf.Name())
	case <-time.After(60 * time.Second):
		p.stop()
		return nil, fmt.Errorf("marsfs up not ready in 60s; see %s", logf.Name())
	}
}

// stop ends marsfs up with SIGTERM, which stops its workers, and removes
// its chunk directory.
func (p *upProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
	p.log.Close()
	if p.shmDir != "" {
		os.RemoveAll(p.shmDir)
	}
}

// marsfsRun is one run of a spec.
type marsfsRun struct {
	seconds       float64
	operands      int
	chunkBytes    int64 // the graph's most chunk bytes alive at once (status peak_bytes)
	transferBytes int64 // bytes moved between workers (status transfer_bytes)
	value         []float64
}

// runSpec runs spec in a fresh session: it times the write to submit up
// to the read of wait returning, then reads the outputs and closes the
// session.
func runSpec(c *fs.Client, spec string) (marsfsRun, error) {
	var r marsfsRun
	id, err := c.ReadFile("/sessions/clone")
	if err != nil {
		return r, err
	}
	sess := "/sessions/" + strings.TrimSpace(string(id))
	defer c.WriteFile(sess+"/ctl", []byte("close\n"))

	start := time.Now()
	if err := c.WriteFile(sess+"/submit", []byte(spec)); err != nil {
		msg, _ := c.ReadFile(sess + "/error")
		return r, fmt.Errorf("submit: %v: %s", err, msg)
	}
	status, err := c.ReadFile(sess + "/graphs/1/wait")
	r.seconds = time.Since(start).Seconds()
	if err != nil {
		return r, err
	}
	lines := strings.Split(string(status), "\n")
	if lines[0] != "SUCCEEDED" {
		msg, _ := c.ReadFile(sess + "/graphs/1/error")
		return r, fmt.Errorf("graph %s: %s", lines[0], msg)
	}
	for _, l := range lines[1:] {
		if v, ok := strings.CutPrefix(l, "operands "); ok {
			r.operands, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "transfer_bytes "); ok {
			r.transferBytes, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(l, "peak_bytes "); ok {
			r.chunkBytes, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	for _, name := range outputNames(spec) {
		data, err := c.ReadFile(sess + "/tensors/" + name + "/npy")
		if err != nil {
			return r, err
		}
		v, err := meanNPY(data)
		if err != nil {
			return r, fmt.Errorf("%s: %v", name, err)
		}
		r.value = append(r.value, v)
	}
	return r, nil
}

// outputNames is the spec's fetch list, or else its last assigned name.
func outputNames(spec string) []string {
	var last string
	for _, l := range strings.Split(spec, "\n") {
		if names, ok := strings.CutPrefix(l, "fetch "); ok {
			var out []string
			for _, n := range strings.Split(names, ",") {
				out = append(out, strings.TrimSpace(n))
			}
			return out
		}
		if name, _, ok := strings.Cut(l, "="); ok {
			last = strings.TrimSpace(name)
		}
	}
	return []string{last}
}

// meanNPY is the mean of the float64 or float32 values of a .npy file
// (version 1, as marsfs writes them).
func meanNPY(b []byte) (float64, error) {
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return 0, fmt.Errorf("not a .npy file")
	}
	end := 10 + int(binary.LittleEndian.Uint16(b[8:]))
	if end > len(b) {
		return 0, fmt.Errorf("a .npy header of %d bytes in %d", end, len(b))
	}
	head, data := string(b[10:end]), b[end:]
	switch {
	case strings.Contains(head, "'<f8'"):
		return meanFloat64(data)
	case strings.Contains(head, "'<f4'"):
		if len(data) == 0 || len(data)%4 != 0 {
			return 0, fmt.Errorf("%d bytes of data, want a positive multiple of 4 (float32)", len(data))
		}
		var s float64
		for i := 0; i < len(data); i += 4 {
			s += float64(math.Float32frombits(binary.LittleEndian.Uint32(data[i:])))
		}
		return s / float64(len(data)/4), nil
	}
	return 0, fmt.Errorf("a .npy of %s, want float64 or float32", head)
}

// meanFloat64 is the mean of little-endian float64 data.
func meanFloat64(b []byte) (float64, error) {
	if len(b) == 0 || len(b)%8 != 0 {
		return 0, fmt.Errorf("%d bytes of data, want a positive multiple of 8 (float64)", len(b))
	}
	var s float64
	for i := 0; i < len(b); i += 8 {
		s += math.Float64frombits(binary.LittleEndian.Uint64(b[i:]))
	}
	return s / float64(len(b)/8), nil
}
