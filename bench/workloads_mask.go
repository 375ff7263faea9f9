package main

import "fmt"

// The workloads of boolean masks (issue 21), in a file of their own and
// named apart from the W series.
var maskWorkloads = []workload{
	{
		id:   "MASK",
		text: "x[x > 0.5].sum(), x = rand(2e8), chunks 1e7 (a mask's sum: one fused pass)",
		params: func(s float64) map[string]int {
			return map[string]int{"n": scaled(2e8, s), "chunk": scaled(1e7, s)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = rand(%d, chunks=%d, seed=1)\nr = x[x > 0.5].sum()\n", p["n"], p["chunk"])
		},
		// Half the values pass, of mean 3/4.
		check:      func(p map[string]int, v []float64) error { return near(v, 0, float64(p["n"])*3/8, 0.005) },
		numpyBytes: func(p map[string]int) int64 { return 13 * int64(p["n"]) },
		goal:       goal{speedup: 3, describe: "≥3× best Dask"},
	},
	{
		id:   "MASKMAX",
		text: "x[x > 0.5].max(), x = rand(2e8), chunks 1e7 (rewritten too, with a check for an empty mask)",
		params: func(s float64) map[string]int {
			return map[string]int{"n": scaled(2e8, s), "chunk": scaled(1e7, s)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = rand(%d, chunks=%d, seed=1)\nr = x[x > 0.5].max()\n", p["n"], p["chunk"])
		},
		check:      func(p map[string]int, v []float64) error { return near(v, 0, 1, 1e-5) },
		numpyBytes: func(p map[string]int) int64 { return 13 * int64(p["n"]) },
		goal:       goal{speedup: 3, describe: "≥3× best Dask"},
	},
}
