package worker

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"marsfs/exec/core"
	"marsfs/exec/wire"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/state scripts")

// TestStateScripts runs the worker policy scenarios of testdata/state,
// without sockets, goroutines or clocks. A script is a series of blocks
// separated by blank lines: one command, "----", then what the state
// asked for and how its queue stands. Lines starting with # are comments.
// Commands (a task K makes chunk 100+K; BYTES are its output's):
//
//	config slots=N [mem=BYTES] [heap=BYTES] [uses] [small=BYTES]
//	open C | close C              a control connection opens or closes
//	submit C K:PRIO[:BYTES] ...   one task, or a unit of several in order,
//	       [in=ID@WORKER:BYTES,...] [attempt=A] reading the inputs given,
//	       [session=S epoch=E]    for session S at epoch E
//	free-at C S E ID ...          a free on connection C of session S at epoch E
//	adopt-at C S E ID ...         an adopt on connection C of session S at epoch E
//	end K [fail]                  task K's kernel returned
//	yield K                       the rest of a unit yielded by K queues again
//	cancel K [attempt=A] | free ID ... | put ID | unreported ID ...
//	lastuse K ID                  whether K is the last reader of chunk ID
//
// With -rewrite the expected output is regenerated from what the state
// does; review the diff.
func TestStateScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/state/*.txt")
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
			h := &stateHarness{t: t, conns: map[string]*wire.Conn{}, tasks: map[string]*Task{}, yielded: map[string]*Task{}}
			for _, block := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
				lines := strings.Split(block, "\n")
				i := 0
				for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
					out.WriteString(lines[i] + "\n")
				}
				if i == len(lines) {
					out.WriteString("\n")
					continue
				}
				cmd := lines[i]
				var want string
				if i+1 < len(lines) && lines[i+1] == "----" {
					want = strings.Join(lines[i+2:], "\n")
				}
				got := h.do(cmd)
				if !*rewrite && got != want {
					t.Errorf("%s:\n%s\n---- got\n%s\n---- want\n%s", file, cmd, got, want)
				}
				out.WriteString(cmd + "\n----\n" + got + "\n\n")
			}
			if *rewrite {
				if err := os.WriteFile(file, []byte(strings.TrimSpace(out.String())+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

type stateHarness struct {
	t       *testing.T
	st      *State
	heap    int64
	conns   map[string]*wire.Conn
	tasks   map[string]*Task // by "K" (attempt 1) or "K/A"
	yielded map[string]*Task // rest of a unit, by the key of the task that yielded it
}

// opts parses the key=value words of f.
func opts(f []string) map[string]string {
	m := map[string]string{}
	for _, w := range f {
		k, v, _ := strings.Cut(w, "=")
		m[k] = v
	}
	return m
}

func (h *stateHarness) num(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		h.t.Fatalf("bad number %q", s)
	}
	return n
}

func (h *stateHarness) task(name string, attempt string) *Task {
	if attempt != "" && attempt != "1" {
		name += "/" + attempt
	}
	t, ok := h.tasks[name]
	if !ok {
		h.t.Fatalf("no task %s", name)
	}
	return t
}

func (h *stateHarness) do(cmd string) string {
	f := strings.Fields(cmd)
	if h.st == nil && f[0] != "config" {
		h.t.Fatalf("%q before config", cmd)
	}
	var extra []string
	switch f[0] {
	case "config":
		o := opts(f[1:])
		cfg := StateConfig{Name: "w", Slots: int(h.num(o["slots"]))}
		if v, ok := o["mem"]; ok {
			cfg.Mem = h.num(v)
		}
		if v, ok := o["heap"]; ok {
			h.heap = h.num(v)
			cfg.HeapChunks = func() int64 { return h.heap }
		}
		if _, ok := o["uses"]; ok {
			cfg.TrackUses = true
		}
		if v, ok := o["small"]; ok {
			limit := h.num(v)
			cfg.Small = func(n int64) bool { return n <= limit }
		}
		h.st = NewState(cfg)
	case "open":
		h.conns[f[1]] = &wire.Conn{}
		h.st.ConnOpened()
	case "close":
		h.st.ConnClosed(h.conns[f[1]])
	case "submit":
		var unit []*Task
		o := opts(f[2:])
		attempt := 1
		if v, ok := o["attempt"]; ok {
			attempt = int(h.num(v))
		}
		var inputs []core.Location
		if v := o["in"]; v != "" {
			for _, in := range strings.Split(v, ",") {
				id, rest, _ := strings.Cut(in, "@")
				w, n, _ := strings.Cut(rest, ":")
				inputs = append(inputs, core.Location{ID: uint64(h.num(id)), Worker: w, NBytes: h.num(n)})
			}
		}
		for _, spec := range f[2:] {
			if strings.Contains(spec, "=") {
				continue
			}
			p := strings.Split(spec, ":")
			key := int(h.num(p[0]))
			bytes := int64(8)
			if len(p) > 2 {
				bytes = h.num(p[2])
			}
			op := &chunk.Op{Kind: "full", Shape: []int{int(bytes)}, DType: tensor.Bool}
			t := &Task{RunKey: wire.RunKey{Job: 1, Key: key, Attempt: attempt}, Prio: int(h.num(p[1])), Op: op,
				ID: uint64(100 + key), Conn: h.conns[f[1]], Inputs: inputs, Addrs: make([]string, len(inputs))}
			if v, ok := o["session"]; ok {
				t.Session, t.Epoch = int(h.num(v)), uint64(h.num(o["epoch"]))
			}
			op.Inputs = make([]int, len(inputs))
			name := p[0]
			if attempt != 1 {
				name += "/" + strconv.Itoa(attempt)
			}
			h.tasks[name] = t
			unit = append(unit, t)
		}
		h.st.Submit(unit)
	case "end":
		t := h.task(f[1], "")
		if h.st.running[t.RunKey] != t {
			h.t.Fatalf("%q: task %s is not running", cmd, f[1])
		}
		out := Computed
		if len(f) > 2 && f[2] == "fail" {
			out = Failed
		}
		store, mine := h.st.Ended(t, out)
		if store {
			h.st.Stored(t)
		}
		extra = append(extra, fmt.Sprintf("ended mine=%v stored=%v", mine, store))
		next, rest := h.st.Next(t)
		if next != nil {
			extra = append(extra, "next "+h.name(next))
		}
		if rest != nil {
			extra = append(extra, "yields "+h.name(rest))
			h.yielded[f[1]] = rest
		}
	case "yield":
		h.st.Yield(h.yielded[f[1]])
		delete(h.yielded, f[1])
	case "cancel":
		t := h.task(f[1], opts(f[2:])["attempt"])
		h.st.Cancel(t.RunKey)
	case "free", "unreported":
		var ids []uint64
		for _, s := range f[1:] {
			ids = append(ids, uint64(h.num(s)))
		}
		if f[0] == "free" {
			h.st.Free(ids)
		} else {
			h.st.Unreported(ids)
		}
	case "put":
		h.st.Put(uint64(h.num(f[1])))
	case "free-at", "adopt-at":
		verb, c := f[0], f[1]
		f = f[1:]
		sess, e := int(h.num(f[1])), uint64(h.num(f[2]))
		var ids []uint64
		for _, s := range f[3:] {
			ids = append(ids, uint64(h.num(s)))
		}
		var err error
		if verb == "free-at" {
			err = h.st.FreeFor(h.conns[c], sess, e, ids)
		} else {
			var taken []uint64
			taken, err = h.st.AdoptFor(h.conns[c], sess, e, ids)
			if len(taken) > 0 {
				extra = append(extra, fmt.Sprintf("taken or held for none %v", taken))
			}
		}
		if err != nil {
			extra = append(extra, "refused: "+err.Error())
		}
	case "adopt":
		var ids []uint64
		for _, s := range f[2:] {
			ids = append(ids, uint64(h.num(s)))
		}
		h.st.Adopt(h.conns[f[1]], ids)
	case "drop-orphans":
		h.st.DropOrphans(uint64(h.num(f[1])))
	case "lastuse":
		extra = append(extra, fmt.Sprintf("lastuse %v", h.st.LastUse(h.task(f[1], ""), uint64(h.num(f[2])))))
	default:
		h.t.Fatalf("unknown command %q", cmd)
	}
	return strings.Join(append(extra, h.describe(h.st.Ready())...), "\n")
}

// name is how a task is shown: its key, and its attempt when not the first.
func (h *stateHarness) name(t *Task) string {
	if t.Attempt != 1 {
		return fmt.Sprintf("%d/%d", t.Key, t.Attempt)
	}
	return strconv.Itoa(t.Key)
}

func (h *stateHarness) names(ts []*Task) string {
	var s []string
	for _, t := range ts {
		s = append(s, h.name(t))
	}
	return strings.Join(s, " ")
}

// describe prints what the state asked for, then its running and queued
// tasks and the chunks it holds.
func (h *stateHarness) describe(rd Ready) []string {
	var out []string
	if len(rd.Forget) > 0 {
		out = append(out, fmt.Sprintf("forget %v", rd.Forget))
	}
	for _, u := range rd.NextUse {
		rank := strconv.FormatInt(u.Rank, 10)
		if u.Rank == 1<<63-1 {
			rank = "none"
		}
		out = append(out, fmt.Sprintf("next-use %d %s", u.ID, rank))
	}
	if len(rd.Interrupt) > 0 {
		out = append(out, "interrupt "+h.names(rd.Interrupt))
	}
	if len(rd.Cancelled) > 0 {
		out = append(out, "report cancelled "+h.names(rd.Cancelled))
	}
	for _, r := range rd.Refused {
		out = append(out, "report refused "+h.name(r.Task)+": "+r.Err)
	}
	if len(rd.Start) > 0 {
		out = append(out, "start "+h.names(rd.Start))
	}
	if rd.Orphaned != 0 {
		out = append(out, fmt.Sprintf("orphaned generation %d", rd.Orphaned))
	}
	var running []*Task
	for _, k := range sortedKeys(h.st.running) {
		running = append(running, h.st.running[k])
	}
	queued := slices.Clone(h.st.queue)
	sort.Slice(queued, func(i, j int) bool { return h.st.queue.less(queued[i], queued[j]) })
	var q []string
	for _, t := range queued {
		s := h.name(t)
		for _, r := range t.Rest {
			s += "+" + h.name(r)
		}
		q = append(q, s)
	}
	held := sortedIDs(h.st.made)
	out = append(out, fmt.Sprintf("running [%s] queued [%s] held %v", h.names(running), strings.Join(q, " "), held))
	if len(h.st.orphans) > 0 {
		out = append(out, fmt.Sprintf("orphans %v", h.st.Orphans()))
	}
	if h.st.QuotaUsed() > 0 {
		out = append(out, fmt.Sprintf("quota used %d", h.st.QuotaUsed()))
	}
	return out
}
