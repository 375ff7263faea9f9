package spec

import (
	"fmt"
	"strings"
)

// dumpGraph renders a graph one node a line, for tests:
// "2 add(0,1) [3,4] float64".
func dumpGraph(g *Graph) string {
	var b strings.Builder
	for _, n := range g.Nodes {
		ins := make([]string, len(n.Inputs))
		for i, in := range n.Inputs {
			ins[i] = fmt.Sprint(in.ID)
		}
		fmt.Fprintf(&b, "%d %s(%s) %s %s", n.ID, n.Op, strings.Join(ins, ","), ShapeString(n.Shape), n.DType)
		if n.Weak {
			b.WriteString(" weak")
		}
		b.WriteString("\n")
	}
	for _, o := range g.Outputs {
		fmt.Fprintf(&b, "-> %s=%d\n", o.Name, o.Node.ID)
	}
	return b.String()
}
