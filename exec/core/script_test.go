package core

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/core scripts")

// TestCoreScripts runs the scheduling scenarios of testdata/core, feeding
// the Core through Step as the scheduler does. A script
// is a series of blocks separated by blank lines: one command, "----", then
// what the core answered. Lines starting with # are comments. Commands:
//
//	graph IN0 IN1 ...   op k's inputs, comma-separated ("-" for none)
//	stored K ...        ops that name existing chunks (ID 1000+K, on w1, 8 bytes)
//	keep K ...          ops whose chunks outlive the job
//	range K I N         op K reads only N float64 of its input I (a shuffle's piece)
//	up W SLOTS          a worker joins
//	down W              a worker leaves
//	adopt W K NBYTES    W is back holding op K's chunk
//	hold | dispatch     take the inputs up to dispatch together
//	start | cancel | abandon
//	started K | finish K [NBYTES] | fail K MSG... | cancelled K
//
// Reports name the op's latest run. With -rewrite the expected output is
// regenerated from what the core does; review the diff.
func TestCoreScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/core/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			s := &script{t: t, runs: map[int]RunOp{}}
			for _, block := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
				lines := strings.Split(block, "\n")
				var cmd string
				var i int
				for i = 0; i < len(lines); i++ {
					if strings.HasPrefix(lines[i], "#") {
						out.WriteString(lines[i] + "\n")
						continue
					}
					cmd = lines[i]
					break
				}
				if cmd == "" {
					out.WriteString("\n")
					continue
				}
				var want string
				if i+1 < len(lines) && lines[i+1] == "----" {
					want = strings.Join(lines[i+2:], "\n")
				}
				got := strings.TrimRight(s.do(cmd), "\n")
				if !*rewrite && got != want {
					t.Errorf("%s:\n%s\n---- got\n%s\n---- want\n%s", file, cmd, got, want)
				}
				fmt.Fprintf(&out, "%s\n----\n", cmd)
				if got != "" {
					out.WriteString(got + "\n")
				}
				out.WriteString("\n")
			}
			if *rewrite {
				if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

type script struct {
	t      *testing.T
	ops    [][]int
	stored []int
	keep   []int
	ranges map[[2]int]int // op and input: the elements it reads
	c      *Core
	runs   map[int]RunOp
}

func (s *script) core() *Core {
	if s.c == nil {
		g := graph(s.ops, s.stored...)
		for ki, n := range s.ranges {
			op := g.Ops[ki[0]]
			if op.Ranges == nil {
				op.Ranges = chunk.RangesOf(make([]chunk.Range, len(op.Inputs)))
			}
			(*op.Ranges)[ki[1]] = chunk.Range{Shape: []int{n}, DType: tensor.Float64}
		}
		ids := make([]uint64, len(g.Ops))
		keep := map[uint64]bool{}
		for k := range ids {
			ids[k] = uint64(k + 1)
			if g.Ops[k].Stored != 0 {
				ids[k] = g.Ops[k].Stored
			}
		}
		for _, k := range s.keep {
			keep[ids[k]] = true
		}
		s.c = New(g, ids, keep, Options{Stored: func(id uint64) (Location, bool) {
			return Location{ID: id, Worker: "w1", NBytes: 8}, true
		}})
	}
	return s.c
}

func (s *script) key(arg string) (int, RunOp) {
	s.t.Helper()
	k, err := strconv.Atoi(arg)
	if err != nil {
		s.t.Fatalf("bad op %q", arg)
	}
	return k, s.runs[k]
}

func (s *script) do(cmd string) string {
	f := strings.Fields(cmd)
	ints := func(args []string) []int {
		var v []int
		for _, a := range args {
			n, err := strconv.Atoi(a)
			if err != nil {
				s.t.Fatalf("%s: bad number %q", cmd, a)
			}
			v = append(v, n)
		}
		return v
	}
	var o Output
	switch f[0] {
	case "graph":
		for _, a := range f[1:] {
			var ins []int
			if a != "-" {
				ins = ints(strings.Split(a, ","))
			}
			s.ops = append(s.ops, ins)
		}
		return ""
	case "stored":
		s.stored = ints(f[1:])
		return ""
	case "keep":
		s.keep = ints(f[1:])
		return ""
	case "range":
		v := ints(f[1:4])
		if s.ranges == nil {
			s.ranges = map[[2]int]int{}
		}
		s.ranges[[2]int{v[0], v[1]}] = v[2]
		return ""
	case "up":
		o = s.core().Step(Input{Kind: InWorkerUp, Worker: f[1], Slots: ints(f[2:3])[0]})
	case "down":
		o = s.core().Step(Input{Kind: InWorkerDown, Worker: f[1]})
	case "start":
		o = s.core().Step(Input{Kind: InStart})
	case "cancel":
		o = s.core().Step(Input{Kind: InCancel})
	case "abandon":
		o = s.core().Step(Input{Kind: InAbandon})
	case "hold":
		o = s.core().Step(Input{Kind: InHold})
	case "dispatch":
		o = s.core().Step(Input{Kind: InDispatch})
	case "adopt":
		o = s.core().Step(Input{Kind: InAdopt, Worker: f[1], Key: ints(f[2:3])[0], NBytes: int64(ints(f[3:4])[0])})
	case "fail-job":
		o = s.core().Step(Input{Kind: InFail, Err: strings.Join(f[1:], " ")})
	case "started":
		k, r := s.key(f[1])
		o = s.core().Step(Input{Kind: InStarted, Key: k, Worker: r.Worker, Attempt: r.Attempt})
	case "finish":
		k, r := s.key(f[1])
		nb := int64(8)
		if len(f) > 2 {
			nb = int64(ints(f[2:3])[0])
		}
		o = s.core().Step(Input{Kind: InFinished, Key: k, Worker: r.Worker, Attempt: r.Attempt, NBytes: nb})
	case "fail":
		k, r := s.key(f[1])
		o = s.core().Step(Input{Kind: InFailed, Key: k, Worker: r.Worker, Attempt: r.Attempt, Err: strings.Join(f[2:], " ")})
	case "cancelled":
		k, r := s.key(f[1])
		o = s.core().Step(Input{Kind: InCancelDone, Key: k, Worker: r.Worker, Attempt: r.Attempt})
	default:
		s.t.Fatalf("unknown command %q", cmd)
	}
	for _, r := range o.Run {
		s.runs[r.Key] = r
	}
	return describe(o)
}

// describe renders an Output one instruction or event a line.
func describe(o Output) string {
	var b strings.Builder
	for _, ev := range o.Events {
		fmt.Fprintf(&b, "%d %v", ev.Key, ev.State)
		if ev.Worker != "" {
			fmt.Fprintf(&b, " on %s", ev.Worker)
		}
		if ev.Err != "" {
			fmt.Fprintf(&b, " (%s)", ev.Err)
		}
		fmt.Fprintf(&b, " live=%d/%dB\n", ev.LiveChunks, ev.LiveBytes)
	}
	for _, f := range o.Free {
		fmt.Fprintf(&b, "free chunk %d on %s\n", f.ID, f.Worker)
	}
	for _, c := range o.Cancel {
		fmt.Fprintf(&b, "cancel %d on %s #%d\n", c.Key, c.Worker, c.Attempt)
	}
	for _, r := range o.Run {
		var ins []string
		for _, in := range r.Inputs {
			ins = append(ins, fmt.Sprintf("%d@%s", in.ID, in.Worker))
		}
		fmt.Fprintf(&b, "run %d on %s #%d rank %d inputs [%s]\n", r.Key, r.Worker, r.Attempt, r.Priority, strings.Join(ins, " "))
	}
	if o.Done {
		if o.Err != nil {
			fmt.Fprintf(&b, "done: %v\n", o.Err)
		} else {
			b.WriteString("done\n")
		}
	}
	return b.String()
}
