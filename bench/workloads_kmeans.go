package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"marsfs/fs"
)

// KMEANS (issue 35) is Lloyd's algorithm as a user writes it: n points of
// d float32 values in a .npy file, k clusters, one spec an iteration, the
// centres C kept by the session from one iteration to the next and X read
// once with from_npy and kept. Its runs are the iterations: the table's
// time is the median iteration's, after X has been read (untimed, but in
// the peak memory). NumPy makes the data once into the data directory
// (bench/kmeans.py), and with it the centres its own iterations end at,
// which every engine's centres are checked against.
var kmeansWorkloads = []workload{{
	id:   "KMEANS",
	text: "k-means, Lloyd's: 10,000,000 x 8 float32 points from a .npy (from_npy, kept), k = 5, 10 iterations of one spec each (the time is an iteration's)",
	params: func(s float64) map[string]int {
		// Dask's chunks: the size from_npy chooses by default
		// (4 Mi elements).
		return map[string]int{"n": scaled(1e7, s), "d": 8, "k": 5, "iters": 10, "chunk": 4 << 20 / 8}
	},
	spec:       func(p map[string]int) string { return kmeansIteration(p["k"]) },
	check:      kmeansCheck,
	numpyBytes: func(p map[string]int) int64 { return int64(p["n"]) * int64(4*p["d"]+3*4*p["k"]+8) },
	goal:       goal{numpy: 2, describe: "an iteration ≥2× NumPy's"},
	prepare:    kmeansData,
	marsfs:     runKmeansMarsfs,
}}

// kmeansIteration is one iteration's spec, the user's formula.
func kmeansIteration(k int) string {
	return fmt.Sprintf("d = (C*C).sum(axis=1) - 2*(X @ C.T)\noh = (d.argmin(axis=1)[:, None] == arange(%d)).astype(float32)\nC = (oh.T @ X) / oh.sum(axis=0)[:, None]\n", k)
}

// kmeansNames are the file names of p's points and of NumPy's centres, as
// bench/kmeans.py names them.
func kmeansNames(p map[string]int) (npy, ref string) {
	base := fmt.Sprintf("kmeans-%dx%d-k%d", p["n"], p["d"], p["k"])
	return base + ".npy", base + "-ref.json"
}

// kmeansRefs are NumPy's final centres, by the points' file name, read
// when the data is prepared.
var kmeansRefs sync.Map

// kmeansData makes the points and NumPy's centres in o.dataDir unless they
// are there, reads the centres for the check, and returns the arguments
// marsfs up needs to read the file.
func kmeansData(o options, p map[string]int, log io.Writer) ([]string, error) {
	npy, ref := kmeansNames(p)
	if _, err := os.Stat(filepath.Join(o.dataDir, npy)); err != nil {
		if err := os.MkdirAll(o.dataDir, 0o755); err != nil {
			return nil, err
		}
		root, err := moduleRoot()
		if err != nil {
			return nil, err
		}
		pj, _ := json.Marshal(p)
		fmt.Fprintf(log, "bench: writing %s (%.2f GB of float32) and NumPy's centres, once\n", npy, float64(p["n"]*p["d"]*4)/1e9)
		cmd := osexec.Command(o.python, filepath.Join(root, "bench", "kmeans.py"), "make", o.dataDir, "--params", string(pj))
		cmd.Env = pythonEnv(os.Environ())
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("making the points with %s (NumPy): %v\n%s", o.python, err, lastLines(string(out), 5))
		}
	}
	b, err := os.ReadFile(filepath.Join(o.dataDir, ref))
	if err != nil {
		return nil, fmt.Errorf("NumPy's centres: %v", err)
	}
	var c []float64
	if err := json.Unmarshal(b, &c); err != nil || len(c) != p["k"]*p["d"] {
		return nil, fmt.Errorf("NumPy's centres in %s: %d values (%v), want %d", ref, len(c), err, p["k"]*p["d"])
	}
	kmeansRefs.Store(npy, c)
	return []string{"--data-dir", o.dataDir}, nil
}

// kmeansCheck compares the final centres v with NumPy's: each within 1e-3
// of the data's scale (its centres lie in [-10, 10]). Engines sum in other
// orders, so a point about as near two centres may go to either; one
// point moves a centre by about its distance over the cluster's count.
func kmeansCheck(p map[string]int, v []float64) error {
	npy, _ := kmeansNames(p)
	r, ok := kmeansRefs.Load(npy)
	if !ok {
		return fmt.Errorf("no NumPy centres for %s", npy)
	}
	ref := r.([]float64)
	if len(v) != len(ref) {
		return fmt.Errorf("%d centre values, want %d", len(v), len(ref))
	}
	for i := range v {
		d := math.Abs(v[i] - ref[i])
		if math.IsNaN(d) || d > 1e-3*max(1, math.Abs(ref[i])) {
			return fmt.Errorf("centre value %d is %g, NumPy's %g", i, v[i], ref[i])
		}
	}
	return nil
}

// runKmeansMarsfs starts marsfs up and runs KMEANS in one session: a spec
// reading X from the file and taking its first k rows as C, then one spec
// an iteration, each timed from the write to submit to the graph's wait.
func runKmeansMarsfs(bin, tmp, cpuprofile string, p map[string]int, o options, extra []string) (res result) {
	res.engine = "marsfs"
	up, err := startUp(bin, tmp, cpuprofile, o.store, append(strings.Fields(o.upArgs), extra...))
	if err != nil {
		res.err = err
		return res
	}
	defer up.stop()
	c, err := fs.Dial(up.sock)
	if err != nil {
		res.err = err
		return res
	}
	defer c.Close()
	mem := newMemSampler(up.cmd.Process.Pid, up.shmDir)
	mem.start()
	time.Sleep(300 * time.Millisecond)
	idle := mem.now()
	mem.resetPeak()
	defer func() { // res is named: the peak is set after any return
		mem.halt()
		res.peak = mem.peakBytes() - idle
	}()

	id, err := c.ReadFile("/sessions/clone")
	if err != nil {
		res.err = err
		return res
	}
	sess := "/sessions/" + strings.TrimSpace(string(id))
	defer c.WriteFile(sess+"/ctl", []byte("close\n"))
	npy, _ := kmeansNames(p)
	setup := fmt.Sprintf("X = from_npy(%q)\nC = X[:%d]\nfetch X, C\n", npy, p["k"])
	graph := 0
	submit := func(spec string) (float64, error) {
		graph++
		start := time.Now()
		if err := c.WriteFile(sess+"/submit", []byte(spec)); err != nil {
			msg, _ := c.ReadFile(sess + "/error")
			return 0, fmt.Errorf("submit: %v: %s", err, msg)
		}
		status, err := c.ReadFile(fmt.Sprintf("%s/graphs/%d/wait", sess, graph))
		secs := time.Since(start).Seconds()
		if err != nil {
			return 0, err
		}
		lines := strings.Split(string(status), "\n")
		if lines[0] != "SUCCEEDED" {
			msg, _ := c.ReadFile(fmt.Sprintf("%s/graphs/%d/error", sess, graph))
			return 0, fmt.Errorf("graph %d %s: %s", graph, lines[0], msg)
		}
		for _, l := range lines[1:] {
			if v, ok := strings.CutPrefix(l, "peak_bytes "); ok {
				var b int64
				fmt.Sscan(v, &b)
				res.chunks = max(res.chunks, b)
			}
			if v, ok := strings.CutPrefix(l, "operands "); ok {
				fmt.Sscan(v, &res.operands)
			}
		}
		return secs, nil
	}
	if _, err := submit(setup); err != nil {
		res.err = fmt.Errorf("reading X: %v", err)
		return res
	}
	for range p["iters"] {
		s, err := submit(kmeansIteration(p["k"]))
		if err != nil {
			res.err = err
			return res
		}
		res.times = append(res.times, s)
	}
	data, err := c.ReadFile(sess + "/tensors/C/data")
	if err != nil {
		res.err = err
		return res
	}
	if res.value, err = float32s(data); err != nil {
		res.err = fmt.Errorf("C: %v", err)
	}
	return res
}

// float32s decodes little-endian float32 data.
func float32s(b []byte) ([]float64, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes of data, want a multiple of 4 (float32)", len(b))
	}
	v := make([]float64, len(b)/4)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return v, nil
}
