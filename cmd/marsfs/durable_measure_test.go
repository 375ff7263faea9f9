package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"marsfs/fs"
)

// TestMeasureDurableSubmit (MARSFS_MEASURE=1) measures what durability
// costs a submit: the time from the client's open of submit to the
// acknowledgement of its clunk (the spec parsed, tiled, journaled and
// synced, its graph started), p50 and p99, with no state dir, with one on
// a tmpfs and with one on the work disk, alone and fenced (with a ring
// successor confirming every synced write); by one client, and by four at
// once (four sessions, four connections) while the graphs of the others
// run and end (each end is synced too).
func TestMeasureDurableSubmit(t *testing.T) {
	if os.Getenv("MARSFS_MEASURE") == "" {
		t.Skip("set MARSFS_MEASURE=1 to measure")
	}
	bin := build(t)
	killAllOf(t, bin)
	// "fenced": the home has a second scheduler, its ring successor,
	// with a state dir of its own on the same disk: every synced write
	// waits for the successor's replica to hold it, and the home serves
	// under the successor's lease (fence.go).
	dirs := []struct {
		name, dir string
		fenced    bool
	}{
		{"no state dir", "", false},
		{"tmpfs", tmpfsDir(t, 256<<20), false},
		{"work disk", t.TempDir(), false},
		{"work disk, fenced", t.TempDir(), true},
	}
	const perClient = 300
	for _, d := range dirs {
		args := []string{"--workers", "2"}
		if d.dir != "" {
			args = append(args, "--state-dir", d.dir)
		}
		p := startUp(t, bin, args...)
		home := ""
		var second *upProcess
		if d.fenced {
			second = startServer(t, bin, "scheduler", "--gossip", "127.0.0.1:0", "--join", p.join, "--state-dir", t.TempDir())
			c, err := fs.Dial(p.unx)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, c, "/cluster/members", 60*time.Second, func(s string) bool { return strings.Count(s, " scheduler alive") == 2 })
			home = memberNamed(readText(t, c, "/cluster/members"), p.join)
			c.Close()
		}
		for _, clients := range []int{1, 4} {
			lat := make([][]time.Duration, clients)
			var wg sync.WaitGroup
			for k := range clients {
				c, err := fs.Dial(p.unx)
				if err != nil {
					t.Fatal(err)
				}
				sess := newSession(t, c)
				for home != "" && homeOf(t, c, sess) != home {
					sess = newSession(t, c) // one homed on the scheduler the client speaks to
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer c.Close()
					for i := range perClient {
						spec := "x = arange(1000, chunks=100) + " + strconv.Itoa(i) + "\nfetch x\n"
						began := time.Now()
						if err := c.WriteFile(sess+"/submit", []byte(spec)); err != nil {
							t.Errorf("submit: %v", err)
							return
						}
						lat[k] = append(lat[k], time.Since(began))
					}
				}()
			}
			wg.Wait()
			all := slices.Concat(lat...)
			slices.Sort(all)
			if len(all) == 0 {
				t.Fatal("no submit measured")
			}
			q := func(f float64) time.Duration { return all[int(f*float64(len(all)-1))].Round(time.Microsecond) }
			t.Logf("%-12s %d client(s): %4d submits, submit → acknowledged p50 %v, p99 %v, max %v", d.name, clients, len(all), q(0.5), q(0.99), all[len(all)-1].Round(time.Microsecond))
		}
		if second != nil {
			second.halt(t)
		}
		p.stop(t)
	}
}
