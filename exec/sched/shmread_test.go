package sched

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/shm"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// mappedFile returns the file mapped at address p in this process, from
// /proc/self/maps, or "" when p is not in a file mapping.
func mappedFile(t *testing.T, p uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		var lo, hi uintptr
		if _, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi); err != nil {
			t.Fatal(err)
		}
		if lo <= p && p < hi {
			if len(fields) < 6 {
				return ""
			}
			return fields[5]
		}
	}
	return ""
}

// TestFetchMapsSharedMemory checks that the scheduler, on the host of a
// worker with a shared-memory store, reads a chunk by mapping the store's
// file, not by a copy: the array's data lie in a mapping of that file, and
// they stay readable after the worker drops the chunk. With NoMap, and for
// a small chunk, it copies over TCP.
func TestFetchMapsSharedMemory(t *testing.T) {
	if wire.BootID() == "" {
		t.Skip("no boot ID")
	}
	for _, noMap := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoMap=%v", noMap), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := New(ctx, Config{Fast: true, NoMap: noMap})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			st, err := shm.Open(shm.Options{Dir: t.TempDir(), SpillDir: t.TempDir(), Limit: 64 << 20, Name: "w1"})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			w, err := worker.Start(ctx, worker.Config{Name: "w1", Join: []string{s.GossipAddr()}, Slots: 1, Fast: true, Store: shm.NewArrays(st)})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := s.WaitWorkers(ctx, 1); err != nil {
				t.Fatal(err)
			}
			big, small := ramp(tensor.Float64, []int{1 << 17}, 1), ramp(tensor.Float64, []int{100}, 1)
			if err := s.Put(ctx, 7, big); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, 8, small); err != nil {
				t.Fatal(err)
			}
			path, ok := st.Path(7)
			if !ok {
				t.Fatal("the store holds no file for chunk 7")
			}
			a, releaseA, err := s.Fetch(ctx, 7)
			if err != nil {
				t.Fatal(err)
			}
			file := mappedFile(t, uintptr(unsafe.Pointer(&a.Data[0])))
			if mapped := file == path; mapped == noMap {
				t.Errorf("chunk data at a mapping of %q; the store's file is %s", file, path)
			}
			if string(a.Data) != string(big.Data) {
				t.Error("fetched chunk differs from the one put")
			}
			// A second reader shares the mapping.
			a2, releaseA2, err := s.Fetch(ctx, 7)
			if err != nil {
				t.Fatal(err)
			}
			if !noMap && &a2.Data[0] != &a.Data[0] {
				t.Error("a second reader of the chunk mapped it again")
			}
			b, _, err := s.Fetch(ctx, 8)
			if err != nil {
				t.Fatal(err)
			}
			if file := mappedFile(t, uintptr(unsafe.Pointer(&b.Data[0]))); file != "" && !strings.HasPrefix(file, "[") {
				t.Errorf("a small chunk was mapped from %s", file)
			}
			// The mapping outlives the chunk, and its segment is not
			// reused for the next chunk of its size.
			s.Free([]uint64{7, 8})
			waitWorkers([]*worker.Worker{w}, 5*time.Second, func() bool { return st.Len() == 0 })
			if err := s.Put(ctx, 9, ramp(tensor.Float64, []int{1 << 17}, -3)); err != nil {
				t.Fatal(err)
			}
			if string(a.Data) != string(big.Data) {
				t.Error("mapped chunk changed after the worker dropped it")
			}
			// Releasing both readers gives the mapping back at once.
			addr := uintptr(unsafe.Pointer(&a.Data[0]))
			releaseA()
			releaseA2()
			if !noMap {
				if file := mappedFile(t, addr); file == path {
					t.Errorf("chunk still mapped from %s after release", file)
				}
			}
			runtime.KeepAlive(a)
		})
	}
}

// TestWorkerMapsPeerInput runs on worker w2 an op reading a chunk of worker
// w1 on the same host: w2 maps it from w1's shared memory rather than
// fetching it over TCP (its status counts the bytes mapped), and the result
// is right. With NoMap it fetches it.
func TestWorkerMapsPeerInput(t *testing.T) {
	if wire.BootID() == "" {
		t.Skip("no boot ID")
	}
	const n = 1 << 17
	for _, noMap := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoMap=%v", noMap), func(t *testing.T) {
			var ws []*worker.Worker
			var stores []*shm.Store
			for _, name := range []string{"w1", "w2"} {
				st, err := shm.Open(shm.Options{Dir: t.TempDir(), SpillDir: t.TempDir(), Limit: 16 << 20, Name: name})
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				w, err := worker.Start(context.Background(), worker.Config{Name: name, Slots: 1, Fast: true, Store: shm.NewArrays(st), NoMap: noMap})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				ws, stores = append(ws, w), append(stores, st)
			}
			x := ramp(tensor.Float64, []int{n}, 1)
			if err := stores[0].Put(1, x); err != nil {
				t.Fatal(err)
			}
			cc, recv := dialControl(t, ws[1])
			defer cc.Close()
			add := &chunk.Op{Kind: tensor.OpAdd, Inputs: []int{0, 0}, Shape: []int{n}, DType: tensor.Float64,
				Args: chunk.ElemArgs{Compute: tensor.Float64}}
			loc := core.Location{ID: 1, Worker: "w1", NBytes: n * 8}
			// Three runs, reading chunk 1 twice each: six locates, asked
			// on one connection kept between them.
			for run := range 3 {
				cc.Send(&wire.Msg{Kind: wire.MsgSubmit, Job: 1, Key: run, Attempt: 1, Op: add, ID: uint64(2 + run),
					Inputs: []core.Location{loc, loc}, Addrs: []string{ws[0].Addr(), ws[0].Addr()}})
				for {
					m := recv()
					if m.Kind == wire.MsgDone {
						break
					}
					if m.Kind != wire.MsgStarted {
						t.Fatalf("got %+v", m)
					}
				}
			}
			if idle := wire.LocateIdle(ws[0].Addr(), nil); !noMap && idle != 1 {
				t.Errorf("%d idle locate connections to w1 after six locates, want the one they shared", idle)
			}
			v, err := stores[1].Get(2)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range x.Float64s() {
				if got := v.Array().Float64s()[i]; got != 2*want {
					t.Fatalf("element %d = %v, want %v", i, got, 2*want)
				}
			}
			v.Release()
			mapped := statusField(t, ws[1].Status(), "mapped_bytes")
			if want := 3 * 2 * n * 8; noMap && mapped != 0 || !noMap && mapped != want {
				t.Errorf("w2 mapped %d bytes of its inputs (NoMap %v)", mapped, noMap)
			}
			if st := stores[1].Stats(); st.Pinned != 0 {
				t.Errorf("w2's store: %v", st)
			}
		})
	}
}
