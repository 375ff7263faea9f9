package svg

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// palette holds distinguishable colours (Tableau 10, then more), for op
// kinds and workers in their order.
var palette = []string{
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
	"#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8",
}

// colours assigns a colour of the palette to each name, in sorted order, so
// that the same names get the same colours in every picture; names beyond
// the palette share its colours again.
func colours(names []string) map[string]string {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	out := make(map[string]string, len(sorted))
	i := 0
	for _, n := range sorted {
		if _, ok := out[n]; ok {
			continue
		}
		out[n] = palette[i%len(palette)]
		i++
	}
	return out
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		default:
			if r < 0x20 && r != '\t' && r != '\n' {
				continue // not allowed in XML 1.0
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// num formats a coordinate with at most two decimals.
func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "0"
	}
	s := fmt.Sprintf("%.2f", x)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

// A writer writes SVG text and remembers the first error.
type writer struct {
	w   io.Writer
	err error
}

func (w *writer) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.w, format, args...)
	}
}

func (w *writer) header(width, height float64, title string) {
	w.printf(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %[1]s %[2]s" font-family="DejaVu Sans, Verdana, sans-serif" font-size="12">`+"\n",
		num(width), num(height))
	w.printf("<title>%s</title>\n", esc(title))
	w.printf(`<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", num(width), num(height))
}

func (w *writer) text(x, y float64, anchor, style, s string) {
	if style != "" {
		style = " " + style
	}
	w.printf(`<text x="%s" y="%s" text-anchor="%s"%s>%s</text>`+"\n", num(x), num(y), anchor, style, esc(s))
}

func (w *writer) end() error {
	w.printf("</svg>\n")
	return w.err
}

// ticks returns the positions of an axis' ticks over [0, span]: a step of
// 1, 2 or 5 times a power of ten, giving at most max ticks.
func ticks(span float64, max int) (step float64, n int) {
	if span <= 0 || max < 1 {
		return 1, 1
	}
	raw := span / float64(max)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * p; step >= raw {
			break
		}
	}
	return step, int(math.Floor(span/step+1e-9)) + 1
}

// seconds formats a tick's label with the decimals its step needs.
func seconds(v, step float64) string {
	d := 0
	for s := step; s < 1-1e-9 && d < 6; s *= 10 {
		d++
	}
	return fmt.Sprintf("%.*fs", d, v)
}

// clip shortens s to at most n characters, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 2 {
		return string(r[:n])
	}
	return string(r[:n-1]) + "…"
}
