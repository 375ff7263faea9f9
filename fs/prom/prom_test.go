package prom

import (
	"bytes"
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parse reads text with Prometheus' own parser of the text format.
func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus' parser refuses the text: %v\n%s", err, text)
	}
	return fams
}

func TestWriteParses(t *testing.T) {
	ops := Family{Name: "marsfs_worker_operands_run_total", Help: "Runs of operands ended on the worker.", Type: Counter}
	ops.Add(12, "worker", "w2")
	ops.Add(3, "worker", `odd "name"\with
newline`)
	ops.SortSamples()
	busy := Family{Name: "marsfs_worker_slots_busy", Help: "Slots running an operand.\nA gauge.", Type: Gauge}
	busy.Add(1.5, "worker", "w1")
	busy.Add(math.Inf(1), "worker", "w3")
	var b bytes.Buffer
	if err := Write(&b, []Family{ops, busy, {Name: "marsfs_empty", Type: Gauge}}); err != nil {
		t.Fatal(err)
	}
	fams := parse(t, b.String())
	if len(fams) != 2 {
		t.Fatalf("%d families:\n%s", len(fams), b.String())
	}
	f := fams["marsfs_worker_operands_run_total"]
	if f.GetType() != dto.MetricType_COUNTER || len(f.Metric) != 2 || f.GetHelp() != ops.Help {
		t.Fatalf("counter family: %v", f)
	}
	if l := f.Metric[0].Label[0]; l.GetValue() != "odd \"name\"\\with\nnewline" || f.Metric[0].Counter.GetValue() != 3 {
		t.Errorf("escaped label came back as %q = %v", l.GetValue(), f.Metric[0].Counter.GetValue())
	}
	g := fams["marsfs_worker_slots_busy"]
	if g.GetType() != dto.MetricType_GAUGE || g.Metric[0].Gauge.GetValue() != 1.5 || !math.IsInf(g.Metric[1].Gauge.GetValue(), 1) {
		t.Errorf("gauge family: %v", g)
	}
	if g.GetHelp() != "Slots running an operand.\nA gauge." {
		t.Errorf("help came back as %q", g.GetHelp())
	}
}

func TestWriteRefuses(t *testing.T) {
	for _, f := range []Family{
		{Name: "marsfs_bytes_sent", Type: Counter, Samples: []Sample{{Value: 1}}}, // a counter without _total
		{Name: "9lives", Type: Gauge, Samples: []Sample{{Value: 1}}},
		{Name: "marsfs_x", Type: Gauge, Samples: []Sample{{Labels: []Label{{"bad-label", "v"}}, Value: 1}}},
		{Name: "marsfs_x", Type: Gauge, Samples: []Sample{{Labels: []Label{{"__name__", "v"}}, Value: 1}}},
	} {
		if err := Write(new(bytes.Buffer), []Family{f}); err == nil {
			t.Errorf("%+v was written", f)
		}
	}
	twice := Family{Name: "marsfs_x", Type: Gauge, Samples: []Sample{{Value: 1}}}
	if err := Write(new(bytes.Buffer), []Family{twice, twice}); err == nil {
		t.Error("a family was written twice")
	}
}
