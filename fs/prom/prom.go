// Package prom writes metrics in the Prometheus text exposition format
// (version 0.0.4, what a Prometheus server scrapes): for each family a
// "# HELP" and a "# TYPE" line, then one line a sample, "name{label="v"}
// value". It is pure: the caller gathers the numbers, this package names,
// checks and escapes them. Names follow Prometheus' conventions, which
// the callers' names must too: a namespace prefix, base units (bytes,
// seconds) as a suffix, "_total" on counters.
package prom

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Type is a metric family's type.
type Type string

// The types marsfs uses.
const (
	Gauge   Type = "gauge"
	Counter Type = "counter"
)

// A Family is the samples of one metric.
type Family struct {
	Name    string
	Help    string
	Type    Type
	Samples []Sample
}

// A Sample is one value of a family, told apart by its labels.
type Sample struct {
	Labels []Label
	Value  float64
}

// A Label is a name and a value.
type Label struct{ Name, Value string }

// Add appends a sample with the given label pairs (name, value, name,
// value, ...) to f.
func (f *Family) Add(v float64, labels ...string) {
	s := Sample{Value: v}
	for i := 0; i+1 < len(labels); i += 2 {
		s.Labels = append(s.Labels, Label{labels[i], labels[i+1]})
	}
	f.Samples = append(f.Samples, s)
}

// Write writes the families in order, each with its HELP and TYPE lines.
// A family without samples is left out. It fails on a name that the
// format does not allow, on a family named twice, and on a counter whose
// name does not end in _total.
func Write(w io.Writer, fams []Family) error {
	var b strings.Builder
	seen := map[string]bool{}
	for _, f := range fams {
		if !validName(f.Name, true) {
			return fmt.Errorf("prom: bad metric name %q", f.Name)
		}
		if seen[f.Name] {
			return fmt.Errorf("prom: metric %s written twice", f.Name)
		}
		seen[f.Name] = true
		if f.Type == Counter && !strings.HasSuffix(f.Name, "_total") {
			return fmt.Errorf("prom: counter %s does not end in _total", f.Name)
		}
		if len(f.Samples) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.Name, escapeHelp(f.Help), f.Name, f.Type)
		for _, s := range f.Samples {
			b.WriteString(f.Name)
			if len(s.Labels) > 0 {
				b.WriteByte('{')
				for i, l := range s.Labels {
					if !validName(l.Name, false) || strings.HasPrefix(l.Name, "__") {
						return fmt.Errorf("prom: bad label name %q of %s", l.Name, f.Name)
					}
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "%s=\"%s\"", l.Name, escapeLabel(l.Value))
				}
				b.WriteByte('}')
			}
			b.WriteByte(' ')
			b.WriteString(value(s.Value))
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// validName reports whether s is a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)
// or, without colons, a label name.
func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || colon && r == ':' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// escapeHelp escapes a HELP text: backslash and newline.
func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

// escapeLabel escapes a label value: backslash, double quote and newline.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// value formats a sample value as the format wants: integers without an
// exponent where exact, +Inf, -Inf and NaN by those names.
func value(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == math.Trunc(v) && math.Abs(v) < 1<<53:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// SortSamples orders a family's samples by their labels' values, so that
// a scrape lists them the same way every time.
func (f *Family) SortSamples() {
	key := func(s Sample) string {
		var b strings.Builder
		for _, l := range s.Labels {
			b.WriteString(l.Value)
			b.WriteByte(0)
		}
		return b.String()
	}
	sort.SliceStable(f.Samples, func(i, j int) bool { return key(f.Samples[i]) < key(f.Samples[j]) })
}
