package sched

import (
	"context"
	"os"
	"testing"
	"time"

	"marsfs/exec/wire"
	"marsfs/exec/worker"
	"marsfs/tensor"
)

// TestMeasureChunkTLS (MARSFS_MEASURE=1) measures a 64 MiB chunk fetched
// from a worker over loopback, in clear (no key) and over TLS (a key).
func TestMeasureChunkTLS(t *testing.T) {
	if os.Getenv("MARSFS_MEASURE") == "" {
		t.Skip("set MARSFS_MEASURE=1 to measure")
	}
	a := ramp(tensor.Float64, []int{8 << 20}, 1)
	for _, key := range [][]byte{nil, wire.DeriveKey([]byte("k"))} {
		w, err := worker.Start(context.Background(), worker.Config{Name: "w", Slots: 1, Fast: true, SecretKey: key})
		if err != nil {
			t.Fatal(err)
		}
		w.Store().Put(1, a)
		p := wire.NewPool(1<<30, key)
		ctx := context.Background()
		p.Fetch(ctx, w.Addr(), 1) // the connection, and the TLS handshake
		const n = 8
		start := time.Now()
		for range n {
			if _, err := p.Fetch(ctx, w.Addr(), 1); err != nil {
				t.Fatal(err)
			}
		}
		d := time.Since(start)
		t.Logf("key %v: %.0f MB/s", key != nil, float64(n*len(a.Data))/d.Seconds()/1e6)
		p.Close()
		w.Close()
	}
}
