package sim

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var (
	seeds   = flag.Int("seeds", 200, "the number of seeds TestSeeds runs (20 with -short or the race detector)")
	seed    = flag.Uint64("seed", 0, "replay this one seed, tracing what happens")
	firstSd = flag.Uint64("first-seed", 1, "the first seed of -seeds")
	strict  = flag.Bool("strict", false, "fail on the findings of the kind still open (liveness: a client that never finished), not only log them")
)

// configFor draws a run's cluster from its seed: 1-5 schedulers, 3-40
// workers, 1-4 sessions of 1-3 graphs, faults on.
func configFor(sd uint64) Config {
	r := rand.New(rand.NewPCG(sd, 1))
	return Config{
		Seed:       sd,
		Schedulers: 1 + r.IntN(5),
		Workers:    3 + r.IntN(38),
		Sessions:   1 + r.IntN(4),
		Graphs:     1 + r.IntN(3),
		Faults:     true,
		Think:      3 * s,
	}
}

// regressions are seeds that found bugs, kept so that they stay fixed,
// run with the clients they were found with: the first ones with clients
// that do not think between requests (Config.Think 0), the later ones
// with TestSeeds' clients. A seed's run changes with the code (what the
// machines send draws latencies); the faults it draws no longer do
// (World.frng), but those of the seeds up to 225 were drawn before
// then, from the stream the network shares: they replay other scenarios
// now.
var regressions = []uint64{
	// A takeover won with no witness: a scheduler restarted on its old
	// state dir, knowing no worker yet, began an epoch whose witness list
	// was empty, and the next epoch after it needed no majority: two
	// schedulers held epoch 3 (seed 4) and epoch 4 (seed 8). Epochs now
	// wait for a live worker to witness them.
	4, 8,
	// A full disk lost the epoch record a takeover had won: the home
	// served at epoch 2 with no record of it in its journal. The journal
	// is now written again whole until the record is in.
	25,
	// A takeover's target, its disk full, refused the whole journal: the
	// new home took back every record, acknowledged ones included, and
	// the target kept an empty replica it later took over from.
	// Acknowledged records are never taken back now, and a replica whose
	// file was not written holds what it held before.
	88,
}

// thinkingRegressions are regression seeds found with TestSeeds' clients.
var thinkingRegressions = []uint64{
	// Two homes served session 4 at once: the home, back from a pause,
	// took an answer its target had sent before the pause (held in its
	// socket) as the answer to the renewal it had just sent, and counted
	// its lease from then, while the target had taken the session over.
	// Answers now carry the send time of the ship they answer.
	31,
	// A client's record appended after a gap: a takeover's epoch record
	// did not go in (a full disk), and while the journal waited to be
	// written whole, the next record was appended alone, after the
	// records before the epoch's; the scheduler, killed, restarted on a
	// file whose fifth record had seq 7. A record now goes in with the
	// whole journal until the file is written whole. Since the faults
	// have a stream of their own (World.frng), 225 draws other faults;
	// seed 2 is the same bug under them (148 of seeds 1-1,500 failed
	// so without the fix).
	225, 2,
	// A copy no longer wanted freed another home's chunk: a home back
	// from a partition copied an upload to a worker the new home had
	// copied it to, stepped down, and freed its copy at no epoch. The
	// free now carries the session and epoch the copy was asked at, and
	// the worker, which has seen the later epoch, refuses it.
	1531,
	// A write taken back (the target's disk full) made the directory
	// again from the journal, which placed a chunk where the old home's
	// job had kept it, on a worker that had freed it since as a
	// takeover's recall answered from two workers. A write taken back
	// now leaves the directory's placements as they are. Found once the
	// simulator carried out recalls.
	72,
	// An upload counted lost while its workers held it: scheduler-2,
	// restarted on its state dir, placed session 1's upload from the
	// journal before any worker had connected, and the workers, which
	// offer orphans only, never offered it back (59 of the 200 seeds of
	// TestSeeds found it so). A worker coming up is now asked for the
	// uploads lost (a recall), and says which it holds.
	1,
	// Seed 146 of TestSeeds (not kept here: it runs 13 s, with a client
	// that never finishes): an upload's write taken back (the target's
	// disk full) after its copy was made, and asked again naming workers
	// since gone, was placed lost while the copy's worker held it. An
	// upload placed with no live worker is now asked of the live ones.
	//
	// A replica answered a write asked again "in flight" (the record in
	// its replica, never committed there) for ever, and the client kept
	// asking it: only the home answers so now.
	64,
}

// regressionConfig is the run of a regression seed.
func regressionConfig(sd uint64) Config {
	cfg := configFor(sd)
	cfg.Think = 0
	return cfg
}

func runSeed(t *testing.T, sd uint64, trace bool) Stats {
	t.Helper()
	return runConfig(t, configFor(sd), trace)
}

func runConfig(t *testing.T, cfg Config, trace bool) Stats {
	t.Helper()
	sd := cfg.Seed
	if trace {
		cfg.Trace = func(at int64, what string) { t.Logf("%9.3fs %s", float64(at)/1e9, what) }
	}
	st, err := New(cfg).Run()
	if st.Open != nil {
		if *strict {
			t.Errorf("open: %v", st.Open)
		} else {
			t.Logf("open: %v", st.Open)
		}
	}
	if err != nil {
		t.Errorf("%v\nconfig: %d schedulers, %d workers, %d sessions of %d graphs\nfaults:\n%s\nreplay: go test ./exec/sim -run TestSeeds -seed %d -v",
			err, cfg.Schedulers, cfg.Workers, cfg.Sessions, cfg.Graphs, joinLines(st.Faults), sd)
	}
	return st
}

func joinLines(l []string) string {
	s := ""
	for _, x := range l {
		s += "  " + x + "\n"
	}
	return s
}

// TestSeeds runs -seeds seeds with faults from -first-seed, or replays
// -seed with a trace of what happens.
func TestSeeds(t *testing.T) {
	if *seed != 0 {
		st := runSeed(t, *seed, true)
		t.Logf("steps %d, graphs %d, takeovers %d, end %.2fs", st.Steps, st.Graphs, st.Takeovers, float64(st.End)/1e9)
		return
	}
	n := *seeds
	if testing.Short() || raceDetector {
		n = min(n, 20)
	}
	start := time.Now()
	for sd := *firstSd; sd < *firstSd+uint64(n); sd++ {
		runSeed(t, sd, false)
	}
	t.Logf("%d seeds in %v", n, time.Since(start).Round(time.Millisecond))
}

// TestReplay runs a seed twice: one seed, one run.
func TestReplay(t *testing.T) {
	for _, sd := range []uint64{3, 88} {
		a, errA := New(configFor(sd)).Run()
		b, errB := New(configFor(sd)).Run()
		if fmt.Sprint(errA) != fmt.Sprint(errB) || a.Steps != b.Steps || a.End != b.End || a.BytesMoved != b.BytesMoved || fmt.Sprint(a.Faults) != fmt.Sprint(b.Faults) {
			t.Errorf("seed %d ran twice differently: %d and %d steps, ended %d and %d", sd, a.Steps, b.Steps, a.End, b.End)
		}
	}
}

// TestRegressions replays the seeds that found bugs.
func TestRegressions(t *testing.T) {
	for _, sd := range regressions {
		t.Run(fmt.Sprint(sd), func(t *testing.T) { runConfig(t, regressionConfig(sd), false) })
	}
	for _, sd := range thinkingRegressions {
		t.Run(fmt.Sprint(sd), func(t *testing.T) { runSeed(t, sd, false) })
	}
}

// TestFaultFree runs one seed of each size without faults: every graph
// ends, every read has the digests of the lineage.
func TestFaultFree(t *testing.T) {
	for _, cfg := range []Config{{Seed: 1, Schedulers: 1, Workers: 3}, {Seed: 2, Schedulers: 3, Workers: 20, Sessions: 4, Graphs: 3}} {
		st, err := New(cfg).Run()
		if err != nil {
			t.Fatal(err)
		}
		if st.Graphs != cfg.withDefaults().Sessions*cfg.withDefaults().Graphs {
			t.Errorf("%d graphs ran, want %d", st.Graphs, cfg.Sessions*cfg.Graphs)
		}
	}
}

func (c Config) withDefaults() Config { c.defaults(); return c }
