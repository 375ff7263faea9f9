package main

import "fmt"

// The workloads of the shuffle (issue 21), in a file of their own and
// named apart from the W series.
var shuffleWorkloads = []workload{
	{
		id:   "SORT",
		text: "sort(x), x = rand(1e8), chunks 1e7 (a sample sort of 10 blocks), every 10⁶-th value fetched",
		params: func(s float64) map[string]int {
			return map[string]int{"n": scaled(1e8, s), "chunk": scaled(1e7, s), "step": scaled(1e6, s)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = rand(%d, chunks=%d, seed=1)\nr = sort(x)[::%d]\n", p["n"], p["chunk"], p["step"])
		},
		// 100 evenly spaced order statistics of uniform values.
		check:      func(p map[string]int, v []float64) error { return near(v, 0, 0.495, 0.02) },
		numpyBytes: func(p map[string]int) int64 { return 16 * int64(p["n"]) },
		noDask:     true, // Dask has no sort of a whole array
		goal:       goal{numpy: 1.5, describe: "≥1.5× NumPy's np.sort"},
	},
	{
		id:   "RECHUNK",
		text: "rand(20000, 25000) (4 GB) in column strips (20000, 1000) rechunked to row strips (800, 25000), then .sum(axis=1); run it with --up-args \"--shm 1G\"",
		params: func(s float64) map[string]int {
			return map[string]int{"rows": scaled(20000, s), "cols": 25000, "cstrip": 1000, "rstrip": scaled(800, s)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = rand(%d, %d, chunks=(%d, %d), seed=1)\nr = x.rechunk((%d, %d)).sum(axis=1)\n",
				p["rows"], p["cols"], p["rows"], p["cstrip"], p["rstrip"], p["cols"])
		},
		check:      func(p map[string]int, v []float64) error { return near(v, 0, float64(p["cols"])/2, 0.01) },
		numpyBytes: func(p map[string]int) int64 { return 8 * int64(p["rows"]) * int64(p["cols"]) },
		goal:       goal{speedup: 1, describe: "completes within --shm 1G; beside Dask's rechunk"},
	},
	{
		id:   "RECHUNKT",
		text: "RECHUNK the other way: rand(20000, 25000) in row strips (800, 25000) rechunked to column strips (20000, 1000) (each row strip split by a rechunk.split map op), then .sum(axis=0); run it with --up-args \"--shm 1G\"",
		params: func(s float64) map[string]int {
			return map[string]int{"rows": scaled(20000, s), "cols": 25000, "cstrip": 1000, "rstrip": scaled(800, s)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = rand(%d, %d, chunks=(%d, %d), seed=1)\nr = x.rechunk((%d, %d)).sum(axis=0)\n",
				p["rows"], p["cols"], p["rstrip"], p["cols"], p["rows"], p["cstrip"])
		},
		check:      func(p map[string]int, v []float64) error { return near(v, 0, float64(p["rows"])/2, 0.01) },
		numpyBytes: func(p map[string]int) int64 { return 8 * int64(p["rows"]) * int64(p["cols"]) },
		noDask:     true,
		goal:       goal{speedup: 0, describe: "completes within --shm 1G"},
	},
}
