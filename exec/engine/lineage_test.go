package engine

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// ops builds a chunk graph from "kind:in,in" specs, op k making chunk
// ids[k]; a kind "stored=ID" names chunk ID.
func ops(t *testing.T, specs ...string) *chunk.Graph {
	t.Helper()
	g := &chunk.Graph{}
	for k, s := range specs {
		kind, ins, _ := strings.Cut(s, ":")
		op := &chunk.Op{Key: k, Kind: chunk.Kind(kind), Shape: []int{4}, DType: tensor.Float64}
		if id, ok := strings.CutPrefix(kind, "stored="); ok {
			op.Kind = "stored"
			fmt.Sscan(id, &op.Stored)
		}
		for _, in := range strings.Split(ins, ",") {
			if in != "" {
				var i int
				fmt.Sscan(in, &i)
				op.Inputs = append(op.Inputs, i)
			}
		}
		g.Ops = append(g.Ops, op)
	}
	return g
}

// describeJob renders a restore job: one op a line, "ID kind inputs".
func describeJob(ids []uint64, g *chunk.Graph) string {
	var b strings.Builder
	for k, op := range g.Ops {
		var ins []string
		for _, in := range op.Inputs {
			ins = append(ins, fmt.Sprint(ids[in]))
		}
		fmt.Fprintf(&b, "%d %s [%s]\n", ids[k], op.Kind, strings.Join(ins, " "))
	}
	return b.String()
}

// TestRestoreJob builds the lineage of two graphs, the second reading the
// first's kept chunk, and the jobs that make lost chunks again: they keep
// every chunk's ID, go down the first graph's lineage only for what is
// gone, and leave out what no lost chunk needs.
func TestRestoreJob(t *testing.T) {
	// Graph 1: a = rand, b = rand, c = a + b (kept, 12), d = rand (not kept).
	g1 := ops(t, "rand", "rand", "add:0,1", "rand")
	l1 := newLineage(g1, []uint64{10, 11, 12, 13}, []int{2}, func(uint64) *Lineage { return nil })
	if l1.Ops() != 3 {
		t.Errorf("graph 1's lineage holds %d ops, want 3 (d is not kept)", l1.Ops())
	}
	// Graph 2: e = -c (kept, 21), reading c as a stored op.
	g2 := ops(t, "stored=12", "neg:0")
	l2 := newLineage(g2, []uint64{12, 21}, []int{1}, func(id uint64) *Lineage {
		if id == 12 {
			return l1
		}
		return nil
	})
	if l2.Ops() != 2 || len(l2.parents) != 1 {
		t.Errorf("graph 2's lineage: %d ops, %d parents", l2.Ops(), len(l2.parents))
	}
	for _, tc := range []struct {
		exists map[uint64]bool
		want   string
	}{
		{map[uint64]bool{12: true}, "12 stored []\n21 neg [12]\n"},
		{map[uint64]bool{}, "10 rand []\n11 rand []\n12 add [10 11]\n21 neg [12]\n"},
	} {
		job, err := restoreJob(l2, []uint64{21}, func(id uint64) bool { return tc.exists[id] })
		if err != nil {
			t.Fatal(err)
		}
		if got := describeJob(job.IDs, job.Graph); got != tc.want {
			t.Errorf("with %v:\n%s\nwant\n%s", tc.exists, got, tc.want)
		}
		if len(job.Keep) != 1 || !job.Keep[21] {
			t.Errorf("keeps %v", job.Keep)
		}
	}
	// A chunk no lineage makes (an upload's): no job.
	g3 := ops(t, "stored=99", "neg:0")
	l3 := newLineage(g3, []uint64{99, 31}, []int{1}, func(uint64) *Lineage { return nil })
	if _, err := restoreJob(l3, []uint64{31}, func(uint64) bool { return false }); err == nil || !strings.Contains(err.Error(), ErrNoLineage.Error()) {
		t.Errorf("restore from a lost upload: %v", err)
	}
}

// TestLineageWhole builds the lineage of a graph all of whose ops its kept
// chunk needs: it holds the graph's own columns, and a restore reads the
// inputs' chunk IDs through them.
func TestLineageWhole(t *testing.T) {
	g := ops(t, "rand", "rand", "add:0,1", "neg:2")
	ids := []uint64{40, 41, 42, 43}
	l := newLineage(g, ids, []int{3}, func(uint64) *Lineage { return nil })
	if l.Ops() != 4 || &l.ops[0] != &g.Ops[0] || &l.ids[0] != &ids[0] || l.ins != nil {
		t.Errorf("the whole graph's lineage copies its columns: %d ops, %d inputs", l.Ops(), len(l.ins))
	}
	job, err := restoreJob(l, []uint64{43}, func(id uint64) bool { return id == 41 })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describeJob(job.IDs, job.Graph), "40 rand []\n41 stored []\n42 add [40 41]\n43 neg [42]\n"; got != want {
		t.Errorf("restore job:\n%s\nwant\n%s", got, want)
	}
}

// BenchmarkLineage builds the lineage of a graph of a million chunks, a
// generator a chunk summed by a tree of four-way combines, all kept: the
// heap it retains beside the graph is what a kept tensor of a million
// chunks costs to be made again.
func BenchmarkLineage(b *testing.B) {
	const n = 1 << 20
	g := &chunk.Graph{}
	var level []int
	for k := 0; k < n; k++ {
		g.Ops = append(g.Ops, &chunk.Op{Key: k, Kind: "rand", Shape: []int{1000}, DType: tensor.Float64})
		level = append(level, k)
	}
	for len(level) > 1 {
		var next []int
		for i := 0; i < len(level); i += 4 {
			op := &chunk.Op{Key: len(g.Ops), Kind: "sum.combine", Inputs: level[i:min(i+4, len(level))], DType: tensor.Float64}
			g.Ops = append(g.Ops, op)
			next = append(next, op.Key)
		}
		level = next
	}
	ids := make([]uint64, len(g.Ops))
	keep := make([]int, len(g.Ops))
	for k := range ids {
		ids[k], keep[k] = uint64(k+1), k
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := newLineage(g, ids, keep, func(uint64) *Lineage { return nil })
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		newLineage(g, ids, keep, func(uint64) *Lineage { return nil })
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(l.Ops()), "B/op-kept")
	b.ReportMetric(float64(l.Ops()), "ops")
}
