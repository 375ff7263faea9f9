package gemm

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// peakGFLOPS is one core's nominal FMA peak in float64: 2 FMA units x 4
// doubles x 2 flops a cycle at the clock /proc/cpuinfo gives (0 if it does
// not); float32 doubles it. A turbo clock goes above it: BenchmarkFMAPeak
// measures the real one.
var peakGFLOPS = sync.OnceValue(func() float64 {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "cpu MHz" {
			mhz, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return 2 * 4 * 2 * mhz / 1000
		}
	}
	return 0
})

// reportGFLOPS reports the rate of b's loop, flops an iteration: in
// GFLOP a second of elapsed time, and in GFLOP a second of CPU time of
// the thread (see threadCPU), which a machine shared with other work
// disturbs less.
func reportGFLOPS(b *testing.B, flops, peak float64) {
	gflops := flops * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(gflops, "GFLOP/s")
	if peak > 0 {
		b.ReportMetric(100*gflops/peak, "%nominal")
	}
}

// threadCPU locks the benchmark's goroutine to its thread and returns a
// function that reports, once b's loop is done, GFLOP a CPU-second of
// that thread: the time the thread ran, not the time it waited for a CPU.
func threadCPU(b *testing.B, flops float64) func() {
	runtime.LockOSThread()
	t0 := threadSeconds()
	return func() {
		if cpu := threadSeconds() - t0; cpu > 0 {
			b.ReportMetric(flops*float64(b.N)/cpu/1e9, "GFLOP/cpu-s")
		}
		runtime.UnlockOSThread()
	}
}

func threadSeconds() float64 {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkKernel runs the micro-kernels alone on packed panels that stay
// in L1 (kc steps), against one core's FMA peak.
func BenchmarkKernel(b *testing.B) {
	if !haveKernels {
		b.Skip("no AVX2 and FMA")
	}
	b.Run("float64", func(b *testing.B) {
		ar := archF64
		kc := ar.kc
		a, bp, c := make([]float64, kc*ar.mr), make([]float64, kc*ar.nr), make([]float64, ar.mr*ar.nr)
		for b.Loop() {
			ar.kernel(kc, &a[0], &bp[0], &c[0], ar.nr, 1, 1)
		}
		reportGFLOPS(b, float64(2*kc*ar.mr*ar.nr), peakGFLOPS())
	})
	b.Run("float32", func(b *testing.B) {
		ar := archF32
		kc := ar.kc
		a, bp, c := make([]float32, kc*ar.mr), make([]float32, kc*ar.nr), make([]float32, ar.mr*ar.nr)
		for b.Loop() {
			ar.kernel(kc, &a[0], &bp[0], &c[0], ar.nr, 1, 1)
		}
		reportGFLOPS(b, float64(2*kc*ar.mr*ar.nr), 2*peakGFLOPS())
	})
}

// f64Archs are the float64 kernels this CPU runs, by name, for the tests
// and benchmarks to run each.
func f64Archs() []struct {
	name string
	ar   *arch[float64]
} {
	archs := []struct {
		name string
		ar   *arch[float64]
	}{{"avx2", archF64AVX2}}
	if have512 {
		archs = append(archs, struct {
			name string
			ar   *arch[float64]
		}{"avx512", archF64AVX512})
	}
	return archs
}

// forF64Archs runs f once for each float64 kernel this CPU runs, with
// archF64 set to it.
func forF64Archs[TB interface {
	Run(string, func(TB)) bool
}](tb TB, f func(TB)) {
	saved := archF64
	defer func() { archF64 = saved }()
	for _, a := range f64Archs() {
		archF64 = a.ar
		tb.Run(a.name, f)
	}
}

// BenchmarkDgemm multiplies square matrices, a b with beta 1, on one core,
// on each float64 kernel.
func BenchmarkDgemm(b *testing.B) {
	forF64Archs(b, benchDgemm)
}

func benchDgemm(b *testing.B) {
	for _, n := range []int{100, 256, 1000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a, bb, c := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
			for i := range a {
				a[i], bb[i] = float64(i%7)-3, float64(i%5)-2
			}
			done := threadCPU(b, 2*float64(n)*float64(n)*float64(n))
			for b.Loop() {
				Dgemm(false, false, n, n, n, 1, a, n, bb, n, 1, c, n)
			}
			done()
			reportGFLOPS(b, 2*float64(n)*float64(n)*float64(n), peakGFLOPS())
		})
	}
}

// BenchmarkSgemm is BenchmarkDgemm for float32 (peak twice float64's).
func BenchmarkSgemm(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a, bb, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
			for i := range a {
				a[i], bb[i] = float32(i%7)-3, float32(i%5)-2
			}
			done := threadCPU(b, 2*float64(n)*float64(n)*float64(n))
			for b.Loop() {
				Sgemm(false, false, n, n, n, 1, a, n, bb, n, 1, c, n)
			}
			done()
			reportGFLOPS(b, 2*float64(n)*float64(n)*float64(n), 2*peakGFLOPS())
		})
	}
}

// BenchmarkDsyrk computes aᵀ a for a of 4n x n: half the flops of the
// product, counted as the product's so that the rate compares with Dgemm.
func BenchmarkDsyrk(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			k := 4 * n
			a, c := make([]float64, k*n), make([]float64, n*n)
			for i := range a {
				a[i] = float64(i%7) - 3
			}
			done := threadCPU(b, 2*float64(n)*float64(n)*float64(k))
			for b.Loop() {
				Dsyrk(true, true, n, k, 1, a, n, 0, c, n)
			}
			done()
			reportGFLOPS(b, 2*float64(n)*float64(n)*float64(k), peakGFLOPS())
		})
	}
}
