package sched

import (
	"context"
	"os"
	"testing"
	"time"

	"marsfs/exec/core"
	"marsfs/exec/worker"
	"marsfs/shm"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// BenchmarkWorkerStore runs chains of 8 MB chunks (full, then two adds) on
// one worker with each store: the shared-memory store's kernels write into
// its segments where the heap store's write into fresh arrays.
func BenchmarkWorkerStore(b *testing.B) {
	const chains, n = 16, 1 << 20
	for _, kind := range []string{"mem", "shm"} {
		b.Run(kind, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := New(ctx, Config{Fast: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			cfg := worker.Config{Name: "w1", Join: []string{s.GossipAddr()}, Slots: 2, Fast: true}
			if kind == "shm" {
				dir, err := os.MkdirTemp("/dev/shm", "exectest-")
				if err != nil {
					b.Skip("no /dev/shm")
				}
				defer os.RemoveAll(dir)
				st, err := shm.Open(shm.Options{Dir: dir, SpillDir: b.TempDir(), Limit: 512 << 20, Name: "w1"})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				cfg.Store = shm.NewArrays(st)
			}
			w, err := worker.Start(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			if err := s.WaitWorkers(ctx, 1); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(3 * chains * n * 8)
			b.ResetTimer()
			for i := range b.N {
				job := addChainsJob(chains, n, uint64(i+1)<<20)
				if err := s.Run(ctx, job); err != nil {
					b.Fatal(err)
				}
				ids := make([]uint64, 0, len(job.Keep))
				for id := range job.Keep {
					ids = append(ids, id)
				}
				s.Free(ids)
			}
		})
	}
}

// addChainsJob is chains chains of a chunk of n float64 ones added to
// itself twice; the chains' ends are kept. IDs start at base.
func addChainsJob(chains, n int, base uint64) *core.Job {
	g := &chunk.Graph{}
	job := &core.Job{Keep: map[uint64]bool{}}
	add := func(op *chunk.Op) int {
		op.Key = len(g.Ops)
		op.Shape, op.DType = []int{n}, tensor.Float64
		g.Ops = append(g.Ops, op)
		job.IDs = append(job.IDs, base+uint64(op.Key))
		return op.Key
	}
	for range chains {
		k := add(&chunk.Op{Kind: tensor.OpFull, Args: chunk.GenArgs{Offset: []int{0}, Global: []int{n}, Value: 1}})
		for range 2 {
			k = add(&chunk.Op{Kind: tensor.OpAdd, Inputs: []int{k, k}, Args: chunk.ElemArgs{Compute: tensor.Float64}})
		}
		job.Keep[job.IDs[k]] = true
	}
	job.Graph = g
	return job
}
