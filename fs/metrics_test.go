package fs

import (
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"marsfs/exec/sched"
)

// localCluster shows the in-process worker of a test's scheduler under
// /cluster, as `marsfs up --workers 0` does.
type localCluster struct{ run *sched.Scheduler }

func (l localCluster) Members() string   { return sched.LocalWorker + " - scheduler,worker alive\n" }
func (l localCluster) Workers() []string { return []string{sched.LocalWorker} }
func (l localCluster) WorkerStatus(name string) (string, bool) {
	return l.run.WorkerStatus(name)
}
func (l localCluster) Dispatched() uint64 { return l.run.Dispatched() }

// TestMetrics reads /cluster/metrics after a graph has run and parses it
// with Prometheus' own parser of the text format.
func TestMetrics(t *testing.T) {
	run := sched.NewLocal(2)
	t.Cleanup(func() { run.Close() })
	ts := startServerOn(t, Config{Cluster: localCluster{run}}, run)
	c := dial(t, ts.sock)
	s := clone(t, c)
	submit(t, c, s, "y = (arange(100000, chunks=1000) * 2).sum()\n")
	read(t, c, s+"/graphs/1/wait")
	clone(t, c) // a second session, with no graph
	text := read(t, c, "/cluster/metrics")
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus' parser refuses /cluster/metrics: %v\n%s", err, text)
	}
	value := func(name string, labels ...string) float64 {
		t.Helper()
		f, ok := fams[name]
		if !ok {
			t.Fatalf("no %s in:\n%s", name, text)
		}
		if f.GetHelp() == "" {
			t.Errorf("%s has no HELP", name)
		}
	metrics:
		for _, m := range f.Metric {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range m.Label {
					found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}
				if !found {
					continue metrics
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return m.Counter.GetValue()
			case dto.MetricType_GAUGE:
				return m.Gauge.GetValue()
			}
		}
		t.Fatalf("no %s%v in:\n%s", name, labels, text)
		return 0
	}
	for name, f := range fams {
		if f.GetType() == dto.MetricType_COUNTER != strings.HasSuffix(name, "_total") {
			t.Errorf("%s is a %v", name, f.GetType())
		}
	}
	w := sched.LocalWorker
	if v := value("marsfs_worker_up", "worker", w); v != 1 {
		t.Errorf("worker up = %v", v)
	}
	if v := value("marsfs_worker_slots", "worker", w); v != 2 {
		t.Errorf("worker slots = %v", v)
	}
	if v := value("marsfs_worker_operands_run_total", "worker", w); v < 100 {
		t.Errorf("operands run = %v, want at least the 100 map steps", v)
	}
	if v := value("marsfs_worker_slots_busy", "worker", w); v != 0 {
		t.Errorf("slots busy after the graph = %v", v)
	}
	if v := value("marsfs_worker_heap_bytes", "worker", w); v <= 0 {
		t.Errorf("worker heap bytes = %v", v)
	}
	value("marsfs_worker_queue_length", "worker", w)
	value("marsfs_worker_sent_bytes_total", "worker", w)
	value("marsfs_worker_received_bytes_total", "worker", w)
	if v := value("marsfs_scheduler_sessions"); v != 2 {
		t.Errorf("sessions = %v", v)
	}
	if v := value("marsfs_scheduler_graphs", "state", "succeeded"); v != 1 {
		t.Errorf("graphs succeeded = %v", v)
	}
	if v := value("marsfs_scheduler_graphs", "state", "running"); v != 0 {
		t.Errorf("graphs running = %v", v)
	}
	ops := value("marsfs_scheduler_operands", "state", "finished") + value("marsfs_scheduler_operands", "state", "freed")
	if ops < 100 {
		t.Errorf("operands finished or freed = %v", ops)
	}
	if v := value("marsfs_scheduler_dispatched_operands_total"); v < ops {
		t.Errorf("dispatched %v operands for %v done", v, ops)
	}
}
