package lang

import (
	"fmt"
	"marsfs/tensor/spec"
	"strings"
)

// dumpGraph renders a graph one node a line, for tests:
// "2 add(0,1) [3,4] float64".
func dumpGraph(g *spec.Graph) string {
	var b strings.Builder
	for _, n := range g.Nodes {
		ins := make([]string, len(n.Inputs))
		for i, in := range n.Inputs {
			ins[i] = fmt.Sprint(in.ID)
		}
		fmt.Fprintf(&b, "%d %s(%s) %s %s", n.ID, n.Op, strings.Join(ins, ","), spec.ShapeString(n.Shape), n.DType)
		if n.Weak {
			b.WriteString(" weak")
		}
		b.WriteString("\n")
	}
	for _, o := range g.Outputs {
		fmt.Fprintf(&b, "-> %s=%d\n", o.Name, o.Node.ID)
	}
	for _, s := range g.Sinks {
		fmt.Fprintf(&b, "=> %s %s=%d\n", s.Format, s.Path, s.Node.ID)
	}
	for _, d := range g.Drops {
		fmt.Fprintf(&b, "del %s\n", d)
	}
	return b.String()
}
