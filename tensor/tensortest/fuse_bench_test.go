package tensortest

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// The fusion benchmarks. W1 is ((a+b)*2 - a/3).sum() over two random
// vectors of 2e8 elements in chunks of 1e7 (MARSFS_W1_ELEMS overrides the
// length). Chunks run on benchWorkers goroutines by computeParallel, in a
// depth-first order, as the cluster would run them on as many workers.

const w1Expr = "((a + b) * 2 - a / 3).sum()"

var benchWorkers = min(2, runtime.NumCPU())

func w1Elems() int {
	if s := os.Getenv("MARSFS_W1_ELEMS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 200_000_000
}

func w1Chunk(n int) int { return max(n/20, 1) }

// BenchmarkW1 generates a and b inside the graph: fused, the random chunks
// are never materialized.
func BenchmarkW1(b *testing.B) {
	n := w1Elems()
	text := fmt.Sprintf("a = rand(%d, chunks=%d, seed=1)\nb = rand(%d, chunks=%d, seed=2)\ny = %s\n",
		n, w1Chunk(n), n, w1Chunk(n), w1Expr)
	benchSpec(b, text, n, benchUnfused, benchChain, benchFused)
}

// A benchMode is a fusion setting the spec benchmarks compare.
type benchMode struct {
	name string
	opt  fuse.Options
}

var (
	benchUnfused = benchMode{"unfused", fuse.Options{}}
	benchChain   = benchMode{"chain", fuse.Options{Fuse: true}}
	benchFused   = benchMode{"fused", fuse.Options{Fuse: true, FuseExpr: true}}
)

// benchSpec runs spec under each mode, parsing, tiling, optimizing and
// computing it on benchWorkers goroutines, and reports the elems it reads
// a second and the CPU seconds a run.
func benchSpec(b *testing.B, text string, elems int, modes ...benchMode) {
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				g, err := lang.Parse(text, nil)
				if err != nil {
					b.Fatal(err)
				}
				cg, err := tile.Graph(g, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := computeParallel(context.Background(), fuse.Optimize(cg, m.opt), nil, benchWorkers); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(elems)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used: on a
// machine shared with other work, the ratio of CPU times of two ways of
// computing is steadier than that of their wall times.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchEnv holds session tensors for the benchmarks.
type benchEnv struct {
	tensors spec.Env
	chunks  map[uint64]*tensor.Array
}

func (e *benchEnv) stored(id uint64) (*tensor.Array, error) {
	a, ok := e.chunks[id]
	if !ok {
		return nil, fmt.Errorf("no stored chunk %d", id)
	}
	return a, nil
}

// materialize computes spec's outputs and keeps their chunks as session
// tensors, as a session keeps fetched tensors.
func materialize(b *testing.B, text string) *benchEnv {
	g, err := lang.Parse(text, nil)
	if err != nil {
		b.Fatal(err)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	env := &benchEnv{tensors: map[string]*tensor.TiledTensor{}, chunks: map[uint64]*tensor.Array{}}
	for _, o := range cg.Outputs {
		t := o
		t.Keys = make([]uint64, len(o.Keys))
		for i, k := range o.Keys {
			c, err := kernel.Run(context.Background(), cg.Ops[k], nil)
			if err != nil {
				b.Fatal(err)
			}
			id := uint64(len(env.chunks) + 1)
			env.chunks[id] = c
			t.Keys[i] = id
		}
		env.tensors[o.Name] = &t
	}
	return env
}

// BenchmarkW1Materialized evaluates W1 over stored a and b, and reports the
// rate at which it reads them.
func BenchmarkW1Materialized(b *testing.B) {
	n := w1Elems()
	env := materialize(b, fmt.Sprintf("a = rand(%d, chunks=%d, seed=1)\nb = rand(%d, chunks=%d, seed=2)\nfetch a, b\n",
		n, w1Chunk(n), n, w1Chunk(n)))
	text := "y = " + w1Expr + "\n"
	for _, m := range []benchMode{benchUnfused, benchFused} {
		for _, workers := range []int{1, benchWorkers} {
			b.Run(fmt.Sprintf("%s/workers=%d", m.name, workers), func(b *testing.B) {
				b.SetBytes(int64(2 * 8 * n))
				cpu0 := cpuTime()
				for b.Loop() {
					g, err := lang.Parse(text, env.tensors)
					if err != nil {
						b.Fatal(err)
					}
					cg, err := tile.Graph(g, env.tensors)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := computeParallel(context.Background(), fuse.Optimize(cg, m.opt), env.stored, workers); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(2*8*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
				b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}

// BenchmarkMemBandwidth measures the machine's read bandwidth: a plain
// float64 sum over a 1 GiB buffer touched beforehand, on one goroutine and
// on benchWorkers goroutines each summing its half.
func BenchmarkMemBandwidth(b *testing.B) {
	buf := make([]float64, 1<<27)
	for i := range buf {
		buf[i] = float64(i & 7)
	}
	for _, workers := range []int{1, benchWorkers} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.SetBytes(int64(len(buf) * 8))
			var sink float64
			for b.Loop() {
				sums := make([]float64, workers)
				var wg sync.WaitGroup
				part := len(buf) / workers
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						sums[w] = plainSum(buf[w*part : (w+1)*part])
					}()
				}
				wg.Wait()
				for _, s := range sums {
					sink += s
				}
			}
			b.ReportMetric(float64(len(buf)*8)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			if sink < 0 {
				b.Fatal("negative sum")
			}
		})
	}
}

// plainSum adds x with four running sums, so that the loop is bound by
// memory, not by the latency of one chain of additions.
func plainSum(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// computeParallel is Compute on several goroutines: an op runs once its
// inputs exist, ready ops in depth-first order from the outputs (so that a
// chunk's consumers run soon after it, and few chunks are alive at once),
// and each chunk is freed when its last consumer has run.
func computeParallel(ctx context.Context, g *chunk.Graph, stored func(uint64) (*tensor.Array, error), workers int) ([]*tensor.Array, error) {
	n := len(g.Ops)
	order := make([]int, n) // depth-first post-order rank
	seen := make([]bool, n)
	rank := 0
	var visit func(k int)
	visit = func(k int) {
		if seen[k] {
			return
		}
		seen[k] = true
		for _, in := range g.Ops[k].Inputs {
			visit(in)
		}
		order[k] = rank
		rank++
	}
	for _, o := range g.Outputs {
		for _, k := range o.Keys {
			visit(int(k))
		}
	}
	for k := range n {
		visit(k)
	}
	waiting := make([]int, n)
	uses := make([]int, n)
	consumers := make([][]int, n)
	var ready []int
	for _, op := range g.Ops {
		waiting[op.Key] = len(op.Inputs)
		for _, in := range op.Inputs {
			uses[in]++
			consumers[in] = append(consumers[in], op.Key)
		}
		if len(op.Inputs) == 0 {
			ready = append(ready, op.Key)
		}
	}
	for _, o := range g.Outputs {
		for _, k := range o.Keys {
			uses[k]++
		}
	}
	chunks := make([]*tensor.Array, n)
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		left     = n
		firstErr error
		wg       sync.WaitGroup
	)
	run := func(op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
		if op.Stored != 0 {
			if stored == nil {
				return nil, fmt.Errorf("op %d needs stored chunk %d", op.Key, op.Stored)
			}
			return stored(op.Stored)
		}
		return kernel.Run(ctx, op, in)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			for {
				for len(ready) == 0 && left > 0 && firstErr == nil {
					cond.Wait()
				}
				if left == 0 || firstErr != nil {
					return
				}
				best := 0
				for i, k := range ready {
					if order[k] < order[ready[best]] {
						best = i
					}
				}
				k := ready[best]
				ready = slices.Delete(ready, best, best+1)
				op := g.Ops[k]
				in := make([]*tensor.Array, len(op.Inputs))
				for i, c := range op.Inputs {
					in[i] = chunks[c]
				}
				mu.Unlock()
				out, err := run(op, in)
				mu.Lock()
				if err != nil {
					firstErr = err
					cond.Broadcast()
					return
				}
				chunks[k] = out
				for _, c := range op.Inputs {
					if uses[c]--; uses[c] == 0 {
						chunks[c] = nil
					}
				}
				for _, c := range consumers[k] {
					if waiting[c]--; waiting[c] == 0 {
						ready = append(ready, c)
					}
				}
				left--
				cond.Broadcast()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	outs := make([]*tensor.Array, len(g.Outputs))
	for i, o := range g.Outputs {
		parts := make([]*tensor.Array, len(o.Keys))
		for j, k := range o.Keys {
			parts[j] = chunks[k]
		}
		a, err := tensor.Gather(&o, parts)
		if err != nil {
			return nil, err
		}
		outs[i] = a
	}
	return outs, nil
}

// TestComputeParallel checks the benchmarks' executor against Compute.
func TestComputeParallel(t *testing.T) {
	cg := tileSpec(t, "a = rand(5000, chunks=700, seed=1)\nb = rand(5000, chunks=700, seed=2)\ny = ((a + b) * 2 - a / 3).sum()\nz = a * b\nfetch y, z")
	want := computeAll(t, cg)
	for _, opt := range []fuse.Options{{}, {Fuse: true, FuseExpr: true}} {
		got, err := computeParallel(context.Background(), fuse.Optimize(cg, opt), nil, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if msg := sameValues(got[i], want[i], !opt.FuseExpr); msg != "" {
				t.Errorf("%+v: output %d %s", opt, i, msg)
			}
		}
	}
}

// BenchmarkExprKernel runs the expr op of one 2^20-element chunk of W1 on
// one goroutine, under several block lengths.
func BenchmarkExprKernel(b *testing.B) {
	const n = 1 << 20
	g, err := lang.Parse(fmt.Sprintf("a = rand(%d, seed=1)\nb = rand(%d, seed=2)\ny = %s\n", n, n, w1Expr), nil)
	if err != nil {
		b.Fatal(err)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	f := fuse.Expr(cg)
	op := f.Ops[0]
	if op.Kind != chunk.KindExpr {
		b.Fatalf("first op is %s", op.Name())
	}
	for _, block := range []int{1024, 4096, 16384} {
		b.Run(fmt.Sprintf("block=%d", block), func(b *testing.B) {
			c := *op
			args := c.Args.(chunk.ExprArgs)
			args.Block = block
			c.Args = args
			for b.Loop() {
				if _, err := kernel.Run(context.Background(), &c, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/n, "ns/elem")
		})
	}
}

// BenchmarkOptimizeGraph measures both fusions over the graph of
// BenchmarkTileElementwiseReduce (about 10^5 ops).
func BenchmarkOptimizeGraph(b *testing.B) {
	text := "x = rand(1000, 1000, chunks=10, seed=1)\ny = rand(1000, 1000, chunks=(20, 5), seed=2)\nz = (x + y * 2).sum(axis=0)"
	g, err := lang.ParseText(text, nil)
	if err != nil {
		b.Fatal(err)
	}
	cg, err := tile.Graph(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		f := fuse.Optimize(cg, fuse.Options{Fuse: true, FuseExpr: true})
		b.ReportMetric(float64(len(cg.Ops)), "ops-in")
		b.ReportMetric(float64(len(f.Ops)), "ops-out")
	}
}

// BenchmarkW6 is rand(20000, 5000, chunks=(2000, 1000)) reduced along
// each axis in one graph: fused, each chunk is drawn once and folded into
// both partials.
func BenchmarkW6(b *testing.B) {
	text := "x = rand(20000, 5000, chunks=(2000, 1000), seed=1)\ns = x.sum(axis=0)\nm = x.mean(axis=1)\nfetch s, m\n"
	benchSpec(b, text, 1e8, benchChain, benchFused)
}

// BenchmarkTileOptimizeW4 parses, tiles and optimizes W4's spec, (ones(1e6,
// chunks=10) + 1).sum(), into 133,336 ops: tiled whole (333,000 ops, then
// fused), and tiled fused (StagesFused, as sessions tile). It reports
// the CPU seconds a run, garbage collection included.
func BenchmarkTileOptimizeW4(b *testing.B) {
	const text = "s = (ones(1000000, chunks=10) + 1).sum()"
	for _, fused := range []bool{false, true} {
		b.Run(map[bool]string{false: "whole", true: "fused"}[fused], func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				g, err := lang.Parse(text, nil)
				if err != nil {
					b.Fatal(err)
				}
				st, err := tile.StagesWith(g, nil, tile.Options{Fused: fused})
				if err != nil {
					b.Fatal(err)
				}
				if f := fuse.Optimize(st.Graph, fuse.Options{Fuse: true, FuseExpr: true}); len(f.Ops) != 133336 {
					b.Fatalf("%d ops fused, want 133336", len(f.Ops))
				}
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
