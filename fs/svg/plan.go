package svg

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// A Plan is a chunk graph after fusion and initial assignment.
type Plan struct {
	Title string
	Ops   []PlanOp // in key order: an op's inputs come before it
}

// A PlanOp is one operand of the plan.
type PlanOp struct {
	Key    int
	Name   string // its kernel, with a fused op's members: fuse(add+sum.map)
	Inputs []int  // the keys of the ops it reads
	Worker string // where it is planned; "" for nowhere
	Group  string // the tensor it makes a chunk of, for the summary
}

// PlanDetail is the most operands drawn one by one; a larger plan is drawn
// summarized, one box a tensor and worker.
const PlanDetail = 300

// depths returns each op's depth: 0 for an op without inputs, else one
// more than its deepest input.
func depths(ops []PlanOp) []int {
	index := make(map[int]int, len(ops))
	for i, op := range ops {
		index[op.Key] = i
	}
	d := make([]int, len(ops))
	for i, op := range ops {
		for _, in := range op.Inputs {
			if j, ok := index[in]; ok && j < i {
				d[i] = max(d[i], d[j]+1)
			}
		}
	}
	return d
}

// WritePlan writes p as an SVG picture: its operands by depth, left to
// right, coloured by worker, or its summary when it has more than
// PlanDetail operands.
func WritePlan(out io.Writer, p Plan) error {
	if len(p.Ops) > PlanDetail {
		return writeSummary(out, p)
	}
	return writeDetail(out, p)
}

func workerColours(ops []PlanOp) (map[string]string, []string) {
	var names []string
	seen := map[string]bool{}
	for _, op := range ops {
		if w := op.Worker; !seen[w] {
			seen[w] = true
			names = append(names, w)
		}
	}
	sort.Strings(names)
	c := colours(names)
	if _, ok := c[""]; ok {
		c[""] = "#cccccc"
	}
	return c, names
}

func workerName(w string) string {
	if w == "" {
		return "unplanned"
	}
	return w
}

// writeDetail draws every operand as a box in the column of its depth,
// ordered in a column by where its inputs are (so that edges cross less),
// and every input as an edge.
func writeDetail(out io.Writer, p Plan) error {
	d := depths(p.Ops)
	ncol := 0
	for _, x := range d {
		ncol = max(ncol, x+1)
	}
	cols := make([][]int, ncol)
	for i, x := range d {
		cols[x] = append(cols[x], i)
	}
	tallest := 0
	for _, c := range cols {
		tallest = max(tallest, len(c))
	}
	// Boxes of 180x22 with their names, or of 60x10 without when a column
	// is tall (each still has its tooltip).
	boxW, boxH, gapX, gapY, labels := 180.0, 22.0, 60.0, 10.0, true
	if tallest > 40 {
		boxW, boxH, gapX, gapY, labels = 60, 8, 50, 4, false
	}
	index := make(map[int]int, len(p.Ops))
	for i, op := range p.Ops {
		index[op.Key] = i
	}
	// Order each column by the mean row of the inputs (barycentre).
	row := make([]float64, len(p.Ops))
	for _, c := range cols {
		bary := make(map[int]float64, len(c))
		for _, i := range c {
			sum, n := 0.0, 0
			for _, in := range p.Ops[i].Inputs {
				if j, ok := index[in]; ok {
					sum += row[j]
					n++
				}
			}
			bary[i] = float64(i) * 1e-9 // ties in key order
			if n > 0 {
				bary[i] += sum / float64(n)
			} else {
				bary[i] += float64(i)
			}
		}
		sort.SliceStable(c, func(a, b int) bool { return bary[c[a]] < bary[c[b]] })
		for r, i := range c {
			row[i] = float64(r)
		}
	}
	const left, top = 20.0, 46.0
	pos := func(i int) (x, y float64) {
		col := cols[d[i]]
		// A short column is centred on the tallest.
		off := float64(tallest-len(col)) * (boxH + gapY) / 2
		return left + float64(d[i])*(boxW+gapX), top + off + row[i]*(boxH+gapY)
	}
	colour, workers := workerColours(p.Ops)
	width := left*2 + float64(max(ncol, 1))*(boxW+gapX) - gapX
	legendY := top + float64(max(tallest, 1))*(boxH+gapY) + 16
	width = max(width, 640)
	height := legendY + 40
	w := &writer{w: out}
	w.header(width, height, p.Title)
	w.text(left, 24, "start", `font-size="15" font-weight="bold"`, p.Title)
	w.text(width-left, 24, "end", `fill="#555555"`, fmt.Sprintf("%d operands, depth %d, left to right", len(p.Ops), ncol))
	// Edges first, under the boxes.
	w.printf(`<g fill="none" stroke="#9a9a9a" stroke-width="0.8">` + "\n")
	for i, op := range p.Ops {
		x1, y1 := pos(i)
		for _, in := range op.Inputs {
			j, ok := index[in]
			if !ok {
				continue
			}
			x0, y0 := pos(j)
			x0 += boxW
			mx := (x0 + x1) / 2
			w.printf(`<path d="M%[1]s %[2]s C%[3]s %[2]s %[3]s %[4]s %[5]s %[4]s"/>`+"\n", num(x0), num(y0+boxH/2), num(mx), num(y1+boxH/2), num(x1))
		}
	}
	w.printf("</g>\n")
	for i, op := range p.Ops {
		x, y := pos(i)
		w.printf(`<g><title>%s</title>`+"\n", esc(fmt.Sprintf("%d %s on %s, reads %s", op.Key, op.Name, workerName(op.Worker), keys(op.Inputs))))
		w.printf(`<rect x="%s" y="%s" width="%s" height="%s" rx="3" fill="%s" stroke="#333333" stroke-width="0.5"/>`+"\n",
			num(x), num(y), num(boxW), num(boxH), colour[op.Worker])
		if labels {
			w.text(x+5, y+15, "start", `fill="#ffffff" font-size="11"`, clip(fmt.Sprintf("%d %s", op.Key, op.Name), 23))
		}
		w.printf("</g>\n")
	}
	legend(w, left, legendY, workers, colour)
	return w.end()
}

func keys(ks []int) string {
	if len(ks) == 0 {
		return "nothing"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = fmt.Sprint(k)
	}
	return strings.Join(s, ",")
}

func legend(w *writer, x, y float64, workers []string, colour map[string]string) {
	w.text(x, y+10, "start", `fill="#555555"`, "workers:")
	x += 64
	for _, name := range workers {
		w.printf(`<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`+"\n", num(x), num(y), colour[name])
		n := workerName(name)
		w.text(x+16, y+10, "start", "", n)
		x += 28 + 7*float64(len([]rune(n)))
	}
}

// A box of the summary: the operands of one tensor planned on one worker.
type box struct {
	group, worker string
	n             int
	depth         int // the least depth of its operands
	names         map[string]int
}

// writeSummary draws one box a tensor and worker, holding the count of
// their operands, in columns by depth, and one edge a pair of boxes, as
// thick as the log of the inputs it stands for.
func writeSummary(out io.Writer, p Plan) error {
	d := depths(p.Ops)
	type bk struct{ group, worker string }
	boxes := map[bk]*box{}
	var order []bk
	opBox := make([]bk, len(p.Ops))
	index := make(map[int]int, len(p.Ops))
	for i, op := range p.Ops {
		index[op.Key] = i
		k := bk{op.Group, op.Worker}
		b := boxes[k]
		if b == nil {
			b = &box{group: op.Group, worker: op.Worker, depth: d[i], names: map[string]int{}}
			boxes[k] = b
			order = append(order, k)
		}
		b.n++
		b.depth = min(b.depth, d[i])
		b.names[op.Name]++
		opBox[i] = k
	}
	type ek struct{ from, to bk }
	edges := map[ek]int{}
	var edgeOrder []ek
	for i, op := range p.Ops {
		for _, in := range op.Inputs {
			j, ok := index[in]
			if !ok || opBox[j] == opBox[i] {
				continue
			}
			e := ek{opBox[j], opBox[i]}
			if edges[e] == 0 {
				edgeOrder = append(edgeOrder, e)
			}
			edges[e]++
		}
	}
	// Columns: the distinct depths of the boxes, in order; in a column,
	// boxes by group then worker.
	depthSet := map[int]bool{}
	for _, b := range boxes {
		depthSet[b.depth] = true
	}
	var ds []int
	for x := range depthSet {
		ds = append(ds, x)
	}
	sort.Ints(ds)
	colOf := map[int]int{}
	for i, x := range ds {
		colOf[x] = i
	}
	cols := make([][]bk, len(ds))
	for _, k := range order {
		c := colOf[boxes[k].depth]
		cols[c] = append(cols[c], k)
	}
	tallest := 0
	for _, c := range cols {
		sort.SliceStable(c, func(a, b int) bool {
			if c[a].group != c[b].group {
				return c[a].group < c[b].group
			}
			return c[a].worker < c[b].worker
		})
		tallest = max(tallest, len(c))
	}
	const left, top, boxW, boxH, gapX, gapY = 20.0, 50.0, 190.0, 40.0, 80.0, 14.0
	at := map[bk][2]float64{}
	for ci, c := range cols {
		off := float64(tallest-len(c)) * (boxH + gapY) / 2
		for r, k := range c {
			at[k] = [2]float64{left + float64(ci)*(boxW+gapX), top + off + float64(r)*(boxH+gapY)}
		}
	}
	colour, workers := workerColours(p.Ops)
	width := max(left*2+float64(max(len(cols), 1))*(boxW+gapX)-gapX, 720)
	legendY := top + float64(max(tallest, 1))*(boxH+gapY) + 10
	w := &writer{w: out}
	w.header(width, legendY+40, p.Title)
	w.text(left, 24, "start", `font-size="15" font-weight="bold"`, p.Title)
	w.text(left, 40, "start", `fill="#555555"`,
		fmt.Sprintf("%d operands, summarized: a box a tensor's operands of one kind on one worker", len(p.Ops)))
	w.printf(`<g fill="none" stroke="#9a9a9a">` + "\n")
	for _, e := range edgeOrder {
		a, b := at[e.from], at[e.to]
		x0, y0, x1, y1 := a[0]+boxW, a[1]+boxH/2, b[0], b[1]+boxH/2
		if b[0] <= a[0] { // same column: around the right side
			x1 = b[0] + boxW
		}
		mx := (x0 + x1) / 2
		w.printf(`<path d="M%[1]s %[2]s C%[3]s %[2]s %[3]s %[4]s %[5]s %[4]s" stroke-width="%[6]s"><title>%[7]d inputs</title></path>`+"\n",
			num(x0), num(y0), num(mx), num(y1), num(x1), num(0.8+math.Log2(float64(edges[e]))), edges[e])
	}
	w.printf("</g>\n")
	for _, k := range order {
		b, xy := boxes[k], at[k]
		var names []string
		for n := range b.names {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			return b.names[names[i]] > b.names[names[j]] || b.names[names[i]] == b.names[names[j]] && names[i] < names[j]
		})
		desc := make([]string, len(names))
		for i, n := range names {
			desc[i] = fmt.Sprintf("%d %s", b.names[n], n)
		}
		w.printf(`<g><title>%s</title>`+"\n", esc(fmt.Sprintf("%s on %s: %s", b.group, workerName(b.worker), strings.Join(desc, ", "))))
		w.printf(`<rect x="%s" y="%s" width="%s" height="%s" rx="4" fill="%s" stroke="#333333" stroke-width="0.6"/>`+"\n",
			num(xy[0]), num(xy[1]), num(boxW), num(boxH), colour[b.worker])
		w.text(xy[0]+6, xy[1]+16, "start", `fill="#ffffff" font-weight="bold"`, clip(b.group, 26))
		count := fmt.Sprintf("%d × %s", b.names[names[0]], names[0])
		if len(names) > 1 {
			count = fmt.Sprintf("%d operands: %s, …", b.n, count)
		}
		w.text(xy[0]+6, xy[1]+32, "start", `fill="#ffffff" font-size="11"`, clip(count, 30))
		w.printf("</g>\n")
	}
	legend(w, left, legendY, workers, colour)
	return w.end()
}
