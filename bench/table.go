package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// print writes the summary table, the goals, and every result, as
// Markdown tables.
func (rep *report) print(w io.Writer) {
	fmt.Fprintf(w, "Machine: %v\n", rep.machine)
	fmt.Fprintf(w, "marsfs BLAS: %s.\n", rep.blas)
	fmt.Fprintf(w, "Load average at the end: %s.\n", describeMachine().loadavg)
	fmt.Fprintf(w, "Scale %g of the full sizes; up to %d runs each, medians.\n\n", rep.scale, rep.runs)
	fmt.Fprintln(w, "| id | marsfs s | best Dask s | Dask ÷ marsfs | NumPy s | peak MiB marsfs | peak MiB Dask | peak MiB NumPy | goal | met |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, rw := range rep.rows {
		m := rw.find("marsfs")
		best := rw.bestDask()
		np := rw.find("numpy")
		ratio := "-"
		if m.ok() && best.ok() {
			ratio = fmt.Sprintf("%.2f×", best.median()/m.median())
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			rw.w.id, secs(m), secs(best)+dashEngine(best), ratio, secs(np),
			peak(m), peak(best), peak(np), rw.w.goal.describe, rw.met())
	}
	fmt.Fprintln(w)
	for _, rw := range rep.rows {
		fmt.Fprintf(w, "- %s: %s; sizes %v\n", rw.w.id, rw.w.text, rw.params)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| id | engine | runs | median s | min s | peak MiB above idle | result | note |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, rw := range rep.rows {
		for _, r := range rw.results {
			note := ""
			if r.operands > 0 {
				note = fmt.Sprintf("%d operands, chunks alive at most %s MiB", r.operands, mib(r.chunks))
				if rw.w.reportTransf {
					note += fmt.Sprintf(", transfer %.1f MB", float64(r.transfer)/1e6)
				}
			}
			if r.err != nil {
				note = strings.ReplaceAll(r.err.Error(), "\n", " ")
			}
			minT := "-"
			if len(r.times) > 0 {
				minT = fmt.Sprintf("%.3f", slices.Min(r.times))
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s |\n",
				rw.w.id, r.engine, len(r.times), secs(r), minT, peak(r), values(r.value), note)
		}
	}
	if len(rep.notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range rep.notes {
			fmt.Fprintf(w, "Note: %s\n", n)
		}
	}
}

// failed reports whether a marsfs run failed or gave a wrong result.
func (rep *report) failed() bool {
	for _, rw := range rep.rows {
		if !rw.find("marsfs").ok() {
			return true
		}
	}
	return false
}

// find returns the result of an engine, or an empty one.
func (rw *row) find(engine string) result {
	for _, r := range rw.results {
		if r.engine == engine {
			return r
		}
	}
	return result{engine: engine}
}

// bestDask is the fastest Dask configuration that finished right.
func (rw *row) bestDask() result {
	best := result{engine: "dask"}
	for _, r := range rw.results {
		if strings.HasPrefix(r.engine, "dask ") && r.ok() && (!best.ok() || r.median() < best.median()) {
			best = r
		}
	}
	return best
}

// met says whether marsfs meets the workload's goals, and by how much.
func (rw *row) met() string {
	g := rw.w.goal
	m := rw.find("marsfs")
	if !m.ok() {
		return "marsfs failed"
	}
	var parts []string
	verdict := func(ok bool, s string) {
		parts = append(parts, map[bool]string{true: "yes", false: "no"}[ok]+" ("+s+")")
	}
	if g.speedup > 0 {
		if b := rw.bestDask(); b.ok() {
			r := b.median() / m.median()
			verdict(r >= g.speedup, fmt.Sprintf("%.2f×", r))
		} else {
			parts = append(parts, "no Dask time")
		}
	}
	if g.dgemm > 0 {
		if d := rw.find("dgemm"); d.ok() {
			flops := 2 * math.Pow(float64(rw.params["m"]), 3)
			have, peak := flops/m.median()/1e9, flops/slices.Min(d.times)/1e9
			verdict(have >= g.dgemm*peak, fmt.Sprintf("%.1f of %.1f GFLOP/s, %.1f%%", have, peak, 100*have/peak))
		} else {
			parts = append(parts, "no DGEMM rate")
		}
	}
	if g.numpy > 0 {
		if np := rw.find("numpy"); np.ok() {
			r := np.median() / m.median()
			verdict(r >= g.numpy, fmt.Sprintf("%.2f× NumPy", r))
		} else {
			parts = append(parts, "no NumPy time")
		}
	}
	if g.usPerOp > 0 && m.operands > 0 {
		us := m.median() / float64(m.operands) * 1e6
		verdict(us <= g.usPerOp, fmt.Sprintf("%.1f µs an operand", us))
	}
	if g.peakMiB > 0 {
		p := float64(m.peak) / (1 << 20)
		verdict(p < g.peakMiB, fmt.Sprintf("peak %.0f MiB", p))
	}
	return strings.Join(parts, ", ")
}

func secs(r result) string {
	switch {
	case r.timedOut && len(r.times) == 0:
		return "timeout"
	case r.err != nil && len(r.times) == 0:
		return "failed"
	case len(r.times) == 0:
		return "-"
	case r.timedOut:
		return fmt.Sprintf("%.3f (of the runs in time)", r.median())
	case r.err != nil:
		return fmt.Sprintf("%.3f (wrong)", r.median())
	}
	return fmt.Sprintf("%.3f", r.median())
}

func dashEngine(r result) string {
	if !r.ok() {
		return ""
	}
	return " (" + strings.TrimPrefix(r.engine, "dask ") + ")"
}

func peak(r result) string {
	if len(r.times) == 0 {
		return "-"
	}
	return mib(r.peak)
}

func mib(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }

func fmtTimes(t []float64) string {
	s := make([]string, len(t))
	for i, x := range t {
		s[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(s, " ")
}

func values(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.6g", x)
	}
	return strings.Join(s, ", ")
}
