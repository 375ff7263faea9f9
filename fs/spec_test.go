package fs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"marsfs/exec/core"
	"marsfs/exec/engine"
	"marsfs/exec/sched"
	"marsfs/tensor"
	"marsfs/tensor/codec"
	"marsfs/tensor/spec/lang"
)

// needParser skips tests that submit specs while tensor.ParseSpec is the
// temporary stand-in.
func needParser(t testing.TB) {
	t.Helper()
	if _, err := lang.Parse("x = 1\n", nil); err != nil && strings.Contains(err.Error(), "not built yet") {
		t.Skip("spec parser not built yet")
	}
}

// submit writes spec to the session's submit file and closes it.
func submit(t testing.TB, c *Client, sess, spec string) {
	t.Helper()
	if err := c.WriteFile(sess+"/submit", []byte(spec)); err != nil {
		t.Fatalf("submit %q: %v (error file: %q)", spec, err, read(t, c, sess+"/error"))
	}
}

// waitSucceeded waits for graph g of session sess to end, failing the test
// with the graph's error unless it SUCCEEDED.
func waitSucceeded(t testing.TB, c *Client, sess, g string) {
	t.Helper()
	if st := read(t, c, sess+"/graphs/"+g+"/wait"); state(st) != "SUCCEEDED" {
		t.Fatalf("graph %s: %q; error: %q", g, st, read(t, c, sess+"/graphs/"+g+"/error"))
	}
}

func state(status string) string {
	first, _, _ := strings.Cut(status, "\n")
	return first
}

func int64s(b []byte) []int64 {
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

func TestSubmitAndRead(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	for _, addr := range []string{ts.tcp, ts.sock} {
		c := dial(t, addr)
		s := clone(t, c)
		submit(t, c, s, "a = arange(12, chunks=5)\nb = (a * 2).reshape(3, 4)\nfetch b\n")
		if got := names(t, c, s+"/graphs"); strings.Join(got, " ") != "1 last" {
			t.Fatalf("ls graphs = %v", got)
		}
		if got := names(t, c, s+"/graphs/last"); strings.Join(got, " ") != "spec spec.json status wait progress error operands plan events timeline.svg plan.svg ctl" {
			t.Errorf("ls graphs/last = %v", got)
		}
		st := read(t, c, s+"/graphs/1/wait")
		if state(st) != "SUCCEEDED" {
			t.Fatalf("wait = %q; error: %q", st, read(t, c, s+"/graphs/1/error"))
		}
		for _, key := range []string{"operands", "finished", "running", "failed", "elapsed", "peak_bytes", "peak_chunks", "transfer_bytes", "spilled_bytes"} {
			if !regexp.MustCompile(`(?m)^` + key + ` \S+$`).MatchString(st) {
				t.Errorf("status lacks %s:\n%s", key, st)
			}
		}
		if got := read(t, c, s+"/graphs/last/status"); state(got) != "SUCCEEDED" {
			t.Errorf("last/status = %q", got)
		}
		if got := read(t, c, s+"/graphs/1/spec"); !strings.Contains(got, "reshape(3, 4)") {
			t.Errorf("spec = %q", got)
		}
		if got := read(t, c, s+"/graphs/1/error"); got != "" {
			t.Errorf("error of a graph that succeeded = %q", got)
		}
		ops := strings.Split(strings.TrimSuffix(read(t, c, s+"/graphs/1/operands"), "\n"), "\n")
		if want := regexp.MustCompile(`(?m)^operands (\d+)$`).FindStringSubmatch(st)[1]; strconv.Itoa(len(ops)) != want {
			t.Errorf("operands has %d lines, status says %s operands", len(ops), want)
		}
		for _, op := range ops {
			if f := strings.Fields(op); len(f) != 6 || f[2] != "FINISHED" && f[2] != "FREED" {
				t.Errorf("operand of a graph that succeeded: %q", op)
			}
		}
		evs := read(t, c, s+"/graphs/1/events") // the graph has ended: no wait
		if n := strings.Count(evs, " FINISHED "); n != len(ops) {
			t.Errorf("events show %d FINISHED transitions for %d operands:\n%s", n, len(ops), evs)
		}
		if got := names(t, c, s+"/tensors"); strings.Join(got, " ") != "b" {
			t.Fatalf("tensors = %v, want [b]", got)
		}
		if got := names(t, c, s+"/tensors/b"); strings.Join(got, " ") != "meta data npy text arrow csv chunks" {
			t.Errorf("ls tensors/b = %v", got)
		}
		if got, want := read(t, c, s+"/tensors/b/text"), "[[ 0  2  4  6]\n [ 8 10 12 14]\n [16 18 20 22]]\n"; got != want {
			t.Errorf("text = %q, want %q", got, want)
		}
		if got, want := read(t, c, s+"/tensors/b/csv"), "0,2,4,6\n8,10,12,14\n16,18,20,22\n"; got != want {
			t.Errorf("csv = %q, want %q", got, want)
		}
		meta := read(t, c, s+"/tensors/b/meta")
		if !strings.Contains(meta, "shape (3, 4)\n") || !strings.Contains(meta, "dtype int64\n") {
			t.Errorf("meta:\n%s", meta)
		}
		want := []int64{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}
		data, err := c.ReadFile(s + "/tensors/b/data")
		if err != nil {
			t.Fatal(err)
		}
		if got := int64s(data); !equal(got, want) {
			t.Errorf("data = %v, want %v", got, want)
		}
		npy, err := c.ReadFile(s + "/tensors/b/npy")
		if err != nil {
			t.Fatal(err)
		}
		a, err := codec.ReadNPY(bytes.NewReader(npy), 0)
		if err != nil {
			t.Fatalf("npy: %v", err)
		}
		if a.DType != tensor.Int64 || !equal(a.Shape, []int{3, 4}) || !equal(a.Int64s(), want) {
			t.Errorf("npy holds %v%v %v", a.DType, a.Shape, a.Int64s())
		}

		// A kept tensor is named by the next graph.
		submit(t, c, s, "c = b.sum(axis=0)\n")
		if st := read(t, c, s+"/graphs/2/wait"); state(st) != "SUCCEEDED" {
			t.Fatalf("second graph: %q; error: %q", st, read(t, c, s+"/graphs/2/error"))
		}
		if got := names(t, c, s+"/graphs"); strings.Join(got, " ") != "1 2 last" {
			t.Errorf("ls graphs = %v", got)
		}
		data, err = c.ReadFile(s + "/tensors/c/data")
		if err != nil {
			t.Fatal(err)
		}
		if got := int64s(data); !equal(got, []int64{24, 30, 36, 42}) {
			t.Errorf("c = %v, want [24 30 36 42]", got)
		}
		if got := read(t, c, s+"/tensors/c/csv"); got != "24\n30\n36\n42\n" {
			t.Errorf("csv of 1-D c = %q", got)
		}
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSubmitInPieces writes a spec in writes that split its lines.
func TestSubmitInPieces(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.tcp)
	s := clone(t, c)
	f, err := c.Open(s+"/submit", p9.WriteOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, piece := range []string{"# a comment\nx = ara", "nge(4)\ny = x +", " 1\n"} {
		if _, err := f.Write([]byte(piece)); err != nil {
			t.Fatalf("write %q: %v (error: %q)", piece, err, read(t, c, s+"/error"))
		}
	}
	f.Close()
	waitSucceeded(t, c, s, "last")
	data, err := c.ReadFile(s + "/tensors/y/data")
	if err != nil {
		t.Fatal(err)
	}
	if got := int64s(data); !equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("y = %v", got)
	}
}

func TestBadSpec(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	for _, spec := range []string{
		"x = frobnicate(1)\n",
		"x = ones(3)\ny = ones(4)\nz = x + y\n", // shapes do not agree
		"x = ones(3)\ny = x +* 2\nz = y\n",
	} {
		err := c.WriteFile(s+"/submit", []byte(spec))
		if !IsErrno(err, linux.EINVAL) {
			t.Errorf("submit %q: %v, want EINVAL", spec, err)
		}
		msg := read(t, c, s+"/error")
		if !regexp.MustCompile(`^\d+:\d+: `).MatchString(msg) {
			t.Errorf("error after %q = %q, want line:col: message", spec, msg)
		}
	}
	if msg := read(t, c, s+"/error"); !strings.HasPrefix(msg, "2:") {
		t.Errorf("the error of the last bad spec = %q, want it on line 2", msg)
	}
	if got := names(t, c, s+"/graphs"); len(got) != 0 {
		t.Errorf("bad specs made graphs: %v", got)
	}
	// A spec bad only at its end is refused at the clunk: no graph, and the
	// message in error.
	c.WriteFile(s+"/submit", []byte("x = ones(3)\ny = (x"))
	if got := names(t, c, s+"/graphs"); len(got) != 0 {
		t.Errorf("an unfinished spec made graphs: %v", got)
	}
	if msg := read(t, c, s+"/error"); !strings.HasPrefix(msg, "2:") {
		t.Errorf("error after an unfinished spec = %q", msg)
	}
	// The session still works.
	submit(t, c, s, "x = ones(3)\n")
	if st := read(t, c, s+"/graphs/1/wait"); state(st) != "SUCCEEDED" {
		t.Errorf("after bad specs: %q", st)
	}
}

func TestCancel(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.tcp)
	s := clone(t, c)
	submit(t, c, s, "x = rand(8000000000, chunks=1000000, seed=1)\ny = (x * x).sum()\n")
	waited := make(chan string, 1)
	go func() {
		b, err := c.ReadFile(s + "/graphs/1/wait")
		if err != nil {
			waited <- err.Error()
			return
		}
		waited <- string(b)
	}()
	time.Sleep(100 * time.Millisecond)
	st1 := read(t, c, s+"/graphs/1/status")
	if state(st1) != "RUNNING" {
		t.Fatalf("a long graph is %s after 100ms", state(st1))
	}
	// Every open shows fresh content.
	time.Sleep(20 * time.Millisecond)
	elapsed := regexp.MustCompile(`(?m)^elapsed .*$`)
	if st2 := read(t, c, s+"/graphs/1/status"); elapsed.FindString(st1) == elapsed.FindString(st2) {
		t.Errorf("status read twice shows the same %s", elapsed.FindString(st2))
	}
	select {
	case st := <-waited:
		t.Fatalf("wait returned %q before the graph ended", st)
	default:
	}
	// A reader of events follows the graph to its end. The cancel waits
	// for it to have seen an operand run: on a loaded machine none may
	// have started yet.
	followed := make(chan string, 1)
	running := make(chan struct{})
	go func() {
		f, err := c.Open(s+"/graphs/1/events", p9.ReadOnly)
		if err != nil {
			followed <- err.Error()
			close(running)
			return
		}
		defer f.Close()
		var evs []byte
		buf := make([]byte, 64<<10)
		seen := false
		for {
			n, err := f.Read(buf)
			evs = append(evs, buf[:n]...)
			if !seen && bytes.Contains(evs, []byte(" RUNNING ")) {
				seen = true
				close(running)
			}
			if err != nil || n == 0 {
				break
			}
		}
		if !seen {
			close(running)
		}
		followed <- string(evs)
	}()
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("no operand of graph 1 ran in 20 s")
	}
	if err := c.WriteFile(s+"/graphs/1/ctl", []byte("frobnicate")); !IsErrno(err, linux.EINVAL) {
		t.Errorf("bad graph ctl message: %v, want EINVAL", err)
	}
	if msg := read(t, c, s+"/error"); !strings.Contains(msg, "frobnicate") {
		t.Errorf("error after a bad graph ctl message = %q", msg)
	}
	if err := c.WriteFile(s+"/graphs/1/ctl", []byte("cancel\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-waited:
		if state(st) != "CANCELLED" {
			t.Errorf("wait after cancel = %q", st)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("wait did not return after cancel")
	}
	if got := names(t, c, s+"/tensors"); len(got) != 0 {
		t.Errorf("a cancelled graph kept %v", got)
	}
	select {
	case evs := <-followed:
		if !strings.Contains(evs, " RUNNING ") {
			t.Errorf("events of a cancelled graph:\n%.500s", evs)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("events did not end with the graph")
	}
	// Another session works.
	s2 := clone(t, c)
	submit(t, c, s2, "z = ones(5).sum()\n")
	if st := read(t, c, s2+"/graphs/last/wait"); state(st) != "SUCCEEDED" {
		t.Errorf("a new session after a cancel: %q", st)
	}
}

func TestUpload(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	a := &tensor.Array{DType: tensor.Float64, Shape: []int{2, 2}}
	for _, v := range []float64{1, 2, 3, 4} {
		a.Data = binary.LittleEndian.AppendUint64(a.Data, math.Float64bits(v))
	}
	var buf bytes.Buffer
	codec.WriteNPY(&buf, a)
	f, err := c.Create(s+"/tensors", "m.npy")
	if err != nil {
		t.Fatal(err)
	}
	// Two writes: the header alone, then the rest.
	if _, err := f.Write(buf.Bytes()[:20]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(buf.Bytes()[20:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := names(t, c, s+"/tensors"); strings.Join(got, " ") != "m" {
		t.Fatalf("tensors after upload = %v; error %q", got, read(t, c, s+"/error"))
	}
	npy, err := c.ReadFile(s + "/tensors/m/npy")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(npy, buf.Bytes()) {
		t.Errorf("npy of an uploaded tensor differs from what was uploaded")
	}
	submit(t, c, s, "t = m.sum()\n")
	waitSucceeded(t, c, s, "last")
	data, _ := c.ReadFile(s + "/tensors/t/data")
	if len(data) != 8 || math.Float64frombits(binary.LittleEndian.Uint64(data)) != 10 {
		t.Errorf("sum of the upload = %x, want 10.0", data)
	}
}

// TestFlushWait flushes a read blocked in a graph's wait file: the read
// ends (EINTR) and the flush is answered, though the graph runs on.
func TestFlushWait(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.tcp)
	s := clone(t, c)
	submit(t, c, s, "x = rand(8000000000, chunks=1000000, seed=1)\ny = x.sum()\n")
	defer c.WriteFile(s+"/graphs/1/ctl", []byte("cancel"))

	nc := rawConn(t, ts.tcp)
	nc.Write(message(100, 0xffff, u32(1<<16), str("9P2000.L")))
	readMessage(t, nc)
	nc.Write(message(104, 1, u32(1), u32(^uint32(0)), str("me"), str("/"), u32(0)))
	readMessage(t, nc)
	var walk []byte
	walk = append(walk, u32(1)...)
	walk = append(walk, u32(2)...)
	path := strings.Split(strings.TrimPrefix(s, "/")+"/graphs/1/wait", "/")
	walk = append(walk, byte(len(path)), 0)
	for _, name := range path {
		walk = append(walk, str(name)...)
	}
	nc.Write(message(110, 2, walk))                     // Twalk
	if typ, _, body := readMessage(t, nc); typ != 111 { // Rwalk
		t.Fatalf("walk to wait: type %d %x", typ, body)
	}
	nc.Write(message(12, 3, u32(2), u32(0))) // Tlopen, read-only
	if typ, _, body := readMessage(t, nc); typ != 13 {
		t.Fatalf("open wait: type %d %x", typ, body)
	}
	nc.Write(message(116, 4, u32(2), u32(0), u32(0), u32(4096))) // Tread
	time.Sleep(100 * time.Millisecond)
	nc.Write(message(msgTflush, 5, []byte{4, 0})) // Tflush of tag 4
	got := map[uint16]byte{}
	for range 2 {
		typ, tag, _ := readMessage(t, nc)
		got[tag] = typ
	}
	if got[4] != msgRlerror || got[5] != 109 {
		t.Errorf("after a flush, tag 4 got type %d (want Rlerror), tag 5 type %d (want Rflush)", got[4], got[5])
	}
	if st := state(read(t, c, s+"/graphs/1/status")); st != "RUNNING" {
		t.Errorf("the graph is %s after a flushed wait", st)
	}
}

func TestChunks(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.tcp)
	s := clone(t, c)
	submit(t, c, s, "m = full((4, 6), 7, chunks=(3, 4))\n")
	waitSucceeded(t, c, s, "1")
	if got := names(t, c, s+"/tensors/m/chunks"); strings.Join(got, " ") != "0_0 0_1 1_0 1_1" {
		t.Fatalf("ls chunks = %v", got)
	}
	for _, ch := range []struct {
		name, shape, offset string
		n                   int
	}{{"0_0", "(3, 4)", "(0, 0)", 12}, {"0_1", "(3, 2)", "(0, 4)", 6}, {"1_0", "(1, 4)", "(3, 0)", 4}, {"1_1", "(1, 2)", "(3, 4)", 2}} {
		dir := s + "/tensors/m/chunks/" + ch.name
		meta := read(t, c, dir+"/meta")
		for _, want := range []string{"shape " + ch.shape + "\n", "offset " + ch.offset + "\n", "worker local\n", "dtype int64\n"} {
			if !strings.Contains(meta, want) {
				t.Errorf("%s/meta lacks %q:\n%s", ch.name, want, meta)
			}
		}
		b, err := c.ReadFile(dir + "/data")
		if err != nil {
			t.Fatal(err)
		}
		if got := int64s(b); len(got) != ch.n || got[0] != 7 || got[ch.n-1] != 7 {
			t.Errorf("%s/data = %v", ch.name, got)
		}
	}
}

// failing runs nothing: every job fails as a worker would report it.
type failing struct{ *sched.Scheduler }

func (failing) Run(ctx context.Context, job *core.Job) error {
	return errors.New("operand 0 (rand) failed on w9 after 3 attempts: disk on fire")
}

func TestFailedGraph(t *testing.T) {
	needParser(t)
	run := sched.NewLocal(1)
	t.Cleanup(func() { run.Close() })
	ts := startServerOn(t, Config{}, failing{run})
	c := dial(t, ts.sock)
	s := clone(t, c)
	submit(t, c, s, "x = rand(10)\n")
	st := read(t, c, s+"/graphs/1/wait")
	if state(st) != "FAILED" || !strings.Contains(st, "\nerror operand 0 (rand) failed on w9 after 3 attempts: disk on fire\n") {
		t.Errorf("status of a failed graph:\n%s", st)
	}
	if got := read(t, c, s+"/graphs/1/error"); got != "operand 0 (rand) failed on w9 after 3 attempts: disk on fire\n" {
		t.Errorf("error of a failed graph = %q", got)
	}
	if got := names(t, c, s+"/tensors"); len(got) != 0 {
		t.Errorf("a failed graph kept %v", got)
	}
}

// TestSubmitJSON submits the JSON form of a graph, as spec.json shows it,
// in a new session: it computes the same tensor. A bad JSON document is
// refused at its write.
func TestSubmitJSON(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.tcp)
	s1, s2 := clone(t, c), clone(t, c)
	submit(t, c, s1, "a = arange(10, chunks=3)\nb = (a * a).sum()\n")
	read(t, c, s1+"/graphs/1/wait")
	doc := read(t, c, s1+"/graphs/1/spec.json")
	if !strings.HasPrefix(doc, "{") {
		t.Fatalf("spec.json = %q", doc)
	}
	submit(t, c, s2, doc)
	waitSucceeded(t, c, s2, "1")
	want := read(t, c, s1+"/tensors/b/data")
	if got := read(t, c, s2+"/tensors/b/data"); got != want || len(got) != 8 {
		t.Errorf("b from the JSON form = %x, want %x", got, want)
	}
	bad := `{"version": 1, "nodes": [{"id": 0, "op": "frobnicate"}], "outputs": [{"name": "x", "node": 0}]}`
	if err := c.WriteFile(s2+"/submit", []byte(bad)); !IsErrno(err, linux.EINVAL) {
		t.Errorf("a bad JSON spec: %v, want EINVAL", err)
	}
	if msg := read(t, c, s2+"/error"); msg == "" {
		t.Errorf("a bad JSON spec left no error")
	}
}

// TestSubmitChecks drives submit's write-time checks directly: what a
// write that ends there makes of the text written so far.
func TestSubmitChecks(t *testing.T) {
	needParser(t)
	run := sched.NewLocal(1)
	defer run.Close()
	eng := engine.New(run)
	defer eng.Close()
	sess, _ := eng.NewSession("me")
	tests := []struct {
		writes []string
		ok     bool // every write is accepted
	}{
		{[]string{"x = ones(3)\n"}, true},
		{[]string{"x = on", "es(3)\n"}, true},                           // split in a name
		{[]string{"# only a comment\nx = ", "1\n"}, true},               // nothing assigned yet
		{[]string{"# only a comment\n", "x = 1\n"}, false},              // a whole write of nothing
		{[]string{"x = ones(3)\ny = (x +\n"}, false},                    // a whole write, unfinished
		{[]string{"x = ones(3)\ny = (x +", "\n1)\n"}, true},             // ends mid-expression
		{[]string{"x = ones(3) # é(\ny = (x\n+ 1)\n"}, true},            // an open bracket, closed
		{[]string{"x = ones(3) # é(\ny = (x\n", "+ 1)\n"}, false},       // ... left open by a write
		{[]string{"x = ones(3)\ny = (x", "\n+ 1)\n"}, true},             // ... by a piece not a line
		{[]string{"x = ones(3)\ny = x + \\", "\n1\n"}, true},            // a continued line
		{[]string{"x = ones(3)\ny = x + \\\n", "1\n"}, false},           // ... ended by a whole write
		{[]string{strings.Repeat(" ", 4090) + "x = (\n", "1)\n"}, true}, // a block cut by cat
		{[]string{"n = 3\n", "x = ones(n)\n"}, true},                    // n alone is no output
		{[]string{"s = 'a(b'\n", "x = ones(2)\n"}, true},                // brackets in strings
		{[]string{"x = ones(3)\ny = x +\n"}, false},                     // no continuation
		{[]string{"{\"version\": 1,", " \"nodes\": []"}, true},          // JSON, incomplete
		{[]string{"x = frobnicate(3)\n"}, false},                        // unknown function
		{[]string{"x = ones(3)\n", "y = ones(4)\nz = x + y\n"}, false},  // shapes
		{[]string{"x = ones(3)\ny = )\nz = x\n"}, false},                // error before the end
	}
	for _, tt := range tests {
		h := &submitter{sess: sess, max: 1 << 20}
		ok := true
		off := int64(0)
		for _, w := range tt.writes {
			if _, err := h.WriteAt([]byte(w), off); err != nil {
				ok = false
				break
			}
			off += int64(len(w))
		}
		if ok != tt.ok {
			t.Errorf("writes %q: accepted %v, want %v (error %q)", tt.writes, ok, tt.ok, sess.Error())
		}
	}
	// A write's error names the line and column in the whole text, as the
	// whole text's parse does, though each write parses only the
	// statements it completed.
	for _, tt := range []struct {
		writes []string
		msg    string
	}{
		{[]string{"x = ones(3)\n", "y = ones(4)\nz = x + y\n"}, "3:7: "},
		{[]string{"x = ones(3)\n\n# c\n", "y = (x +", "\nfrob(2))\n"}, "5:1: unknown function frob"},
		{[]string{"x = ones(3)\n", "y = (x +\n"}, "3:1: "},
		{[]string{"x = ones(3)\ny = x\n", "fetch y, y\n"}, "3:10: y is fetched twice"},
	} {
		h := &submitter{sess: sess, max: 1 << 20}
		off := int64(0)
		for _, w := range tt.writes {
			if _, err := h.WriteAt([]byte(w), off); err != nil {
				break
			}
			off += int64(len(w))
		}
		if msg := sess.Error(); !strings.HasPrefix(msg, tt.msg) {
			t.Errorf("writes %q: error %q, want %q...", tt.writes, msg, tt.msg)
		}
	}
}

// TestSummarizedText reads the text of a tensor too large to print whole:
// NumPy's summarized print, made from the chunks at its corners.
func TestSummarizedText(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	submit(t, c, s, "x = (arange(3000.0, chunks=70) * 0.5).reshape(30, 100)\nfetch x\n")
	waitSucceeded(t, c, s, "1")
	// print(np.arange(3000.0).reshape(30, 100) * 0.5) in NumPy 1.24.
	want := "[[0.0000e+00 5.0000e-01 1.0000e+00 ... 4.8500e+01 4.9000e+01 4.9500e+01]\n" +
		" [5.0000e+01 5.0500e+01 5.1000e+01 ... 9.8500e+01 9.9000e+01 9.9500e+01]\n" +
		" [1.0000e+02 1.0050e+02 1.0100e+02 ... 1.4850e+02 1.4900e+02 1.4950e+02]\n" +
		" ...\n" +
		" [1.3500e+03 1.3505e+03 1.3510e+03 ... 1.3985e+03 1.3990e+03 1.3995e+03]\n" +
		" [1.4000e+03 1.4005e+03 1.4010e+03 ... 1.4485e+03 1.4490e+03 1.4495e+03]\n" +
		" [1.4500e+03 1.4505e+03 1.4510e+03 ... 1.4985e+03 1.4990e+03 1.4995e+03]]\n"
	if got := read(t, c, s+"/tensors/x/text"); got != want {
		t.Errorf("text =\n%s\nwant\n%s", got, want)
	}
}
