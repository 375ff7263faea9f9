package fs

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"marsfs/exec/engine"
	"marsfs/fs/svg"
)

// The pictures of a graph: timeline.svg, the run so far, and plan.svg,
// the chunk graph as placed. Each open draws them afresh from what the
// engine holds (fs/svg draws; this file gathers the data).

// timelineSVG draws graph g's run so far: one row a worker slot, one bar
// an operand's run, as its workers measured it.
func timelineSVG(g *engine.Graph, title string) string {
	runs := g.Runs()
	ops := g.Chunks().Ops
	st := g.Status()
	tl := svg.Timeline{
		Title: fmt.Sprintf("%s: %s, %d/%d operands, %.3fs", title, st.State, st.Finished, st.Operands, st.Elapsed.Seconds()),
		Start: g.Started().UnixMicro(),
	}
	end := g.Ended()
	if end.IsZero() {
		end = time.Now()
	}
	tl.Now = end.UnixMicro()
	rows := map[svg.Row]int{}
	for _, r := range runs {
		t := r.Timing
		if t.Started == 0 {
			continue
		}
		rows[svg.Row{Worker: r.Worker, Slot: t.Slot}] = 0
		// The workers' clock may run a little apart from the server's.
		tl.Start = min(tl.Start, t.Received)
		tl.Now = max(tl.Now, t.Stored, t.Since)
	}
	for r := range rows {
		tl.Rows = append(tl.Rows, r)
	}
	sort.Slice(tl.Rows, func(i, j int) bool {
		a, b := tl.Rows[i], tl.Rows[j]
		return a.Worker < b.Worker || a.Worker == b.Worker && a.Slot < b.Slot
	})
	for i, r := range tl.Rows {
		rows[r] = i
	}
	for _, r := range runs {
		t := r.Timing
		if t.Started == 0 || r.Key >= len(ops) {
			continue
		}
		op := ops[r.Key]
		name := op.Name()
		tl.Bars = append(tl.Bars, svg.Bar{
			Row: rows[svg.Row{Worker: r.Worker, Slot: t.Slot}], Kind: name,
			Label:      fmt.Sprintf("%d %s on %s/%d:", r.Key, name, r.Worker, t.Slot),
			Allocating: t.Started, Loading: t.Allocated, Computing: t.Loaded, Storing: t.Computed, End: t.Stored,
			Fetched: t.Fetched, Spilled: t.Spilled,
		})
	}
	var b bytes.Buffer
	svg.WriteTimeline(&b, tl)
	return b.String()
}

// planSVG draws graph g's chunk graph as placed: operands coloured by the
// worker the plan gives them, fused members named; a large graph summarized
// by tensor and worker.
func planSVG(g *engine.Graph, title string) string {
	cg := g.Chunks()
	p, ok := g.Plan()
	pic := svg.Plan{Title: title + ": the chunk graph after fusion and assignment"}
	for _, op := range cg.Ops {
		// A tensor (the graph node its ops were tiled from) has ops of
		// several kinds (a reduction's map, combine and final steps): the
		// summary shows each kind apart.
		po := svg.PlanOp{Key: op.Key, Name: op.Name(), Inputs: op.Inputs, Group: fmt.Sprintf("#%d %s", op.Node, op.Kind)}
		if ok && op.Key < len(p.Worker) {
			po.Worker = p.Worker[op.Key]
		}
		pic.Ops = append(pic.Ops, po)
	}
	var b bytes.Buffer
	svg.WritePlan(&b, pic)
	return b.String()
}

// graphTitle names a graph in its pictures: "session 3 graph 1".
func graphTitle(sess *engine.Session, g *engine.Graph) string {
	return fmt.Sprintf("session %d graph %d", sess.ID(), g.ID())
}
