package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/engine"
	"marsfs/exec/sched"
	"marsfs/exec/worker"
	"marsfs/fs"
	"marsfs/shm"
)

// BenchmarkReadShm reads a 1 GiB tensor's data file over 9P (unix socket)
// from a scheduler whose worker keeps the tensor's chunks in shared memory:
// "map" maps each chunk's file read-only, as the scheduler does for a
// worker on its host; "tcp" fetches each chunk from the worker over
// loopback TCP instead (SchedulerConfig.NoMap). The worker runs in the
// benchmark's process, but reaches the scheduler only through its TCP
// service and its files, as a worker process would.
func BenchmarkReadShm(b *testing.B) {
	for _, mode := range []string{"map", "tcp"} {
		b.Run(mode, func(b *testing.B) {
			sock := shmTree(b, mode == "tcp")
			c, err := fs.Dial(sock)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				f, err := c.Open("/sessions/1/tensors/x/data", p9.ReadOnly)
				if err != nil {
					b.Fatal(err)
				}
				drain(b, f, fs.ClientMsize)
				f.Close()
			}
		})
	}
}

// shmTree serves an engine on a scheduler with one shared-memory worker,
// holding a 1 GiB tensor, x, in session 1; it returns the unix socket.
func shmTree(b *testing.B, noMap bool) string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("/dev/shm", "marsfs-bench-")
	if err != nil {
		b.Skip("no /dev/shm")
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	s, err := sched.New(ctx, sched.Config{Fast: true, NoMap: noMap})
	if err != nil {
		b.Fatal(err)
	}
	st, err := shm.Open(shm.Options{Dir: dir, SpillDir: b.TempDir(), Limit: 2 << 30, Name: "w1"})
	if err != nil {
		b.Fatal(err)
	}
	w, err := worker.Start(ctx, worker.Config{Name: "w1", Join: []string{s.GossipAddr()}, Slots: 2, Fast: true, Store: shm.NewArrays(st)})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.WaitWorkers(ctx, 1); err != nil {
		b.Fatal(err)
	}
	eng := engine.New(s)
	srv := fs.NewServer(eng, fs.Config{})
	sock := filepath.Join(b.TempDir(), "m.sock")
	ul, err := fs.Listen(sock)
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ul)
	b.Cleanup(func() { srv.Close(); eng.Close(); w.Close(); s.Close(); st.Close() })
	makeGiB(b, sock)
	return sock
}
