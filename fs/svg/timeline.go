package svg

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// A Timeline is a run so far: one row a worker slot, one bar an operand's
// run in its slot. Times are microseconds of one clock (the workers').
type Timeline struct {
	Title string
	Start int64 // the axis' zero: when the graph was submitted
	Now   int64 // the axis' end: now, or when the graph ended
	Rows  []Row
	Bars  []Bar
}

// A Row is one slot of one worker.
type Row struct {
	Worker string
	Slot   int
}

// A Bar is one run of an operand: from Enter[Allocating] (it took its
// slot) to End, shaded by phase. Phases not reached are 0.
type Bar struct {
	Row   int    // index in Timeline.Rows
	Kind  string // the op's kind: the bar's colour
	Label string // what its tooltip says: key and op
	// Allocating, Loading, Computing, Storing: when the run entered each.
	Allocating, Loading, Computing, Storing int64
	End                                     int64 // 0 while it runs
	Fetched                                 int64 // input bytes fetched from other workers: a transfer
	Spilled                                 int64 // bytes its worker spilled by the end of the run
}

// The timeline's geometry, in pixels.
const (
	tlWidth   = 1200.0 // the plot's width
	tlLeft    = 150.0  // the row labels' column
	tlRight   = 20.0
	tlTop     = 40.0
	tlRowH    = 22.0
	tlBarH    = 16.0
	tlAxisH   = 36.0
	tlLegendH = 64.0
)

// phaseOpacity shades the phases of a bar, in the order of Bar's fields:
// allocating, loading, computing (the kind's colour, full), storing.
var phaseOpacity = [4]float64{0.2, 0.45, 1, 0.7}
var phaseNames = [4]string{"allocating", "loading", "computing", "storing"}

// WriteTimeline writes tl as an SVG picture.
func WriteTimeline(out io.Writer, tl Timeline) error {
	span := max(tl.Now-tl.Start, 1)
	height := tlTop + float64(max(len(tl.Rows), 1))*tlRowH + tlAxisH + tlLegendH
	w := &writer{w: out}
	w.header(tlLeft+tlWidth+tlRight, height, tl.Title)
	w.text(tlLeft, 24, "start", `font-size="15" font-weight="bold"`, tl.Title)
	x := func(t int64) float64 { return tlLeft + tlWidth*float64(t-tl.Start)/float64(span) }

	// Rows: a band each, named by worker and slot.
	for i, r := range tl.Rows {
		y := tlTop + float64(i)*tlRowH
		if i%2 == 0 {
			w.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="#f3f3f3"/>`+"\n", num(tlLeft), num(y), num(tlWidth), num(tlRowH))
		}
		w.text(tlLeft-8, y+tlRowH/2+4, "end", "", fmt.Sprintf("%s/%d", clip(r.Worker, 16), r.Slot))
	}
	if len(tl.Rows) == 0 {
		w.text(tlLeft+tlWidth/2, tlTop+tlRowH/2+4, "middle", `fill="#666666"`, "no operand has run yet")
	}

	kinds := map[string]bool{}
	for _, b := range tl.Bars {
		kinds[b.Kind] = true
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	colour := colours(names)

	// Bars, a row at a time in time order; those under a pixel merged.
	byRow := make([][]int, len(tl.Rows))
	for i, b := range tl.Bars {
		if b.Row >= 0 && b.Row < len(byRow) && b.Allocating != 0 {
			byRow[b.Row] = append(byRow[b.Row], i)
		}
	}
	for r, idx := range byRow {
		sort.Slice(idx, func(i, j int) bool { return tl.Bars[idx[i]].Allocating < tl.Bars[idx[j]].Allocating })
		y := tlTop + float64(r)*tlRowH + (tlRowH-tlBarH)/2
		var m merged
		for _, i := range idx {
			b := &tl.Bars[i]
			end := b.End
			if end == 0 {
				end = tl.Now
			}
			x0, x1 := x(b.Allocating), x(max(end, b.Allocating))
			if x1-x0 < 1 {
				// A merged bar ends at a gap of a pixel, or at mergeWidth, so
				// that the kinds' mix shows as it changes along the row.
				if m.n > 0 && (x0 > m.x1+1 || x1 > m.x0+mergeWidth) {
					m.draw(w, y, colour)
					m = merged{}
				}
				m.add(x0, x1, b)
				continue
			}
			if m.n > 0 {
				m.draw(w, y, colour)
				m = merged{}
			}
			drawBar(w, b, x, end, y, colour[b.Kind])
		}
		if m.n > 0 {
			m.draw(w, y, colour)
		}
	}

	// The axis, in seconds since the submission.
	axisY := tlTop + float64(max(len(tl.Rows), 1))*tlRowH
	w.printf(`<line x1="%s" y1="%s" x2="%s" y2="%[2]s" stroke="#333333"/>`+"\n", num(tlLeft), num(axisY), num(tlLeft+tlWidth))
	secs := float64(span) / 1e6
	step, n := ticks(secs, 10)
	for i := range n {
		v := float64(i) * step
		tx := tlLeft + tlWidth*v/secs
		w.printf(`<line x1="%s" y1="%s" x2="%[1]s" y2="%s" stroke="#333333"/>`+"\n", num(tx), num(axisY), num(axisY+5))
		w.text(tx, axisY+18, "middle", "", seconds(v, step))
	}
	w.text(tlLeft+tlWidth, axisY+32, "end", `fill="#555555"`, "seconds since the graph was submitted")

	// The legend: kinds, phases, marks.
	ly := axisY + tlAxisH + 8
	lx := tlLeft
	for _, k := range names {
		w.printf(`<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`+"\n", num(lx), num(ly), colour[k])
		w.text(lx+16, ly+10, "start", "", clip(k, 28))
		lx += 30 + 7.5*float64(len([]rune(clip(k, 28))))
		if lx > tlLeft+tlWidth-150 {
			lx, ly = tlLeft, ly+18
		}
	}
	ly += 22
	lx = tlLeft
	w.text(lx, ly+10, "start", `fill="#555555"`, "phases:")
	lx += 56
	for i, p := range phaseNames {
		w.printf(`<rect x="%s" y="%s" width="24" height="12" fill="#555555" fill-opacity="%s"/>`+"\n", num(lx), num(ly), num(phaseOpacity[i]))
		w.text(lx+28, ly+10, "start", "", p)
		lx += 40 + 7*float64(len(p))
	}
	w.printf(`<path d="M%s %s l5 0 l-2.5 5 z" fill="#000000"/>`+"\n", num(lx), num(ly+2))
	w.text(lx+9, ly+10, "start", "", "input fetched from another worker")
	lx += 240
	w.printf(`<rect x="%s" y="%s" width="3" height="12" fill="#d62728"/>`+"\n", num(lx), num(ly))
	w.text(lx+7, ly+10, "start", "", "spill to disk")
	lx += 100
	w.printf(`<rect x="%s" y="%s" width="24" height="12" fill="#888888" stroke="#000000" stroke-dasharray="2,2"/>`+"\n", num(lx), num(ly))
	w.text(lx+28, ly+10, "start", "", "operands merged (under a pixel each)")
	return w.end()
}

// drawBar draws one run: a segment a phase, then its marks.
func drawBar(w *writer, b *Bar, x func(int64) float64, end int64, y float64, colour string) {
	enter := [4]int64{b.Allocating, b.Loading, b.Computing, b.Storing}
	w.printf("<g><title>%s</title>\n", esc(barTitle(b, end)))
	for i, t := range enter {
		if t == 0 {
			break
		}
		next := end
		if i+1 < len(enter) && enter[i+1] != 0 {
			next = enter[i+1]
		}
		x0, x1 := x(t), x(max(next, t))
		if x1-x0 < 0.05 {
			continue
		}
		w.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="%s"/>`+"\n",
			num(x0), num(y), num(x1-x0), num(tlBarH), colour, num(phaseOpacity[i]))
	}
	x0, x1 := x(b.Allocating), x(end)
	// A white outline parts it from the run before and after it.
	w.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#ffffff" stroke-width="0.8"/>`+"\n",
		num(x0), num(y), num(x1-x0), num(tlBarH))
	if b.Fetched > 0 {
		mx := x0
		if b.Loading != 0 {
			mx = x(b.Loading)
		}
		w.printf(`<path d="M%s %s l5 0 l-2.5 5 z" fill="#000000"/>`+"\n", num(mx), num(y-1))
	}
	if b.Spilled > 0 {
		w.printf(`<rect x="%s" y="%s" width="2" height="%s" fill="#d62728"/>`+"\n", num(x1-1), num(y-2), num(tlBarH+4))
	}
	w.printf("</g>\n")
}

// barTitle is a bar's tooltip: the op and the seconds of each phase.
func barTitle(b *Bar, end int64) string {
	var s strings.Builder
	s.WriteString(b.Label)
	enter := [4]int64{b.Allocating, b.Loading, b.Computing, b.Storing}
	for i, t := range enter {
		if t == 0 {
			break
		}
		next := end
		if i+1 < len(enter) && enter[i+1] != 0 {
			next = enter[i+1]
		}
		fmt.Fprintf(&s, " %s %.6fs", phaseNames[i], float64(next-t)/1e6)
	}
	if b.End == 0 {
		s.WriteString(" (running)")
	}
	if b.Fetched > 0 {
		fmt.Fprintf(&s, "; fetched %d bytes", b.Fetched)
	}
	if b.Spilled > 0 {
		fmt.Fprintf(&s, "; spilled %d bytes", b.Spilled)
	}
	return s.String()
}

// mergeWidth bounds the pixels one merged bar covers.
const mergeWidth = 3.0

// merged is a run of bars under a pixel each, drawn as one.
type merged struct {
	x0, x1  float64
	n       int
	kinds   map[string]int
	fetched bool
	spilled bool
}

func (m *merged) add(x0, x1 float64, b *Bar) {
	if m.n == 0 {
		m.x0, m.kinds = x0, map[string]int{}
	}
	m.x1 = max(m.x1, x1, x0)
	m.n++
	m.kinds[b.Kind]++
	m.fetched = m.fetched || b.Fetched > 0
	m.spilled = m.spilled || b.Spilled > 0
}

// draw draws the run at least a pixel wide, in the colour of its most
// frequent kind.
func (m *merged) draw(w *writer, y float64, colour map[string]string) {
	var top string
	var kinds []string
	for k, n := range m.kinds {
		kinds = append(kinds, k)
		if top == "" || n > m.kinds[top] || n == m.kinds[top] && k < top {
			top = k
		}
	}
	sort.Strings(kinds)
	desc := make([]string, len(kinds))
	for i, k := range kinds {
		desc[i] = fmt.Sprintf("%d %s", m.kinds[k], k)
	}
	width := max(m.x1-m.x0, 1)
	w.printf(`<g><title>%d operands, each under a pixel: %s</title>`+"\n", m.n, esc(strings.Join(desc, ", ")))
	w.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.85"/>`+"\n",
		num(m.x0), num(y), num(width), num(tlBarH), colour[top])
	if m.fetched {
		w.printf(`<path d="M%s %s l5 0 l-2.5 5 z" fill="#000000"/>`+"\n", num(m.x0), num(y-1))
	}
	if m.spilled {
		w.printf(`<rect x="%s" y="%s" width="2" height="%s" fill="#d62728"/>`+"\n", num(m.x0+width-1), num(y-2), num(tlBarH+4))
	}
	w.printf("</g>\n")
}
