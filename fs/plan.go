package fs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
)

// planFile is a graph's plan: its chunk graph after tiling and fusion as
// the runner placed it. The plan is made when the graph starts, so a read
// waits for it (or for the graph to end unplanned).
func planFile(parent string, g *engine.Graph) *node {
	return waitPlan(parent, "plan", g, func() (string, error) { return planText(g), nil })
}

// planPicture is a graph's plan.svg, which waits for the plan as plan does.
func planPicture(parent string, g *engine.Graph, title string) *node {
	return waitPlan(parent, "plan.svg", g, func() (string, error) { return planSVG(g, title), nil })
}

// waitPlan is a file rendered once the graph is planned (or has ended
// unplanned).
func waitPlan(parent, name string, g *engine.Graph, render func() (string, error)) *node {
	return &node{name: name, path: join(parent, name), perm: 0444,
		open: func(c *conn, mode p9.OpenFlags) (handle, error) {
			if mode.Mode() != p9.ReadOnly {
				return nil, linux.EACCES
			}
			ready := make(chan struct{})
			go func() {
				select {
				case <-g.Planned():
				case <-g.Done():
				case <-c.ctx.Done():
				}
				close(ready)
			}()
			return &blocking{c: c, ready: ready, render: render}, nil
		}}
}

// planText renders the plan file: "key value" lines, a blank line, then one
// line an operand, "key op inputs worker priority" (inputs joined by
// commas, "-" for none; worker and priority "-" when not planned).
func planText(g *engine.Graph) string {
	cg := g.Chunks()
	p, ok := g.Plan()
	if !ok {
		p = &engine.Plan{Worker: make([]string, len(cg.Ops))}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "operands %d\n", len(cg.Ops))
	fmt.Fprintf(&b, "workers %d\n", len(p.Workers))
	b.WriteString("initial")
	for i, w := range p.Workers {
		fmt.Fprintf(&b, " %s=%d", w, p.Initial[i])
	}
	if len(p.Workers) == 0 {
		b.WriteString(" -")
	}
	fmt.Fprintf(&b, "\ntransfer_bytes %d\n", p.TransferBytes)
	for _, n := range cg.Notes {
		fmt.Fprintf(&b, "note %s\n", n)
	}
	b.WriteString("peak_bytes")
	for i, w := range p.Workers {
		fmt.Fprintf(&b, " %s=%d", w, p.PeakBytes[i])
	}
	if len(p.Workers) == 0 {
		b.WriteString(" -")
	}
	b.WriteString("\n\n")
	for _, op := range cg.Ops {
		ins := "-"
		if len(op.Inputs) > 0 {
			s := make([]string, len(op.Inputs))
			for i, in := range op.Inputs {
				s[i] = strconv.Itoa(in)
			}
			ins = strings.Join(s, ",")
		}
		worker, prio := p.Worker[op.Key], "-"
		if worker == "" {
			worker = "-"
		}
		if p.Rank != nil {
			prio = strconv.Itoa(int(p.Rank[op.Key]))
		}
		fmt.Fprintf(&b, "%d %s %s %s %s\n", op.Key, opName(g, op.Key), ins, worker, prio)
	}
	return b.String()
}
