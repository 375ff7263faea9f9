package sched

import (
	"bytes"
	"context"
	"math"
	"os"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/tensor/tile"
)

// TestSortOnCluster sorts and argsorts 4·10⁶ float64 of 16 blocks on
// three workers in this process, by the merge-split network and by the
// sample sort, checks both against the local scheduler's network bit for
// bit, and logs the time and the bytes moved between workers: the numbers
// behind tile.SampleSortMin. A measurement, heavy enough for a loaded host
// to miss the fast failure detector's deadlines: it runs when
// MARSFS_MEASURE is set.
func TestSortOnCluster(t *testing.T) {
	if os.Getenv("MARSFS_MEASURE") == "" {
		t.Skip("a measurement: set MARSFS_MEASURE=1 to run it")
	}
	defer func(old int) { tile.SampleSortMin = old }(tile.SampleSortMin)
	const src = "x = rand(4000000, chunks=250000, seed=5)\ny = sort(x)\nz = argsort(x)\nfetch y, z"
	tc := newTestCluster(t, 3, false)
	var want []byte
	for i, run := range []struct {
		name string
		r    engine.Runner
		min  int
	}{{"local, network", newLocal(t, 2), math.MaxInt}, {"cluster, network", tc.s, math.MaxInt}, {"cluster, sample sort", tc.s, 2}} {
		tile.SampleSortMin = run.min
		e := engine.New(run.r)
		s, err := e.NewSession("sort")
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		g, err := s.Submit(src)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		st := g.Wait(ctx)
		cancel()
		if st.State != engine.Succeeded {
			t.Fatalf("%s: %s: %s", run.name, st.State, g.Err())
		}
		got := append(append([]byte(nil), fetchNamed(t, s, "y").Data...), fetchNamed(t, s, "z").Data...)
		t.Logf("%s: %v, %d operands, moved %d bytes, peak %d bytes", run.name, time.Since(begin), st.Operands, st.TransferBytes, st.PeakBytes)
		if i == 0 {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s: the result differs from the local scheduler's", run.name)
		}
		s.Close()
		e.Close()
	}
}
