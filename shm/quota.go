package shm

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"sync"
)

// A Quota bounds the bytes a worker's running operands may hold in private
// memory at once: their inputs loaded out of shared memory and the outputs
// they are making. An operand asks for its whole need in one request before
// it runs and gives it back when it ends, so two operands never each hold
// half of what both need.
//
// Requests are granted in priority order: while the most urgent waiter does
// not fit, nobody behind it is admitted, so a large operand is never starved
// by a stream of small ones. A request larger than the limit can never be
// granted and fails at once with an error naming both sizes.
//
// A Quota is safe for concurrent use.
type Quota struct {
	limit int64

	mu      sync.Mutex
	used    int64
	seq     uint64
	waiters waitQueue
	granted int64 // requests granted since creation, for Stats
}

// NewQuota returns a quota of limit bytes. A limit <= 0 admits everything.
func NewQuota(limit int64) *Quota { return &Quota{limit: limit} }

// QuotaStats describes a quota's state.
type QuotaStats struct {
	Limit   int64 // bytes; 0 when unbounded
	Used    int64 // bytes granted and not yet released
	Waiting int   // requests queued
	Granted int64 // requests granted in all
}

// String renders the stats for a status file.
func (st QuotaStats) String() string {
	limit := "unbounded"
	if st.Limit > 0 {
		limit = FormatBytes(st.Limit)
	}
	return fmt.Sprintf("quota %s/%s waiting %d", FormatBytes(st.Used), limit, st.Waiting)
}

// WriteStatus writes the stats as "key value" lines for a worker's status
// file: quota_used, quota_limit (0 when unbounded), quota_waiting.
func (st QuotaStats) WriteStatus(w io.Writer) error {
	_, err := fmt.Fprintf(w, "quota_used %d\nquota_limit %d\nquota_waiting %d\n", st.Used, st.Limit, st.Waiting)
	return err
}

// Stats returns the quota's current state.
func (q *Quota) Stats() QuotaStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return QuotaStats{Limit: max(q.limit, 0), Used: q.used, Waiting: len(q.waiters), Granted: q.granted}
}

// Request blocks until nbytes fit under the limit and every more urgent
// request queued before has been granted, then returns a function that gives
// the bytes back (calling it more than once is harmless). Lower priority
// values are more urgent; equal priorities are served in arrival order.
//
// Request fails at once when nbytes exceeds the limit, and returns ctx's
// error, leaving the queue, when ctx is done first.
func (q *Quota) Request(ctx context.Context, priority int, nbytes int64) (release func(), err error) {
	if nbytes < 0 {
		return nil, fmt.Errorf("quota: negative request of %d bytes", nbytes)
	}
	if q.limit > 0 && nbytes > q.limit {
		return nil, fmt.Errorf("quota: operand needs %s, limit is %s", FormatBytes(nbytes), FormatBytes(q.limit))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	q.seq++
	w := &waiter{prio: priority, seq: q.seq, n: nbytes, ready: make(chan struct{})}
	heap.Push(&q.waiters, w)
	q.grantLocked()
	q.mu.Unlock()

	select {
	case <-w.ready:
	case <-ctx.Done():
		q.mu.Lock()
		if w.index >= 0 {
			heap.Remove(&q.waiters, w.index)
			// The head may have left: those behind it may fit now.
			q.grantLocked()
			q.mu.Unlock()
			return nil, ctx.Err()
		}
		q.mu.Unlock()
		// Granted while ctx was ending: the grant stands.
	}
	return q.releaser(nbytes), nil
}

// TryRequest grants nbytes at once if they fit and nobody waits, without
// blocking; see Request.
func (q *Quota) TryRequest(nbytes int64) (release func(), ok bool) {
	if nbytes < 0 {
		return nil, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) > 0 || q.limit > 0 && q.used+nbytes > q.limit {
		return nil, false
	}
	q.used += nbytes
	q.granted++
	return q.releaser(nbytes), true
}

func (q *Quota) releaser(nbytes int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			q.used -= nbytes
			q.grantLocked()
			q.mu.Unlock()
		})
	}
}

// grantLocked admits queued requests from the most urgent on while they fit.
func (q *Quota) grantLocked() {
	for len(q.waiters) > 0 {
		w := q.waiters[0]
		if q.limit > 0 && q.used+w.n > q.limit {
			return
		}
		heap.Pop(&q.waiters)
		q.used += w.n
		q.granted++
		close(w.ready)
	}
}

type waiter struct {
	prio  int
	seq   uint64
	n     int64
	ready chan struct{}
	index int // in the queue; -1 once granted or removed
}

// waitQueue is a heap of waiters, most urgent first.
type waitQueue []*waiter

func (q waitQueue) Len() int { return len(q) }
func (q waitQueue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio < q[j].prio
	}
	return q[i].seq < q[j].seq
}
func (q waitQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *waitQueue) Push(x any) { w := x.(*waiter); w.index = len(*q); *q = append(*q, w) }
func (q *waitQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	w.index = -1
	return w
}

// FormatBytes renders n in binary units with one decimal ("3.0 GiB",
// "512 B").
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit && f > -unit || u == "TiB" {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	panic("unreachable")
}
