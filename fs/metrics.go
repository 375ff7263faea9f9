package fs

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"sync"

	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/fs/prom"
)

// /cluster/metrics: the cluster's counters and gauges in the Prometheus
// text exposition format, for a Prometheus server to scrape (through the
// mount, or `marsfs cat`). Each open asks every worker for its status, as
// /cluster/workers/W/status does, and counts the sessions, graphs and
// operands of the scheduler.

// A dispatcher is a Cluster that counts the runs of ops it dispatched.
type dispatcher interface {
	Dispatched() uint64
}

// A recoverer is a Cluster that counts what it did about lost workers.
type recoverer interface {
	WorkersLost() uint64
	AdoptedTotal() uint64
	Recopied() uint64
}

// workerMetric is a key of a worker's status and the metric it becomes.
type workerMetric struct {
	key  string
	name string
	typ  prom.Type
	help string
}

var workerMetrics = []workerMetric{
	{"slots", "marsfs_worker_slots", prom.Gauge, "Operands the worker runs at once."},
	{"running", "marsfs_worker_slots_busy", prom.Gauge, "Slots running an operand now."},
	{"queued", "marsfs_worker_queue_length", prom.Gauge, "Operands (or dispatch units) waiting in the worker's queue."},
	{"chunks", "marsfs_worker_chunks", prom.Gauge, "Chunks the worker holds."},
	{"bytes", "marsfs_worker_chunk_bytes", prom.Gauge, "Bytes of the chunks the worker holds."},
	{"shm_used", "marsfs_worker_shm_bytes", prom.Gauge, "Bytes of shared memory holding chunks."},
	{"shm_limit", "marsfs_worker_shm_limit_bytes", prom.Gauge, "The worker's bound on shared memory (--shm)."},
	{"heap_bytes", "marsfs_worker_heap_chunk_bytes", prom.Gauge, "Bytes of the small chunks kept in the worker's heap rather than shared memory."},
	{"go_heap_bytes", "marsfs_worker_heap_bytes", prom.Gauge, "Bytes of the worker process's Go heap in use (objects)."},
	{"quota_used", "marsfs_worker_quota_used_bytes", prom.Gauge, "Bytes of the memory quota held by running operands."},
	{"quota_limit", "marsfs_worker_quota_limit_bytes", prom.Gauge, "The worker's memory quota (--mem); 0 for none."},
	{"bytes_on_disk", "marsfs_worker_disk_bytes", prom.Gauge, "Bytes of chunks spilled to disk and not yet reloaded."},
	{"spilled_bytes", "marsfs_worker_spilled_bytes_total", prom.Counter, "Bytes of chunks spilled from shared memory to disk."},
	{"reloaded_bytes", "marsfs_worker_reloaded_bytes_total", prom.Counter, "Bytes of spilled chunks brought back into shared memory."},
	{"ops_run", "marsfs_worker_operands_run_total", prom.Counter, "Runs of operands the worker ended, done or failed."},
	{"sent_bytes", "marsfs_worker_sent_bytes_total", prom.Counter, "Chunk bytes the worker served to other workers and the scheduler."},
	{"received_bytes", "marsfs_worker_received_bytes_total", prom.Counter, "Chunk bytes the worker received: inputs fetched from other workers, and uploads."},
	{"mapped_bytes", "marsfs_worker_mapped_bytes_total", prom.Counter, "Bytes of input chunks mapped from the shared memory of workers on the same host."},
}

var graphStates = []engine.GraphState{engine.Preparing, engine.RunningGraph, engine.Succeeded, engine.Failed, engine.CancelledGraph}

var opStates = []core.OpState{core.Unscheduled, core.Ready, core.Running, core.Finished, core.Freed, core.Fatal, core.Cancelling, core.Cancelled}

// metricsText renders /cluster/metrics.
func (s *Server) metricsText() (string, error) {
	var fams []prom.Family
	fams = append(fams, s.workerFamilies()...)
	fams = append(fams, s.schedulerFamilies()...)
	var b bytes.Buffer
	if err := prom.Write(&b, fams); err != nil {
		return "", err
	}
	return b.String(), nil
}

// workerFamilies asks every worker for its status, all at once, and
// makes a sample of each number it reports, labelled with the worker.
func (s *Server) workerFamilies() []prom.Family {
	cl := s.cfg.Cluster
	names := cl.Workers()
	status := make([]map[string]float64, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if text, ok := cl.WorkerStatus(name); ok {
				status[i] = statusNumbers(text)
			}
		}()
	}
	wg.Wait()
	up := prom.Family{Name: "marsfs_worker_up", Type: prom.Gauge, Help: "1 when the worker answered for its status, else 0."}
	fams := make([]prom.Family, len(workerMetrics))
	for j, m := range workerMetrics {
		fams[j] = prom.Family{Name: m.name, Type: m.typ, Help: m.help}
	}
	for i, name := range names {
		if status[i] == nil {
			up.Add(0, "worker", name)
			continue
		}
		up.Add(1, "worker", name)
		for j, m := range workerMetrics {
			if v, ok := status[i][m.key]; ok {
				fams[j].Add(v, "worker", name)
			}
		}
	}
	return append([]prom.Family{up}, fams...)
}

// statusNumbers reads the "key value" lines of a worker's status whose
// value is a number.
func statusNumbers(text string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			out[k] = f
		}
	}
	return out
}

// schedulerFamilies counts the scheduler's sessions, their graphs by
// state, the operands of those graphs by state, and the runs dispatched.
func (s *Server) schedulerFamilies() []prom.Family {
	sessions := s.eng.Sessions()
	graphs := map[engine.GraphState]int{}
	ops := map[core.OpState]int{}
	for _, sess := range sessions {
		for _, g := range sess.Graphs() {
			graphs[g.Status().State]++
			for _, st := range g.OpStates() {
				ops[st]++
			}
		}
	}
	sf := prom.Family{Name: "marsfs_scheduler_sessions", Type: prom.Gauge, Help: "Open sessions."}
	sf.Add(float64(len(sessions)))
	gf := prom.Family{Name: "marsfs_scheduler_graphs", Type: prom.Gauge, Help: "Graphs of the open sessions, by state."}
	for _, st := range graphStates {
		gf.Add(float64(graphs[st]), "state", strings.ToLower(st.String()))
	}
	of := prom.Family{Name: "marsfs_scheduler_operands", Type: prom.Gauge, Help: "Chunk operands of the graphs of the open sessions, by state."}
	for _, st := range opStates {
		of.Add(float64(ops[st]), "state", strings.ToLower(st.String()))
	}
	fams := []prom.Family{sf, gf, of}
	if d, ok := s.cfg.Cluster.(dispatcher); ok {
		df := prom.Family{Name: "marsfs_scheduler_dispatched_operands_total", Type: prom.Counter,
			Help: "Runs of operands the scheduler sent to workers; its rate is the dispatch rate."}
		df.Add(float64(d.Dispatched()))
		fams = append(fams, df)
	}
	made, failed := s.eng.Recomputed()
	rf := prom.Family{Name: "marsfs_scheduler_chunks_recomputed_total", Type: prom.Counter,
		Help: "Kept chunks lost with their workers and made again from lineage, by result."}
	rf.Add(float64(made), "result", "made")
	rf.Add(float64(failed), "result", "failed")
	fams = append(fams, rf)
	if r, ok := s.cfg.Cluster.(recoverer); ok {
		for _, f := range []struct {
			name, help string
			v          uint64
		}{
			{"marsfs_scheduler_workers_lost_total", "Connected workers dropped: dead, declared failed, or gone.", r.WorkersLost()},
			{"marsfs_scheduler_chunks_adopted_total", "Chunks lost with a worker's connection and taken back, not recomputed, when it or another scheduler's worker offered them.", r.AdoptedTotal()},
			{"marsfs_scheduler_upload_copies_made_total", "Second copies of uploaded chunks made after the upload (a copy lost with its worker, or no second worker at the upload).", r.Recopied()},
		} {
			fam := prom.Family{Name: f.name, Type: prom.Counter, Help: f.help}
			fam.Add(float64(f.v))
			fams = append(fams, fam)
		}
	}
	if s.cfg.Metrics != nil {
		fams = append(fams, s.cfg.Metrics()...)
	}
	return fams
}
