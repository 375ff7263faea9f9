package custody

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/custody scripts")

// TestCustodyScripts runs the scenarios of testdata/custody: a few
// schedulers' Machines and the workers' Fences, joined by a network the
// script drives by hand. A script is blocks separated by blank lines: one
// command, "----", then what happened. Lines starting with # are
// comments. Commands:
//
//	sched A B ...             schedulers, alive and known to each other
//	workers W ...             workers, known to every scheduler
//	open A S                  a client makes session S on A
//	write A S KIND ARGS       a client's write: submit G | end G | keep ID:W[,W]:N ... | upload ID:W,W:N ... | drop ID ... | close
//	read A S                  a client reads session S through A
//	stabilize                 deliver every message that can be, until none is left
//	tick MS                   the clock moves MS milliseconds; every running scheduler ticks
//	pause A | resume A        A stops taking anything, then goes on (the clock moved meanwhile)
//	partition A | heal        A is cut off from the schedulers and workers (its clients still reach it)
//	down A B                  B's membership declares A failed; up A B: alive again
//	worker-down W             every scheduler loses worker W
//	offer W ID:N ...          W offers chunks to every scheduler
//	full A | unfull A         A's disk is full (appends fail), or not
//	restart A                 A starts again on its journal (its old state dir)
//	job-end A S G ok|lost|failed
//
// After every command each Machine's Check runs, and so do the cluster's
// invariants: at most one scheduler serves a session, and every write
// acknowledged is in the journal of the one that serves it. With -rewrite
// the expected output is regenerated; review the diff.
func TestCustodyScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/custody/*.txt")
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
			w := newWorld(t)
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
				got := strings.TrimRight(w.do(cmd), "\n")
				if err := w.check(); err != nil {
					t.Errorf("%s: after %q: %v", file, cmd, err)
				}
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

// A world is the schedulers and workers of a script.
type world struct {
	t       *testing.T
	now     int64
	names   []string
	m       map[string]*Machine
	journal map[string]map[int][]Rec // each scheduler's durable journal
	paused  map[string]bool
	cut     map[string]bool
	full    map[string]bool
	workers []string
	fences  map[string]*Fence
	msgs    []msg
	req     uint64
	acked   map[int][]Rec // each session's acknowledged writes
	waiting map[uint64]Rec
	log     *strings.Builder
}

// A msg is a message between schedulers, or to and from a worker.
type msg struct {
	from, to string
	in       Input
	fence    *FenceReq
}

func newWorld(t *testing.T) *world {
	return &world{t: t, m: map[string]*Machine{}, journal: map[string]map[int][]Rec{}, paused: map[string]bool{},
		cut: map[string]bool{}, full: map[string]bool{}, fences: map[string]*Fence{}, acked: map[int][]Rec{}, waiting: map[uint64]Rec{}}
}

// step feeds in to scheduler a and carries out what it answers.
func (w *world) step(a string, in Input) {
	in.Now = w.now
	out := w.m[a].Step(in)
	w.apply(a, out)
}

func (w *world) apply(a string, out Output) {
	b := w.log
	for _, ap := range out.Append {
		kind := "journal"
		if ap.Replica {
			kind = "replica of " + ap.Peer
		}
		last := uint64(0)
		if n := len(ap.Recs); n > 0 {
			last = ap.Recs[n-1].Seq
		}
		fmt.Fprintf(b, "%s: append %s %d%s", a, kind, ap.Session, recList(ap.Recs, ap.Whole))
		if w.full[a] {
			b.WriteString(": no space\n")
			w.step(a, Input{Kind: InAppended, Session: ap.Session, Seq: last, Replica: ap.Replica, Peer: ap.Peer, Whole: ap.Whole, Err: "no space left on device"})
			continue
		}
		if !ap.Replica && !ap.Whole && len(ap.Recs) > 0 && ap.Recs[0].Seq != uint64(len(w.journal[a][ap.Session]))+1 {
			// A journal takes a record only after the one before it.
			w.t.Errorf("%s: append of record %d to a journal of %d", a, ap.Recs[0].Seq, len(w.journal[a][ap.Session]))
		}
		b.WriteString("\n")
		if !ap.Replica {
			j := w.journal[a]
			if ap.Whole {
				j[ap.Session] = slices.Clone(ap.Recs)
			} else {
				j[ap.Session] = append(j[ap.Session], ap.Recs...)
			}
		}
		w.step(a, Input{Kind: InAppended, Session: ap.Session, Seq: last, Replica: ap.Replica, Peer: ap.Peer, Whole: ap.Whole})
	}
	for _, sh := range out.Ship {
		in := Input{Kind: InShip, Peer: a, Session: sh.Session, Epoch: sh.Epoch, Seq: sh.Seq, Recs: sh.Recs, Whole: sh.Whole, Sent: sh.Sent}
		if sh.Ack {
			in = Input{Kind: InShipAck, Peer: a, Session: sh.Session, Epoch: sh.Epoch, Seq: sh.Seq, Err: sh.Err, Home: sh.Home, Sent: sh.Sent}
			fmt.Fprintf(b, "%s: answer %s session %d epoch %d seq %d", a, sh.To, sh.Session, sh.Epoch, sh.Seq)
			if sh.Err != "" {
				fmt.Fprintf(b, " refused (%s, home %s)", sh.Err, sh.Home)
			}
			b.WriteString("\n")
		} else {
			fmt.Fprintf(b, "%s: ship %s session %d epoch %d seq %d%s\n", a, sh.To, sh.Session, sh.Epoch, sh.Seq, recList(sh.Recs, sh.Whole))
		}
		w.msgs = append(w.msgs, msg{from: a, to: sh.To, in: in})
	}
	for _, f := range out.Fence {
		fmt.Fprintf(b, "%s: fence %s session %d epoch %d\n", a, f.Worker, f.Session, f.Epoch)
		f := f
		w.msgs = append(w.msgs, msg{from: a, to: f.Worker, fence: &f})
	}
	for _, tl := range out.Tell {
		fmt.Fprintf(b, "%s: tell %s session %d epoch %d home %s\n", a, tl.To, tl.Session, tl.Epoch, tl.Home)
		w.msgs = append(w.msgs, msg{from: a, to: tl.To, in: Input{Kind: InTold, Peer: a, Session: tl.Session, Epoch: tl.Epoch, Home: tl.Home}})
	}
	for _, x := range out.Acks {
		if r, ok := w.waiting[x.Req]; ok {
			delete(w.waiting, x.Req)
			r.Seq = x.Seq
			w.acked[x.Session] = append(w.acked[x.Session], r)
			fmt.Fprintf(b, "%s: ack request %d (session %d seq %d)\n", a, x.Req, x.Session, x.Seq)
		} else {
			fmt.Fprintf(b, "%s: serve request %d (session %d)\n", a, x.Req, x.Session)
		}
	}
	for _, x := range out.Refuse {
		delete(w.waiting, x.Req)
		fmt.Fprintf(b, "%s: refuse request %d: %s\n", a, x.Req, x.Err)
	}
	for _, x := range out.Forward {
		delete(w.waiting, x.Req)
		fmt.Fprintf(b, "%s: forward request %d to %s\n", a, x.Req, x.To)
	}
	for _, s := range out.TakeOver {
		fmt.Fprintf(b, "%s: serve session %d at epoch %d\n", a, s.Session, s.Epoch)
	}
	for _, s := range out.StepDown {
		fmt.Fprintf(b, "%s: step down from session %d: epoch %d is %s's\n", a, s.Session, s.Epoch, s.Home)
	}
	for _, c := range out.Claim {
		fmt.Fprintf(b, "%s: claim on %s session %d epoch %d %v\n", a, c.Worker, c.Session, c.Epoch, c.IDs)
		for _, id := range c.IDs {
			_ = id
		}
		if f := w.fences[c.Worker]; f != nil {
			if ok, e, h := f.Allow(c.Session, c.Epoch, a); !ok {
				fmt.Fprintf(b, "%s: refuses the claim: session %d is at epoch %d on %s\n", c.Worker, c.Session, e, h)
			}
		}
	}
	for _, c := range out.Free {
		fmt.Fprintf(b, "%s: free on %s session %d epoch %d %v\n", a, c.Worker, c.Session, c.Epoch, c.IDs)
		if f := w.fences[c.Worker]; f != nil {
			if ok, e, h := f.Allow(c.Session, c.Epoch, a); !ok {
				fmt.Fprintf(b, "%s: refuses the free: session %d is at epoch %d on %s\n", c.Worker, c.Session, e, h)
			}
		}
	}
	for _, c := range out.Copy {
		fmt.Fprintf(b, "%s: copy %d from %s to %s\n", a, c.ID, c.From, c.To)
	}
	for _, c := range out.Recall {
		fmt.Fprintf(b, "%s: recall on %s session %d epoch %d %v\n", a, c.Worker, c.Session, c.Epoch, c.IDs)
	}
	if len(out.Lost) > 0 {
		fmt.Fprintf(b, "%s: lost %v\n", a, out.Lost)
	}
	for _, g := range out.Rerun {
		fmt.Fprintf(b, "%s: run graph %d of session %d again\n", a, g.Graph, g.Session)
	}
}

func recList(recs []Rec, whole bool) string {
	var parts []string
	for _, r := range recs {
		parts = append(parts, fmt.Sprintf("%d:%v@%d", r.Seq, r.Kind, r.Epoch))
	}
	s := " [" + strings.Join(parts, " ") + "]"
	if whole {
		s = " whole" + s
	}
	return s
}

// reachable says whether a message can go from a to b now.
func (w *world) reachable(a, b string) bool { return !w.cut[a] && !w.cut[b] }

// stabilize delivers the messages until none can be.
func (w *world) stabilize() {
	for round := 0; round < 1000; round++ {
		var keep []msg
		msgs := w.msgs
		w.msgs = nil
		moved := false
		for _, mg := range msgs {
			if !w.reachable(mg.from, mg.to) {
				moved = true // dropped
				continue
			}
			if w.paused[mg.to] {
				keep = append(keep, mg)
				continue
			}
			moved = true
			if mg.fence != nil {
				f := w.fences[mg.to]
				if f == nil {
					continue // gone
				}
				ok, e, h, dec := f.Accept(mg.fence.Session, mg.fence.Base, mg.fence.Epoch, mg.fence.Home)
				fmt.Fprintf(w.log, "%s: fence session %d epoch %d for %s: %v\n", mg.to, mg.fence.Session, mg.fence.Epoch, mg.fence.Home, map[bool]string{true: "accepted", false: fmt.Sprintf("refused (epoch %d on %s)", e, h)}[ok])
				w.msgs = append(w.msgs, msg{from: mg.to, to: mg.from, in: Input{Kind: InFenced, Worker: mg.to, Session: mg.fence.Session, Epoch: e, Home: h, OK: ok, Decided: dec}})
				continue
			}
			if w.m[mg.to] == nil {
				continue
			}
			w.step(mg.to, mg.in)
		}
		w.msgs = append(keep, w.msgs...)
		if !moved {
			return
		}
	}
	w.t.Fatal("the messages never settle")
}

func (w *world) others(a string) []string {
	var o []string
	for _, n := range w.names {
		if n != a {
			o = append(o, n)
		}
	}
	return o
}

func parseChunks(t *testing.T, args []string, upload bool) []Chunk {
	var cs []Chunk
	for _, a := range args {
		f := strings.Split(a, ":")
		id, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			t.Fatalf("bad chunk %q", a)
		}
		c := Chunk{ID: id, NBytes: 8, Upload: upload}
		if len(f) > 1 && f[1] != "" {
			c.Workers = strings.Split(f[1], ",")
		}
		if len(f) > 2 {
			n, _ := strconv.ParseInt(f[2], 10, 64)
			c.NBytes = n
		}
		cs = append(cs, c)
	}
	return cs
}

func (w *world) do(cmd string) string {
	var b strings.Builder
	w.log = &b
	f := strings.Fields(cmd)
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			w.t.Fatalf("%s: bad number %q", cmd, s)
		}
		return n
	}
	switch f[0] {
	case "sched":
		for _, a := range f[1:] {
			w.names = append(w.names, a)
			w.m[a] = New(Config{Name: a})
			w.journal[a] = map[int][]Rec{}
		}
		for _, a := range f[1:] {
			for _, o := range w.others(a) {
				w.step(a, Input{Kind: InPeerUp, Peer: o})
				w.step(o, Input{Kind: InPeerUp, Peer: a})
			}
		}
	case "workers":
		for _, x := range f[1:] {
			w.workers = append(w.workers, x)
			w.fences[x] = &Fence{}
			for _, a := range w.names {
				w.step(a, Input{Kind: InWorkerUp, Worker: x})
			}
		}
	case "open":
		w.req++
		w.waiting[w.req] = Rec{Kind: KindEpoch}
		w.step(f[1], Input{Kind: InOpen, Session: num(f[2]), Req: w.req})
	case "write":
		r := Rec{Body: strings.Join(f[3:], " ")}
		switch f[3] {
		case "submit":
			r.Kind, r.Graph = KindSubmit, num(f[4])
		case "end":
			r.Kind, r.Graph, r.OK = KindGraphEnd, num(f[4]), true
		case "keep":
			r.Kind, r.Chunks = KindKeep, parseChunks(w.t, f[4:], false)
		case "upload":
			r.Kind, r.Chunks = KindUpload, parseChunks(w.t, f[4:], true)
		case "drop":
			r.Kind, r.Chunks = KindDrop, parseChunks(w.t, f[4:], false)
		case "close":
			r.Kind = KindClose
		default:
			w.t.Fatalf("%s: unknown write", cmd)
		}
		w.req++
		w.waiting[w.req] = r
		w.step(f[1], Input{Kind: InWrite, Session: num(f[2]), Req: w.req, Write: &r})
	case "read":
		w.req++
		w.step(f[1], Input{Kind: InRead, Session: num(f[2]), Req: w.req})
	case "stabilize":
		w.stabilize()
	case "tick":
		w.now += int64(num(f[1])) * 1e6
		for _, a := range w.names {
			if !w.paused[a] {
				w.step(a, Input{Kind: InTick})
			}
		}
	case "pause":
		w.paused[f[1]] = true
	case "resume":
		delete(w.paused, f[1])
	case "partition":
		w.cut[f[1]] = true
	case "heal":
		w.cut = map[string]bool{}
	case "down":
		w.step(f[2], Input{Kind: InPeerDown, Peer: f[1]})
	case "up":
		w.step(f[2], Input{Kind: InPeerUp, Peer: f[1]})
	case "worker-down":
		delete(w.fences, f[1])
		for _, a := range w.names {
			w.step(a, Input{Kind: InWorkerDown, Worker: f[1]})
		}
	case "offer":
		for _, a := range w.names {
			w.step(a, Input{Kind: InOffered, Worker: f[1], Chunks: parseChunks(w.t, f[2:], false)})
		}
	case "full":
		w.full[f[1]] = true
	case "unfull":
		delete(w.full, f[1])
	case "restart":
		a := f[1]
		w.m[a] = New(Config{Name: a})
		var ms []msg
		for _, mg := range w.msgs {
			if mg.to != a && mg.from != a {
				ms = append(ms, mg)
			}
		}
		w.msgs = ms
		for _, o := range w.others(a) {
			w.step(a, Input{Kind: InPeerUp, Peer: o})
		}
		for _, x := range w.workers {
			if w.fences[x] != nil {
				w.step(a, Input{Kind: InWorkerUp, Worker: x})
			}
		}
		var ids []int
		for id := range w.journal[a] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			w.step(a, Input{Kind: InRestart, Session: id, Recs: w.journal[a][id]})
		}
	case "job-end":
		w.step(f[1], Input{Kind: InJobEnd, Session: num(f[2]), Graph: num(f[3]), OK: f[4] == "ok", Lost: f[4] == "lost"})
	default:
		w.t.Fatalf("unknown command %q", cmd)
	}
	return b.String()
}

// check runs every Machine's Check and the cluster's invariants.
func (w *world) check() error {
	serving := map[int]string{}
	for _, a := range w.names {
		m := w.m[a]
		if err := m.Check(); err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
		for _, s := range m.Sessions() {
			if !m.Serving(s, w.now) {
				continue
			}
			if o, ok := serving[s]; ok {
				return fmt.Errorf("session %d served by %s and %s", s, o, a)
			}
			serving[s] = a
		}
	}
	for s, a := range serving {
		j := w.m[a].Journal(s)
		for _, r := range w.acked[s] {
			if r.Kind == KindEpoch {
				continue
			}
			found := false
			for _, x := range j {
				if x.Kind == r.Kind && x.Body == r.Body && x.Graph == r.Graph {
					found = true
					break
				}
			}
			if !found {
				return fmt.Errorf("session %d: acknowledged write %v %q lost on its home %s", s, r.Kind, r.Body, a)
			}
		}
	}
	return nil
}
