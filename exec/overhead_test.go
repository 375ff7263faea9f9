package exec

import (
	"context"
	"testing"
	"time"
)

// overheadSpec makes 100,000 chunks of ten elements, adds one to each and
// sums them: some 133,000 operands (ones and +1 make one operand a chunk,
// then the sum's tree) whose kernels do next to nothing, so the time per
// operand is what the runtime costs.
const overheadSpec = "s = (ones(1000000, chunks=10) + 1).sum()"

// BenchmarkOperandOverhead runs overheadSpec on a scheduler with two worker
// processes of two slots, like marsfs up, and reports the time per operand.
func BenchmarkOperandOverhead(b *testing.B) {
	tc := newTestCluster(b, 2, true)
	e := NewEngine(tc.s)
	defer e.Close()
	sess, err := e.NewSession("bench")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var ops int
	var took time.Duration
	b.ResetTimer()
	for range b.N {
		begin := time.Now()
		g, err := sess.Submit(overheadSpec)
		if err != nil {
			b.Fatal(err)
		}
		st := g.Wait(ctx)
		if st.State != Succeeded {
			b.Fatalf("graph %v: %s", st.State, g.Err())
		}
		took += time.Since(begin)
		ops += st.Operands
	}
	b.StopTimer()
	tt, _ := sess.Tensor("s")
	a, err := tt.Fetch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if v := a.Float64s()[0]; v != 2e6 {
		b.Fatalf("sum %v, want 2e6", v)
	}
	b.ReportMetric(float64(took.Microseconds())/float64(ops), "µs/op")
	b.ReportMetric(float64(ops)/float64(b.N), "operands")
}
