package svg

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

// elements parses an SVG document with encoding/xml and counts its
// elements by name; it fails the test on malformed XML.
func elements(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	counts := map[string]int{}
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 && (tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element %v", tok.Name)
			}
			depth++
			counts[tok.Name.Local]++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || counts["svg"] != 1 {
		t.Fatalf("unbalanced document: %v", counts)
	}
	return counts
}

// timeline makes n operands run back to back on rows slots, each dur µs.
func timeline(n, rows int, dur int64) Timeline {
	tl := Timeline{Title: "graph 1 <of session 3>", Start: 1_000_000}
	for r := range rows {
		tl.Rows = append(tl.Rows, Row{Worker: fmt.Sprintf("worker-%d", r/2), Slot: r % 2})
	}
	at := make([]int64, rows)
	for i := range n {
		r := i % rows
		start := tl.Start + 1000 + at[r]
		b := Bar{Row: r, Kind: []string{"expr", "sum.combine", "matmul"}[i%3], Label: fmt.Sprintf("%d op", i),
			Allocating: start, Loading: start + dur/10, Computing: start + dur/5, Storing: start + dur*9/10, End: start + dur}
		if i%7 == 0 {
			b.Fetched = 800
		}
		if i%11 == 0 {
			b.Spilled = 1 << 20
		}
		at[r] += dur
		tl.Bars = append(tl.Bars, b)
		tl.Now = max(tl.Now, b.End)
	}
	return tl
}

func TestTimelineSmall(t *testing.T) {
	tl := timeline(100, 4, 20_000)
	tl.Bars[99].End = 0 // still running: drawn to now
	var b bytes.Buffer
	if err := WriteTimeline(&b, tl); err != nil {
		t.Fatal(err)
	}
	c := elements(t, b.Bytes())
	// Each bar a group with its tooltip; no merging at 100 operands.
	if c["g"] != 100 {
		t.Errorf("%d bar groups for 100 operands", c["g"])
	}
	for _, want := range []string{"worker-0/1", "expr", "sum.combine", "computing", "0.5s", "graph 1 &lt;of session 3&gt;", "(running)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
	if strings.Contains(b.String(), "under a pixel each:") {
		t.Error("bars merged at 100 operands")
	}
}

// TestTimelineLarge draws 100,000 operands of 10 µs: the bars merge, so
// the picture holds a bounded number of elements, and every row is drawn.
func TestTimelineLarge(t *testing.T) {
	tl := timeline(100_000, 4, 10)
	var b bytes.Buffer
	if err := WriteTimeline(&b, tl); err != nil {
		t.Fatal(err)
	}
	c := elements(t, b.Bytes())
	if c["rect"] > 4*int(tlWidth)*2+100 || b.Len() > 2<<20 {
		t.Errorf("100,000 operands drew %d rects in %d bytes", c["rect"], b.Len())
	}
	if !strings.Contains(b.String(), "operands, each under a pixel: ") {
		t.Error("no merged bars")
	}
	t.Logf("100,000 operands: %d bytes, %v", b.Len(), c)
}

func TestTimelineEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTimeline(&b, Timeline{Title: "nothing yet", Start: 5, Now: 5}); err != nil {
		t.Fatal(err)
	}
	elements(t, b.Bytes())
	if !strings.Contains(b.String(), "no operand has run yet") {
		t.Error("an empty timeline does not say so")
	}
}

// reduction is a tree reduction over n leaves, four to a combine, planned
// on two workers.
func reduction(n int) Plan {
	p := Plan{Title: "plan"}
	var level []int
	for i := range n {
		p.Ops = append(p.Ops, PlanOp{Key: i, Name: "fuse(ones+add+sum.map)", Worker: fmt.Sprintf("w%d", i*2/n), Group: "sum #2"})
		level = append(level, i)
	}
	for len(level) > 1 {
		var next []int
		for i := 0; i < len(level); i += 4 {
			k := len(p.Ops)
			ins := level[i:min(i+4, len(level))]
			p.Ops = append(p.Ops, PlanOp{Key: k, Name: "sum.combine", Inputs: append([]int(nil), ins...), Worker: p.Ops[ins[0]].Worker, Group: "sum #3"})
			next = append(next, k)
		}
		level = next
	}
	return p
}

func TestPlanDetail(t *testing.T) {
	p := reduction(16)
	var b bytes.Buffer
	if err := WritePlan(&b, p); err != nil {
		t.Fatal(err)
	}
	c := elements(t, b.Bytes())
	if c["g"]-1 != len(p.Ops) { // and the group of the edges
		t.Errorf("%d operand boxes for %d operands", c["g"]-1, len(p.Ops))
	}
	if c["path"] != len(p.Ops)-1 {
		t.Errorf("%d edges for a tree of %d operands", c["path"], len(p.Ops))
	}
	for _, want := range []string{"fuse(ones+add+sum.map)", "w0", "w1", "depth 3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan lacks %q", want)
		}
	}
}

func TestPlanSummary(t *testing.T) {
	p := reduction(100_000)
	var b bytes.Buffer
	if err := WritePlan(&b, p); err != nil {
		t.Fatal(err)
	}
	c := elements(t, b.Bytes())
	if !strings.Contains(b.String(), "summarized") || c["g"] > 20 || b.Len() > 64<<10 {
		t.Errorf("summary of %d operands: %d boxes, %d bytes", len(p.Ops), c["g"], b.Len())
	}
	if !strings.Contains(b.String(), "50000 × fuse(ones+add+sum.map)") {
		t.Errorf("summary lacks the leaves' count:\n%s", b.String())
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		span  float64
		step  float64
		ticks int
	}{{1, 0.1, 11}, {0.37, 0.05, 8}, {12, 2, 7}, {250, 50, 6}} {
		if step, n := ticks(tc.span, 10); step != tc.step && (step-tc.step)/tc.step > 1e-9 || n != tc.ticks {
			t.Errorf("ticks(%v) = %v, %d; want %v, %d", tc.span, step, n, tc.step, tc.ticks)
		}
	}
}
