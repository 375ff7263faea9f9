package shm

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitQueued waits until q has n waiters.
func waitQueued(t *testing.T, q *Quota, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for q.Stats().Waiting != n {
		if time.Now().After(deadline) {
			t.Fatalf("waiting = %d, want %d", q.Stats().Waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestQuotaNeverFits(t *testing.T) {
	q := NewQuota(2 << 30)
	_, err := q.Request(context.Background(), 0, 3<<30)
	if err == nil || err.Error() != "quota: operand needs 3.0 GiB, limit is 2.0 GiB" {
		t.Fatalf("err = %v", err)
	}
	if _, err := q.Request(context.Background(), 0, -1); err == nil {
		t.Fatal("negative request granted")
	}
	if st := q.Stats(); st.Used != 0 || st.Waiting != 0 {
		t.Fatalf("stats after refusals: %+v", st)
	}
}

func TestQuotaPriorityOrder(t *testing.T) {
	q := NewQuota(100)
	ctx := context.Background()
	hold, err := q.Request(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	// Queue, in this arrival order: 0 (prio 5, 60), 1 (prio 1, 60),
	// 2 (prio 5, 10), 3 (prio 1, 30). Grants follow priority then arrival,
	// and a small request that fits must not pass a larger one ahead of it.
	type req struct {
		prio int
		n    int64
	}
	reqs := []req{{5, 60}, {1, 60}, {5, 10}, {1, 30}}
	type grant struct {
		i   int
		rel func()
	}
	grants := make(chan grant, len(reqs))
	for i, r := range reqs {
		go func() {
			rel, err := q.Request(ctx, r.prio, r.n)
			if err != nil {
				t.Error(err)
				return
			}
			grants <- grant{i, rel}
		}()
		waitQueued(t, q, i+1)
	}
	recv := func() grant {
		select {
		case g := <-grants:
			return g
		case <-time.After(5 * time.Second):
			t.Fatal("no grant")
		}
		panic("unreachable")
	}
	hold()
	// 100 free: 1 (60) and 3 (30) are granted; 0 (60) does not fit and
	// 2 (10) waits behind it.
	rels := map[int]func(){}
	for range 2 {
		g := recv()
		rels[g.i] = g.rel
	}
	if rels[1] == nil || rels[3] == nil {
		t.Fatalf("granted first: %v", rels)
	}
	waitQueued(t, q, 2)
	if got := q.Stats().Used; got != 90 {
		t.Fatalf("used = %d, want 90", got)
	}
	rels[3]()
	rels[3]() // harmless
	// 40 free: still not enough for 0, and 2 may not pass it.
	select {
	case g := <-grants:
		t.Fatalf("request %d granted past the head of the queue", g.i)
	case <-time.After(20 * time.Millisecond):
	}
	rels[1]()
	for range 2 {
		g := recv()
		g.rel()
	}
	if st := q.Stats(); st.Used != 0 || st.Waiting != 0 || st.Granted != 5 {
		t.Fatalf("stats at end: %+v", st)
	}
}

func TestQuotaCancel(t *testing.T) {
	q := NewQuota(100)
	hold, _ := q.Request(context.Background(), 0, 50)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := q.Request(ctx, 0, 80) // head of the queue, does not fit
		errc <- err
	}()
	waitQueued(t, q, 1)
	small := make(chan struct{})
	go func() {
		rel, err := q.Request(context.Background(), 9, 40) // fits, but behind the head
		if err != nil {
			t.Error(err)
		}
		rel()
		close(small)
	}()
	waitQueued(t, q, 2)
	select {
	case <-small:
		t.Fatal("a less urgent request passed the head of the queue")
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	select {
	case <-small:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter behind a cancelled head was never granted")
	}
	hold()
	if st := q.Stats(); st.Used != 0 || st.Waiting != 0 {
		t.Fatalf("stats at end: %+v", st)
	}
}

// TestQuotaStress checks under the race detector that the grants never
// exceed the limit and that every request completes.
func TestQuotaStress(t *testing.T) {
	const limit = 1000
	q := NewQuota(limit)
	var inUse, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				n := int64((g*37+i*11)%limit + 1)
				ctx := context.Background()
				var cancel context.CancelFunc = func() {}
				if i%7 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Microsecond)
				}
				rel, err := q.Request(ctx, (g+i)%5, n)
				cancel()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Error(err)
					}
					continue
				}
				v := inUse.Add(n)
				for {
					p := peak.Load()
					if v <= p || peak.CompareAndSwap(p, v) {
						break
					}
				}
				if v > limit {
					t.Errorf("in use %d > limit", v)
				}
				inUse.Add(-n)
				rel()
			}
		}()
	}
	wg.Wait()
	if st := q.Stats(); st.Used != 0 || st.Waiting != 0 {
		t.Fatalf("stats at end: %+v", st)
	}
	if peak.Load() == 0 {
		t.Fatal("nothing was granted")
	}
}

func TestQuotaUnbounded(t *testing.T) {
	q := NewQuota(0)
	rel, err := q.Request(context.Background(), 0, 1<<50)
	if err != nil {
		t.Fatal(err)
	}
	rel()
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {3 << 30, "3.0 GiB"}, {5 << 40, "5.0 TiB"}, {1 << 52, "4096.0 TiB"}} {
		if got := FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestQuotaTryRequest(t *testing.T) {
	q := NewQuota(100)
	rel, ok := q.TryRequest(70)
	if !ok {
		t.Fatal("TryRequest of 70 in 100 refused")
	}
	if _, ok := q.TryRequest(40); ok {
		t.Fatal("TryRequest past the limit granted")
	}
	done := make(chan struct{})
	go func() {
		r, err := q.Request(context.Background(), 0, 50)
		if err != nil {
			t.Error(err)
		}
		r()
		close(done)
	}()
	waitQueued(t, q, 1)
	if _, ok := q.TryRequest(10); ok {
		t.Fatal("TryRequest passed a waiter")
	}
	rel()
	<-done
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Request(ctx, 0, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Request with a done context: %v", err)
	}
	if st := q.Stats(); st.Used != 0 || st.Waiting != 0 {
		t.Fatalf("stats at end: %+v", st)
	}
}
