package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// machine describes where the numbers were taken.
type machine struct {
	cpus      int
	model     string
	memTotal  int64 // bytes
	memAvail  int64 // bytes, when the harness started
	loadavg   string
	bandwidth [2]float64 // GB/s summing a touched buffer: 1 and 2 goroutines
}

func (m machine) String() string {
	return fmt.Sprintf("%d CPUs (%s), %.1f GiB memory (%.1f GiB available), load average %s; memory bandwidth (sum of a touched 256 MiB buffer) %.1f GB/s on 1 core, %.1f GB/s on 2",
		m.cpus, m.model, float64(m.memTotal)/(1<<30), float64(m.memAvail)/(1<<30), m.loadavg, m.bandwidth[0], m.bandwidth[1])
}

func describeMachine() machine {
	m := machine{cpus: runtime.NumCPU(), model: "unknown CPU"}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	mi := statusFile("/proc/meminfo")
	m.memTotal, m.memAvail = mi["MemTotal"], mi["MemAvailable"]
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			m.loadavg = strings.Join(f[:3], " ")
		}
	}
	return m
}

// bandwidth measures the read bandwidth of memory: the best of a few sums
// of an already-touched buffer far larger than the caches, split among
// threads goroutines.
func bandwidth(threads int) float64 {
	const size = 256 << 20
	buf := make([]float64, size/8)
	for i := range buf {
		buf[i] = 1
	}
	best := 0.0
	for range 5 {
		start := time.Now()
		var wg sync.WaitGroup
		sums := make([]float64, threads)
		part := len(buf) / threads
		for t := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sums[t] = sum4(buf[t*part : (t+1)*part])
			}()
		}
		wg.Wait()
		d := time.Since(start).Seconds()
		sink = sums[0]
		best = max(best, size/d/1e9)
	}
	return best
}

// sink keeps the sums of bandwidth alive.
var sink float64

// sum4 sums x with four accumulators, so that the loop is bound by memory
// rather than by the latency of one chain of additions.
func sum4(x []float64) float64 {
	var a, b, c, d float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a += x[i]
		b += x[i+1]
		c += x[i+2]
		d += x[i+3]
	}
	for ; i < len(x); i++ {
		a += x[i]
	}
	return a + b + c + d
}
