package sched

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
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

// TestSortCrossover measures where the sample sort overtakes the
// merge-split network: sort and argsort of 4·10⁶ float64 cut into 2 to 64
// blocks, on 2 and 3 worker processes, each way three times, logging the
// median time and the bytes moved (the numbers behind tile.SampleSortMin).
// A measurement: it runs when MARSFS_MEASURE is set.
func TestSortCrossover(t *testing.T) {
	if os.Getenv("MARSFS_MEASURE") == "" {
		t.Skip("a measurement: set MARSFS_MEASURE=1 to run it")
	}
	defer func(old int) { tile.SampleSortMin = old }(tile.SampleSortMin)
	const n = 4000000
	for _, workers := range []int{2, 3} {
		tc := newTestCluster(t, workers, true)
		e := engine.New(tc.s)
		for _, p := range []int{2, 4, 8, 16, 32, 64} {
			src := fmt.Sprintf("x = rand(%d, chunks=%d, seed=5)\ny = sort(x)\nz = argsort(x)\nfetch y, z", n, (n+p-1)/p)
			var line string
			for _, way := range []struct {
				name string
				min  int
			}{{"network", math.MaxInt}, {"sample", 2}} {
				tile.SampleSortMin = way.min
				var times []time.Duration
				var moved int64
				for range 3 {
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
						t.Fatalf("%s p=%d: %s: %s", way.name, p, st.State, g.Err())
					}
					times = append(times, time.Since(begin))
					moved = st.TransferBytes
					s.Close()
				}
				slices.Sort(times)
				line += fmt.Sprintf("  %s %6.3fs (%.0f MB moved)", way.name, times[1].Seconds(), float64(moved)/1e6)
			}
			t.Logf("workers %d blocks %2d:%s", workers, p, line)
		}
		e.Close()
	}
}
