package main

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// A workload is one benchmark problem, run the same way by marsfs, Dask and
// NumPy.
type workload struct {
	id   string
	text string // what it computes, for the table
	// params gives the sizes at a scale (1 for the full problem; --quick
	// passes 1/20). The Python side receives them as JSON.
	params func(scale float64) map[string]int
	// spec is the marsfs spec for the sizes.
	spec func(p map[string]int) string
	// check says whether a result summary (a scalar, or a vector's mean,
	// one entry an output) is right for the sizes.
	check func(p map[string]int, v []float64) error
	// sync: Dask's synchronous scheduler is run too.
	sync bool
	// numpyBytes is the memory NumPy needs for the whole problem at once.
	numpyBytes func(p map[string]int) int64
	goal       goal
	// store: the workload reads the Zarr array of its params (rows,
	// cols, rchunk) from the data directory (see store.go).
	store bool
	// sized, when set, gives the params instead of params, from the
	// memory the machine has available (W8: more than it).
	sized func(scale float64, memAvail int64) map[string]int
	// noDask: Dask is not run.
	noDask bool
	// data, when set, writes the workload's data into the data directory
	// once (it is kept there), and marsfs up is started on that directory.
	data func(dir, python string, p map[string]int, log io.Writer) error
	// onlyIfNamed: run only when --only names it, or a prefix of its id
	// followed by * ('CLIM-*').
	onlyIfNamed bool
	// reportTransf: marsfs' transfer bytes are a result of the workload.
	reportTransf bool
	// prepare, when set, makes or finds the workload's data in the data
	// directory before any engine runs, and gives more arguments for
	// marsfs up.
	prepare func(o options, p map[string]int, log io.Writer) ([]string, error)
	// marsfs, when set, runs the workload on marsfs in place of one
	// fresh session a run (KMEANS: a session of several specs).
	marsfs func(bin, tmp, cpuprofile string, p map[string]int, o options, extra []string) result
}

// A goal is the target marsfs is measured against.
type goal struct {
	speedup  float64 // marsfs at least this many times faster than the best Dask
	dgemm    float64 // W3: at least this fraction of the machine's DGEMM rate
	numpy    float64 // at least this fraction of NumPy's speed (NumPy's time over marsfs')
	usPerOp  float64 // W4: at most this many µs per chunk operand
	peakMiB  float64 // peak memory above idle below this
	describe string
}

// scaled returns x*s rounded, at least 1.
func scaled(x, s float64) int {
	return max(1, int(math.Round(x*s)))
}

// workloads are every workload, in the order bench runs and lists them:
// the W series, the data workloads, the masks', the shuffles' and the
// climate workloads.
var workloads = slices.Concat(seriesWorkloads, dataWorkloads, maskWorkloads, shuffleWorkloads, climateWorkloads, kmeansWorkloads)

// seriesWorkloads are the W series but its data workloads.
var seriesWorkloads = []workload{
	{
		id:   "W1",
		text: "((a+b)*2 - a/3).sum(), a, b = rand(2e8), chunks 1e7",
		params: func(s float64) map[string]int {
			return map[string]int{"n": scaled(2e8, s), "chunk": scaled(1e7, s)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("a = rand(%d, chunks=%d, seed=1)\nb = rand(%[1]d, chunks=%[2]d, seed=2)\nr = ((a + b) * 2 - a / 3).sum()\n", p["n"], p["chunk"])
		},
		// E[(a+b)*2 - a/3] = 2 - 1/6.
		check:      func(p map[string]int, v []float64) error { return near(v, 0, float64(p["n"])*11/6, 0.005) },
		numpyBytes: func(p map[string]int) int64 { return 4 * 8 * int64(p["n"]) },
		goal:       goal{speedup: 5, peakMiB: 300, describe: "≥5× best Dask, peak < 300 MiB"},
	},
	{
		id:   "W2",
		text: "ones(1e8, chunks=1e5).sum()",
		// The chunk stays 1e5 at every scale: the point is many chunks.
		params: func(s float64) map[string]int {
			return map[string]int{"n": scaled(1e8, s), "chunk": 100000}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("r = ones(%d, chunks=%d).sum()\n", p["n"], p["chunk"])
		},
		check:      func(p map[string]int, v []float64) error { return near(v, 0, float64(p["n"]), 0) },
		sync:       true,
		numpyBytes: func(p map[string]int) int64 { return 8 * int64(p["n"]) },
		goal:       goal{speedup: 3, peakMiB: 64, describe: "≥3× best Dask, peak < 64 MiB"},
	},
	{
		id:   "W3",
		text: "(A @ B).sum(), A, B = rand(4000, 4000), chunks 1000",
		// The side shrinks by the whole number nearest 1/sqrt(s), so that
		// the chunks still tile it: at 1/20, 1000 x 1000 in chunks of 250.
		params: func(s float64) map[string]int {
			f := max(1, math.Round(1/math.Sqrt(s)))
			return map[string]int{"m": scaled(4000, 1/f), "chunk": scaled(1000, 1/f)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("A = rand(%d, %[1]d, chunks=%d, seed=1)\nB = rand(%[1]d, %[1]d, chunks=%[2]d, seed=2)\nr = (A @ B).sum()\n", p["m"], p["chunk"])
		},
		// sum(A@B) = Σ_k colsum_k(A) rowsum_k(B), each about m/2.
		check: func(p map[string]int, v []float64) error {
			m := float64(p["m"])
			return near(v, 0, m*m*m/4, 0.02)
		},
		numpyBytes: func(p map[string]int) int64 { return 3 * 8 * int64(p["m"]) * int64(p["m"]) },
		goal:       goal{dgemm: 0.90, describe: "≥90% of DGEMM rate"},
	},
	{
		id:   "W4",
		text: "(ones(1e6, chunks=10) + 1).sum(): 100,000 chunks",
		params: func(s float64) map[string]int {
			return map[string]int{"n": scaled(1e6, s), "chunk": 10}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("r = (ones(%d, chunks=%d) + 1).sum()\n", p["n"], p["chunk"])
		},
		check:      func(p map[string]int, v []float64) error { return near(v, 0, 2*float64(p["n"]), 0) },
		sync:       true,
		numpyBytes: func(p map[string]int) int64 { return 2 * 8 * int64(p["n"]) },
		goal:       goal{usPerOp: 5, describe: "≤5 µs a chunk operand"},
	},
	{
		id:   "W5",
		text: "Monte Carlo pi, 1e8 points, chunks 1e7",
		params: func(s float64) map[string]int {
			return map[string]int{"n": scaled(1e8, s), "chunk": scaled(1e7, s)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = rand(%d, chunks=%d, seed=1)\ny = rand(%[1]d, chunks=%[2]d, seed=2)\npi = 4 * ((x*x + y*y) < 1).mean()\n", p["n"], p["chunk"])
		},
		check:      func(p map[string]int, v []float64) error { return near(v, 0, math.Pi, 0.005) },
		numpyBytes: func(p map[string]int) int64 { return 4 * 8 * int64(p["n"]) },
		goal:       goal{speedup: 5, describe: "≥5× best Dask"},
	},
	{
		id:   "W6",
		text: "rand(20000, 5000, chunks=(2000, 1000)): .sum(axis=0), .mean(axis=1)",
		params: func(s float64) map[string]int {
			return map[string]int{"rows": scaled(20000, s), "cols": 5000, "rchunk": scaled(2000, s), "cchunk": 1000}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = rand(%d, %d, chunks=(%d, %d), seed=1)\ns = x.sum(axis=0)\nm = x.mean(axis=1)\nfetch s, m\n",
				p["rows"], p["cols"], p["rchunk"], p["cchunk"])
		},
		check: func(p map[string]int, v []float64) error {
			if err := near(v, 0, float64(p["rows"])/2, 0.01); err != nil {
				return err
			}
			return near(v, 1, 0.5, 0.01)
		},
		numpyBytes: func(p map[string]int) int64 { return 8 * int64(p["rows"]) * int64(p["cols"]) },
		goal:       goal{speedup: 3, describe: "≥3× best Dask"},
	},
	{
		id:   "GRAM",
		text: "(x.T @ x).sum(), x = rand(20000, 5000), chunks (2000, 1000)",
		params: func(s float64) map[string]int {
			return map[string]int{"rows": scaled(20000, s), "cols": 5000, "rchunk": scaled(2000, s), "cchunk": 1000}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = rand(%d, %d, chunks=(%d, %d), seed=1)\nr = (x.T @ x).sum()\n", p["rows"], p["cols"], p["rchunk"], p["cchunk"])
		},
		// E[xᵢ xⱼ] is 1/4, 1/3 on the diagonal: the sum is about rows cols² / 4.
		check: func(p map[string]int, v []float64) error {
			r, c := float64(p["rows"]), float64(p["cols"])
			return near(v, 0, r*(c*c/4+c/12), 0.01)
		},
		numpyBytes: func(p map[string]int) int64 { return 8 * int64(p["rows"]+p["cols"]) * int64(p["cols"]) },
		goal:       goal{numpy: 0.8, describe: "≥0.8× NumPy"},
	},
}

// dataWorkloads: column mean and variance of a Zarr array on disk. W7
// and W8 share their spec and check, so the list is made by a function.
var dataWorkloads = func() []workload {
	spec := func(p map[string]int) string {
		return fmt.Sprintf("x = from_zarr(%q)\nm = x.mean(axis=0)\nv = x.var(axis=0)\nfetch m, v\n", storeName(p))
	}
	// Each element is 5 + a standard normal: the means of the column
	// means and variances are 5 and 1.
	check := func(p map[string]int, v []float64) error {
		if err := near(v, 0, 5, 0.001); err != nil {
			return err
		}
		return near(v, 1, 1, 0.01)
	}
	return []workload{{
		id:   "W7",
		text: "from_zarr of a 4 GB Zarr array (zstd, 500000 x 1000 float64, chunks 5000 rows): .mean(axis=0), .var(axis=0)",
		params: func(s float64) map[string]int {
			return map[string]int{"rows": scaled(500000, s), "cols": 1000, "rchunk": 5000, "q": 1}
		},
		spec:       spec,
		check:      check,
		store:      true,
		numpyBytes: func(p map[string]int) int64 { return 2 * 8 * int64(p["rows"]) * int64(p["cols"]) },
		goal:       goal{speedup: 3, describe: "≥3× best Dask"},
	}, {
		id:    "W8",
		text:  "W7 over an array whose files are larger than the memory available (zstd, not compressible: 1.25 x MemAvailable)",
		sized: w8Params,
		// Where the machine is not known (tests): as on one with 16 GiB
		// available.
		params:     func(s float64) map[string]int { return w8Params(s, 16<<30) },
		spec:       spec,
		check:      check,
		store:      true,
		numpyBytes: func(p map[string]int) int64 { return 2 * 8 * int64(p["rows"]) * int64(p["cols"]) },
		goal:       goal{peakMiB: 4096, describe: "completes, peak < 4 GiB"},
	}}
}()

// w8Params sizes W8's array at 1.25 times the memory available or more,
// rounded up to a whole 4 GB (500000 rows), so that the array written once
// fits the next runs too while the memory available drifts.
func w8Params(s float64, avail int64) map[string]int {
	rows := int(math.Ceil(float64(avail)*1.25/8000/500000)) * 500000
	return map[string]int{"rows": scaled(float64(rows), s), "cols": 1000, "rchunk": 5000, "q": 0}
}

// near checks that v[i] is want within the relative tolerance tol.
func near(v []float64, i int, want, tol float64) error {
	if i >= len(v) {
		return fmt.Errorf("result has %d values, want at least %d", len(v), i+1)
	}
	if d := math.Abs(v[i] - want); d > tol*math.Abs(want) || math.IsNaN(v[i]) {
		return fmt.Errorf("result %d = %g, want %g (within %g%%)", i, v[i], want, tol*100)
	}
	return nil
}

// chunks is the number of chunk operands a workload's creators make, for
// the per-operand time of W4.
func chunks(p map[string]int) int {
	return (p["n"] + p["chunk"] - 1) / p["chunk"]
}
