// Command bench runs the same workloads on marsfs and on Dask (threaded,
// distributed and, for some, synchronous schedulers) and NumPy, on this
// machine in one run, and prints their times, ratios and peak memory.
//
// Usage, from the repository:
//
//	go run ./bench [--only W1,W4] [--runs N] [--quick] [--no-dask]
//
// marsfs runs as `marsfs up` (two worker processes), built from this
// checkout, restarted for each workload; a run is timed from the write to
// a session's submit file to its graph's wait returning. Dask and NumPy run
// in bench/dask_workloads.py, one process a workload and configuration.
// Peak memory is that of the whole process tree above its idle level.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"marsfs/fs"
)

// options are the command's flags.
type options struct {
	only       []string
	runs       int
	quick      bool
	dask       bool
	python     string
	timeout    time.Duration
	budget     time.Duration
	cpuprofile string
	blas       string   // default, openblas or gonum
	store      string   // marsfs up's --store, when set
	upArgs     string   // more arguments for marsfs up, space-separated
	dataDir    string   // where the data workloads' arrays are kept
	daskConfs  []string // the Dask schedulers to run: threads, distributed
}

func main() {
	var o options
	only := flag.String("only", "", "workloads to run, comma-separated (default W1..W7 and GRAM; W8 only when named)")
	flag.IntVar(&o.runs, "runs", 3, "runs of each workload; the table shows medians")
	flag.BoolVar(&o.quick, "quick", false, "scaled-down sizes (1/20 of the data) for a smoke run")
	daskConfs := flag.String("dask", "threads,distributed", "the Dask schedulers to run, comma-separated (threads is the faster on one host; distributed takes minutes on the CLIM rows)")
	noDask := flag.Bool("no-dask", false, "skip Dask and NumPy (W3's DGEMM rate and GRAM's NumPy time are still measured)")
	flag.StringVar(&o.python, "python", "/usr/bin/python3", "Python with NumPy, Dask and distributed")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "stop a Dask or NumPy configuration after this long")
	flag.DurationVar(&o.budget, "budget", 2*time.Minute, "start no further run of a configuration after this long of runs")
	flag.StringVar(&o.blas, "blas", "default", "BLAS marsfs is built with: default (the default build: its own assembly products), openblas (-tags openblas), gonum (pure Go: -tags purego)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "CPU profiles of marsfs: FILE.Wn for up, FILE.Wn.worker-N for its workers")
	flag.StringVar(&o.store, "store", "", "where marsfs' workers keep chunks, mem or shm (default marsfs up's)")
	flag.StringVar(&o.upArgs, "up-args", "", "more arguments for marsfs up, space-separated (e.g. \"--slots 1\")")
	flag.StringVar(&o.dataDir, "data-dir", filepath.Join(os.TempDir(), "marsfs-bench-data"), "where W7 and W8 keep their Zarr arrays (written once, kept; W8's is larger than the memory available)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: bench/run [flags]   (go run ./bench [flags])\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if *only != "" {
		o.only = strings.Split(*only, ",")
	}
	o.dask = !*noDask
	o.daskConfs = strings.Split(*daskConfs, ",")
	rep, err := run(o, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
	rep.print(os.Stdout)
	if rep.failed() {
		os.Exit(1)
	}
}

// result is one engine's runs of one workload.
type result struct {
	engine   string    // "marsfs", "dask threads", "numpy", ...
	times    []float64 // seconds, one a run
	peak     int64     // bytes above idle, whole process tree
	value    []float64 // the last run's result summary
	operands int       // marsfs: chunk operands of the graph
	chunks   int64     // marsfs: most chunk bytes alive at once, cluster-wide
	transfer int64     // marsfs: most bytes a run moved between workers
	timedOut bool
	err      error // the run failed, or its result is wrong
}

func (r result) median() float64 {
	if len(r.times) == 0 {
		return 0
	}
	t := slices.Sorted(slices.Values(r.times))
	if n := len(t); n%2 == 0 {
		return (t[n/2-1] + t[n/2]) / 2
	}
	return t[len(t)/2]
}

func (r result) ok() bool { return r.err == nil && len(r.times) > 0 }

// report is everything a run of the harness measured.
type report struct {
	machine machine
	blas    string // the BLAS marsfs was built with
	scale   float64
	runs    int
	rows    []row
	notes   []string
}

// row is one workload's results.
type row struct {
	w       workload
	params  map[string]int
	results []result // marsfs first
}

// run measures the selected workloads, logging progress to log.
func run(o options, log io.Writer) (*report, error) {
	var ws []workload
	for _, w := range workloads {
		if len(o.only) == 0 && w.id != "W8" && !w.onlyIfNamed || slices.ContainsFunc(o.only, w.named) {
			ws = append(ws, w)
		}
	}
	for _, id := range o.only {
		if !slices.ContainsFunc(workloads, func(w workload) bool { return w.named(id) }) {
			return nil, fmt.Errorf("--only: unknown workload %q (want W1..W8 or GRAM)", id)
		}
	}
	if o.runs < 1 {
		return nil, fmt.Errorf("--runs %d: want at least 1", o.runs)
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	rep := &report{scale: 1, runs: o.runs}
	if o.quick {
		rep.scale = 1.0 / 20
	}
	rep.machine = describeMachine()
	rep.machine.bandwidth = [2]float64{bandwidth(1), bandwidth(2)}
	fmt.Fprintf(log, "bench: %v\n", rep.machine)

	py := pyOptions{python: o.python, script: filepath.Join(root, "bench", "dask_workloads.py"),
		runs: o.runs, budget: o.budget, timeout: o.timeout, data: o.dataDir}
	// W3's goal is a fraction of NumPy's DGEMM rate, measured even with
	// --no-dask.
	haveNumpy := exec.Command(o.python, "-c", "import numpy").Run() == nil
	numpy, dask := false, false
	if o.dask {
		numpy = haveNumpy
		dask = numpy && exec.Command(o.python, "-c", "import dask.array, distributed").Run() == nil
		if !numpy {
			rep.notes = append(rep.notes, o.python+" has no NumPy: NumPy and Dask skipped")
		} else if !dask {
			rep.notes = append(rep.notes, o.python+" lacks dask or distributed (Debian: python3-dask python3-distributed): Dask skipped")
		}
	}

	tmp, err := os.MkdirTemp("", "marsfs-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintln(log, "bench: building marsfs")
	bin, blas, err := buildMarsfs(root, tmp, o.blas)
	if err != nil {
		return nil, err
	}
	rep.blas = blas
	fmt.Fprintf(log, "bench: marsfs calls %s\n", blas)

	for _, w := range ws {
		var p map[string]int
		if w.sized != nil {
			p = w.sized(rep.scale, rep.machine.memAvail)
		} else {
			p = w.params(rep.scale)
		}
		rw := row{w: w, params: p}
		var upArgs []string
		var store string
		if w.data != nil {
			if err := w.data(o.dataDir, o.python, p, log); err != nil {
				return nil, fmt.Errorf("%s: %v", w.id, err)
			}
			upArgs = []string{"--data-dir", o.dataDir}
		}
		if w.store {
			if store, err = ensureStore(o.dataDir, p, log); err != nil {
				return nil, fmt.Errorf("%s: %v", w.id, err)
			}
			upArgs = []string{"--data-dir", o.dataDir}
			files, total, _ := storeFiles(store)
			rep.notes = append(rep.notes, fmt.Sprintf("%s: the array is %d files, %.2f GB on disk (%.2f GB of float64)",
				w.id, len(files), float64(total)/1e9, float64(p["rows"])*float64(p["cols"])*8/1e9))
		}
		if w.prepare != nil {
			more, err := w.prepare(o, p, log)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", w.id, err)
			}
			upArgs = append(upArgs, more...)
		}
		prof := ""
		if o.cpuprofile != "" {
			prof = o.cpuprofile + "." + w.id
		}
		// The DGEMM rate a goal compares marsfs with is measured right
		// before and right after marsfs' runs, so that it sees the
		// machine as they do: its speed drifts over minutes on a shared
		// host. The best of both is the rate.
		var before result
		dgemm := haveNumpy && w.goal.dgemm > 0
		if dgemm {
			before = runPython(py, w.id, "dgemm", p)
		}
		var r result
		if w.marsfs != nil {
			r = w.marsfs(bin, tmp, prof, p, o, upArgs)
		} else {
			r = runMarsfs(bin, tmp, prof, w, p, o, upArgs)
		}
		rw.add(log, r)
		if w.store {
			// The disk's own throughput: the same files read by dd,
			// through the page cache (where marsfs found them when they
			// fit) and past it.
			rw.add(log, ddStore(store, false))
			rw.add(log, ddStore(store, true))
			if m := rw.find("marsfs"); m.ok() {
				_, total, _ := storeFiles(store)
				rep.notes = append(rep.notes, fmt.Sprintf("%s: marsfs read and reduced the array at %.2f GB/s of files (%.2f GB/s of float64)",
					w.id, float64(total)/m.median()/1e9, float64(p["rows"])*float64(p["cols"])*8/m.median()/1e9))
			}
		}
		if dgemm {
			rw.add(log, bracket(before, runPython(py, w.id, "dgemm", p)))
		}
		if dask && !w.noDask {
			configs := slices.Clone(o.daskConfs)
			if w.sync {
				configs = append(configs, "sync")
			}
			for _, c := range configs {
				rw.add(log, runPython(py, w.id, c, p))
			}
		}
		if (numpy || haveNumpy && w.goal.numpy > 0) && !w.store {
			if need := w.numpyBytes(p); need < rep.machine.memAvail/2 {
				rw.add(log, runPython(py, w.id, "numpy", p))
			} else {
				rep.notes = append(rep.notes, fmt.Sprintf("%s: NumPy skipped: needs %d MiB, half the available memory is %d MiB",
					w.id, need>>20, rep.machine.memAvail>>21))
			}
		}
		rep.rows = append(rep.rows, rw)
	}
	return rep, nil
}

// bracket joins the runs of one configuration made before and after
// another's: their times together, the larger peak, the later value. A
// failed half is left out; both failed, the later error stands.
func bracket(before, after result) result {
	switch {
	case !before.ok():
		return after
	case !after.ok():
		return before
	}
	after.times = append(slices.Clone(before.times), after.times...)
	after.peak = max(before.peak, after.peak)
	after.timedOut = before.timedOut || after.timedOut
	return after
}

// add records r after checking its result, and logs it.
func (rw *row) add(log io.Writer, r result) {
	if r.ok() && r.engine != "dgemm" && !strings.HasPrefix(r.engine, "dd ") {
		if err := rw.w.check(rw.params, r.value); err != nil {
			r.err = fmt.Errorf("wrong result: %v", err)
		}
	}
	rw.results = append(rw.results, r)
	if r.err != nil {
		fmt.Fprintf(log, "bench: %s %s: %v\n", rw.w.id, r.engine, r.err)
	}
	if len(r.times) > 0 {
		fmt.Fprintf(log, "bench: %s %s: %s s, peak %s MiB above idle, value %.6g\n",
			rw.w.id, r.engine, fmtTimes(r.times), mib(r.peak), r.value)
	}
}

// runMarsfs starts marsfs up, runs w's spec o.runs times (within the
// budget), each in a fresh session, and stops it.
func runMarsfs(bin, tmp, cpuprofile string, w workload, p map[string]int, o options, extra []string) result {
	res := result{engine: "marsfs"}
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
	start := time.Now()
	for i := range o.runs {
		if i > 0 && time.Since(start) > o.budget {
			break
		}
		r, err := runSpec(c, w.spec(p))
		if err != nil {
			res.err = err
			break
		}
		res.times = append(res.times, r.seconds)
		res.value, res.operands = r.value, r.operands
		res.chunks = max(res.chunks, r.chunkBytes)
		res.transfer = max(res.transfer, r.transferBytes)
	}
	mem.halt()
	res.peak = mem.peakBytes() - idle
	return res
}

// named reports whether --only's id names w: its id, or a prefix of it
// followed by *.
func (w workload) named(id string) bool {
	if p, ok := strings.CutSuffix(id, "*"); ok {
		return strings.HasPrefix(w.id, p)
	}
	return w.id == id
}

// moduleRoot finds the directory of go.mod from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "cmd", "marsfs")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from within the marsfs repository (no go.mod with cmd/marsfs above the working directory)")
		}
		dir = parent
	}
}
