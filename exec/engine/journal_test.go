package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"marsfs/exec/journal"
	"marsfs/exec/sched"
	"marsfs/tensor"
)

// journaled starts an engine on runner r keeping its journal in dir.
func journaled(t *testing.T, r Runner, dir string) (*Engine, []journal.Loaded) {
	t.Helper()
	d, err := journal.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	e := New(r)
	// As a scheduler process does: each counts its chunk IDs from a
	// random start, so the second does not name chunks as the first did.
	e.SetSpace(0)
	e.SetJournal(d, t.Logf)
	return e, loaded
}

func sameArray(t *testing.T, what string, got, want *tensor.Array) {
	t.Helper()
	if got.DType != want.DType || !equalInts(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("%s: not the same bytes after the restart", what)
	}
}

func equalInts(a, b []int) bool {
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

// TestRestoreFromJournal runs a session on one engine, lets it go as a
// killed scheduler would (nothing freed), and starts another on the same
// journal and workers: the session, its graphs and tensors come back, a
// kept chunk lost meanwhile is made again bit-identical from the lineage
// rebuilt from the journal, and a spec that was running runs again.
func TestRestoreFromJournal(t *testing.T) {
	r := sched.NewLocal(2)
	t.Cleanup(func() { r.Close() })
	dir := t.TempDir()
	e1, _ := journaled(t, r, dir)
	s, err := e1.NewSession("glenda")
	if err != nil {
		t.Fatal(err)
	}
	up := tensor.NewArray(tensor.Float64, []int{1000})
	for i := range 1000 {
		up.Float64s()[i] = float64(i) * 0.5
	}
	ctx := context.Background()
	if err := s.Upload(ctx, "u", up); err != nil {
		t.Fatal(err)
	}
	waitOK(t, mustSubmit(t, s, "x = random.normal(size=(300, 300), seed=7, chunks=100)\ny = x @ x + u[:300]\nfetch y\n"))
	waitOK(t, mustSubmit(t, s, "x = y * 2\nfetch x\n")) // replaces nothing; reads y
	waitOK(t, mustSubmit(t, s, "y = y - 1\nfetch y\n")) // replaces y, which x's lineage read
	want := map[string]*tensor.Array{"u": fetch(t, s, "u"), "x": fetch(t, s, "x"), "y": fetch(t, s, "y")}
	e1.Close() // with a journal: the session stays, its chunks too

	e2, loaded := journaled(t, r, dir)
	defer e2.Close()
	res, err := e2.Restore(loaded)
	if err != nil || res.Sessions != 1 || len(res.Lost) != 0 {
		t.Fatalf("restore: %+v %v", res, err)
	}
	s2, ok := e2.Session(s.ID())
	if !ok || s2.Owner() != "glenda" || len(s2.Graphs()) != 3 {
		t.Fatalf("session %d not restored as it was: %v", s.ID(), s2)
	}
	for name, a := range want {
		sameArray(t, name, fetch(t, s2, name), a)
	}
	// x's chunks lost: made again from its lineage, which reads the y
	// that was replaced since, itself made again.
	for _, name := range []string{"x", "y"} {
		tt, _ := s2.Tensor(name)
		r.Free(tt.Tiled().Keys)
	}
	for _, name := range []string{"x", "y"} {
		tt, _ := s2.Tensor(name)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := tt.Restore(cctx); err != nil {
			t.Fatalf("restore %s: %v", name, err)
		}
		cancel()
		sameArray(t, name+" made again", fetch(t, s2, name), want[name])
	}
	// The next graph is numbered after the journaled ones.
	g := mustSubmit(t, s2, "z = x + y\nfetch z\n")
	waitOK(t, g)
	if g.ID() != 4 {
		t.Errorf("next graph numbered %d, want 4", g.ID())
	}
}

// TestRestoreRerunsRunningGraph leaves a submit without its end in the
// journal: the restarted engine runs it again under its number.
func TestRestoreRerunsRunningGraph(t *testing.T) {
	r := sched.NewLocal(2)
	t.Cleanup(func() { r.Close() })
	dir := t.TempDir()
	d, _ := journal.OpenDir(dir)
	l, err := d.Create(5, "glenda")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(journal.Record{Kind: journal.KindSubmit, Graph: 1, Spec: "a = arange(10, chunks=3) * 3\nfetch a\n"}, true); err != nil {
		t.Fatal(err)
	}
	l.Close()
	e, loaded := journaled(t, r, dir)
	defer e.Close()
	res, err := e.Restore(loaded)
	if err != nil || res.Sessions != 1 || res.Rerun != 1 {
		t.Fatalf("restore: %+v %v", res, err)
	}
	s, _ := e.Session(5)
	g, _ := s.Graph(1)
	waitOK(t, g)
	a := fetch(t, s, "a")
	if a.Len() != 10 || a.Float64At(9) != 27 {
		t.Errorf("a = %v", a)
	}
	// The graph's end is in the journal now.
	loaded, _ = d.Load()
	if st := loaded[0].State; st == nil || st.Graphs[0].State != "SUCCEEDED" || st.Tensors["a"] == nil {
		t.Errorf("journal after the rerun: %+v", loaded[0])
	}
}

// TestRestoreReportsDamage: a damaged file is a lost session, not a
// half one.
func TestRestoreReportsDamage(t *testing.T) {
	r := sched.NewLocal(1)
	t.Cleanup(func() { r.Close() })
	dir := t.TempDir()
	e1, _ := journaled(t, r, dir)
	s, _ := e1.NewSession("glenda")
	waitOK(t, mustSubmit(t, s, "a = arange(10, chunks=3)\nfetch a\n"))
	e1.Close()
	path := filepath.Join(dir, "session-1.journal")
	data, _ := os.ReadFile(path)
	data[len(data)-2] ^= 1
	os.WriteFile(path, data, 0o600)
	e2, loaded := journaled(t, r, dir)
	defer e2.Close()
	res, _ := e2.Restore(loaded)
	if res.Sessions != 0 || len(res.Lost) != 1 || res.Lost[0].Session != 1 {
		t.Fatalf("restore of a damaged journal: %+v", res)
	}
	if _, ok := e2.Session(1); ok {
		t.Error("damaged session served")
	}
}

// TestRestoreEveryPrefix cuts a real session's journal at every byte and
// starts an engine on each cut: cut at a record's end, the session comes
// back as it was then, every tensor it serves holding exactly the bytes
// that version had (made again from lineage when its chunks were freed
// since; a graph running then run again); cut inside a record, the torn
// record is cut off and the session read as at the record before it; cut
// inside the first, it is lost. No cut serves a wrong byte.
func TestRestoreEveryPrefix(t *testing.T) {
	r := sched.NewLocal(2)
	t.Cleanup(func() { r.Close() })
	dir := t.TempDir()
	e1, _ := journaled(t, r, dir)
	s, err := e1.NewSession("glenda")
	if err != nil {
		t.Fatal(err)
	}
	// version names a tensor's version: an upload by its first chunk,
	// what a graph kept by the graph.
	type version struct {
		name  string
		graph int
		first uint64
	}
	versionOf := func(tt *Tensor) version {
		v := version{name: tt.Name(), graph: tt.Graph()}
		if v.graph == 0 {
			v.first = tt.Tiled().Keys[0]
		}
		return v
	}
	bytesOf := map[version][]byte{}
	note := func() {
		for _, name := range s.Tensors() {
			tt, _ := s.Tensor(name)
			bytesOf[versionOf(tt)] = fetch(t, s, name).Data
		}
	}
	up := tensor.NewArray(tensor.Float64, []int{64})
	for i := range up.Float64s() {
		up.Float64s()[i] = float64(i * i)
	}
	ctx := context.Background()
	if err := s.Upload(ctx, "u", up); err != nil {
		t.Fatal(err)
	}
	note()
	for _, src := range []string{
		"a = random.rand((40, 40), seed=3, chunks=20) + u[:40]\nfetch a\n",
		"b = a @ a\nfetch b\n",
		"a = a * 0.5\nfetch a\n", // replaces a, which b's lineage read
		"c = (a + b).sum(axis=0)\nfetch c\n",
	} {
		waitOK(t, mustSubmit(t, s, src))
		note()
	}
	if err := s.Drop("b"); err != nil {
		t.Fatal(err)
	}
	e1.Close()
	path := filepath.Join(dir, "session-1.journal")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := journal.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int]bool{}
	off := 0
	for _, rec := range rs {
		b, _ := journal.Encode(nil, rec)
		off += len(b)
		ends[off] = true
	}
	if off != len(data) {
		t.Fatalf("records re-encode to %d bytes, the file has %d", off, len(data))
	}
	firstEnd := len(data)
	for e := range ends {
		firstEnd = min(firstEnd, e)
	}
	restored, torn, lost := 0, 0, 0
	for n := 1; n <= len(data); n++ {
		cut := t.TempDir()
		if err := os.WriteFile(filepath.Join(cut, "session-1.journal"), data[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		e, loaded := journaled(t, r, cut)
		if !ends[n] && n >= firstEnd {
			// Inside a record: the torn one is cut off (journal.Torn),
			// and the file read as the records before it, whose end
			// is one of the cuts restored here.
			if len(loaded) != 1 || loaded[0].Err != nil || loaded[0].Cut == 0 || !ends[int(loaded[0].Cut)] {
				t.Fatalf("cut at byte %d, inside a record: %+v", n, loaded)
			}
			torn++
			e.Close()
			continue
		}
		res, err := e.Restore(loaded)
		if err != nil {
			t.Fatal(err)
		}
		s2, ok := e.Session(1)
		if n < firstEnd {
			// Inside the opening record: nothing to restore.
			if ok || len(res.Lost) != 1 {
				t.Fatalf("cut at byte %d, inside the first record: served %v, lost %v", n, ok, res.Lost)
			}
			lost++
			e.Close()
			continue
		}
		if !ok {
			t.Fatalf("cut at byte %d, a record's end: session not served (%v)", n, res.Lost)
		}
		for _, g := range s2.Graphs() {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			g.Wait(cctx)
			cancel()
		}
		for _, name := range s2.Tensors() {
			tt, _ := s2.Tensor(name)
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := tt.Restore(cctx)
			cancel()
			if err != nil {
				t.Fatalf("cut at byte %d: tensor %s: %v", n, name, err)
			}
			want, known := bytesOf[versionOf(tt)]
			if !known {
				t.Fatalf("cut at byte %d: tensor %s of graph %d, a version never made", n, name, tt.Graph())
			}
			if !bytes.Equal(fetch(t, s2, name).Data, want) {
				t.Fatalf("cut at byte %d: tensor %s of graph %d: wrong bytes", n, name, tt.Graph())
			}
		}
		restored++
		e.Close()
	}
	t.Logf("%d bytes, %d records: %d cuts restored with every byte right, %d inside a record read as the records before it, %d lost", len(data), len(rs), restored, torn, lost)
}
