package sched

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"marsfs/exec/engine"
)

// overheadSpec makes 100,000 chunks of ten elements, adds one to each and
// sums them: some 133,000 operands (ones and +1 make one operand a chunk,
// then the sum's tree) whose kernels do next to nothing, so the time per
// operand is what the runtime costs.
const overheadSpec = "s = (ones(1000000, chunks=10) + 1).sum()"

// BenchmarkOperandOverhead runs overheadSpec on a scheduler with two worker
// processes of two slots, like marsfs up, and reports the time per operand
// and the CPU time per operand of the scheduler's process (tiling included)
// and of the workers' processes together. The machine's cores are shared by
// all three, so the CPU an operand costs bounds the time it takes.
func BenchmarkOperandOverhead(b *testing.B) {
	tc := newTestCluster(b, 2, true)
	e := engine.New(tc.s)
	defer e.Close()
	sess, err := e.NewSession("bench")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var ops int
	var took time.Duration
	sched0, workers0 := selfCPU(b), procsCPU(b, tc)
	b.ResetTimer()
	for range b.N {
		begin := time.Now()
		g, err := sess.Submit(overheadSpec)
		if err != nil {
			b.Fatal(err)
		}
		st := g.Wait(ctx)
		if st.State != engine.Succeeded {
			b.Fatalf("graph %v: %s", st.State, g.Err())
		}
		took += time.Since(begin)
		ops += st.Operands
	}
	b.StopTimer()
	sched, workers := selfCPU(b)-sched0, procsCPU(b, tc)-workers0
	tt, _ := sess.Tensor("s")
	a, err := tt.Fetch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if v := a.Float64s()[0]; v != 2e6 {
		b.Fatalf("sum %v, want 2e6", v)
	}
	b.ReportMetric(float64(took.Microseconds())/float64(ops), "µs/op")
	b.ReportMetric(float64(sched.Microseconds())/float64(ops), "sched-cpu-µs/op")
	b.ReportMetric(float64(workers.Microseconds())/float64(ops), "workers-cpu-µs/op")
	b.ReportMetric(float64(ops)/float64(b.N), "operands")
}

// selfCPU returns the user and system CPU time this process has used.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procsCPU returns the user and system CPU time the cluster's worker
// processes have used, from /proc/PID/stat.
func procsCPU(b *testing.B, tc *testCluster) time.Duration {
	var total time.Duration
	for _, cmd := range tc.procs {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if err != nil {
			b.Fatal(err)
		}
		// The fields after the command's name, which ends in ')': utime
		// and stime are the 14th and 15th of the line, in clock ticks.
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		var ut, st int64
		if len(f) < 13 {
			b.Fatalf("malformed /proc/%d/stat", cmd.Process.Pid)
		}
		fmt.Sscan(f[11], &ut)
		fmt.Sscan(f[12], &st)
		total += time.Duration(ut+st) * time.Second / clockTicks
	}
	return total
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times:
// 100 on every Linux platform Go supports.
const clockTicks = 100
