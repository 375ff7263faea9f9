package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// pyOptions says how to run bench/dask_workloads.py.
type pyOptions struct {
	python  string
	script  string
	runs    int
	budget  time.Duration // start no run after this long of runs
	timeout time.Duration // kill the process after this long
	data    string        // the data directory (MARSFS_BENCH_DATA)
}

// runPython runs workload w in one configuration of the Python script, in a
// process of its own, and measures its process tree's memory above the idle
// level reached once the script is set up (imports, cluster).
func runPython(o pyOptions, w string, config string, params map[string]int) result {
	res := result{engine: config}
	if config != "numpy" && config != "dgemm" {
		res.engine = "dask " + config
	}
	pj, _ := json.Marshal(params)
	cmd := osexec.Command(o.python, o.script, w, "--config", config, "--runs", fmt.Sprint(o.runs),
		"--budget", fmt.Sprint(o.budget.Seconds()), "--params", string(pj))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a timeout kills the cluster too
	cmd.Env = append(pythonEnv(os.Environ()), "MARSFS_BENCH_DATA="+o.data)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		res.err = err
		return res
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		res.err = err
		return res
	}
	if err := cmd.Start(); err != nil {
		res.err = err
		return res
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(o.timeout, func() {
		timedOut.Store(true)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	mem := newMemSampler(cmd.Process.Pid, "")
	lines := bufio.NewScanner(stdout)
	idle := int64(-1)
	for lines.Scan() {
		var msg struct {
			Ready   bool
			Done    bool
			Seconds *float64
			Value   []float64
		}
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
			continue // a stray print of a library
		}
		switch {
		case msg.Ready:
			mem.start()
			time.Sleep(200 * time.Millisecond)
			idle = mem.now()
			mem.resetPeak()
			io.WriteString(stdin, "go\n")
		case msg.Seconds != nil:
			res.times = append(res.times, *msg.Seconds)
			res.value = msg.Value
		}
		if msg.Done {
			break
		}
	}
	if idle >= 0 {
		mem.halt()
		res.peak = mem.peakBytes() - idle
	}
	stdin.Close()
	// Let the cluster shut down, then make sure nothing is left.
	time.AfterFunc(20*time.Second, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	timer.Stop()
	res.timedOut = timedOut.Load()
	switch {
	case res.timedOut:
		res.err = fmt.Errorf("timed out after %v", o.timeout)
	case len(res.times) == 0:
		res.err = fmt.Errorf("%s: %v\n%s", config, werr, lastLines(stderr.String(), 5))
	}
	return res
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// pythonEnv is env without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE: this
// machine sets them for old OpenBLAS builds, and they slow the one NumPy
// uses (two threads make about 106 GFLOP/s without them).
func pythonEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") || strings.HasPrefix(kv, "OPENBLAS_L2_SIZE=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
