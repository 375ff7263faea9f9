package journal

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// history is a session's records as a scheduler would write them: two
// uploads, graphs that keep tensors, a drop, chunks moved, a graph still
// running when the journal stops.
func history() []Record {
	up := func(name string, ids ...uint64) *Tensor {
		t := &Tensor{Name: name, DType: "float64", Shape: []int{len(ids) * 4}, Splits: [][]int{nil}}
		for _, id := range ids {
			t.Splits[0] = append(t.Splits[0], 4)
			t.Chunks = append(t.Chunks, Chunk{ID: id, NBytes: 32, Workers: []string{"w1", "w2"}})
		}
		return t
	}
	kept := func(name string, graph int, ids ...uint64) *Tensor {
		t := up(name, ids...)
		t.Graph = graph
		for i := range t.Chunks {
			t.Chunks[i].Workers = []string{"w1"}
		}
		return t
	}
	return []Record{
		{Kind: KindSession, Session: 7, Owner: "glenda"},
		{Kind: KindUpload, Tensor: up("x", 100, 101, 102)},
		{Kind: KindSubmit, Graph: 1, Spec: "y = x * 2\nkeep y\n", Inputs: map[string]uint64{"x": 100}},
		{Kind: KindKeep, Tensor: kept("y", 1, 200, 201, 202)},
		{Kind: KindGraphEnd, Graph: 1, State: "SUCCEEDED"},
		{Kind: KindSubmit, Graph: 2, Spec: "z = bad(\n", Inputs: map[string]uint64{"x": 100, "y": 200}},
		{Kind: KindGraphEnd, Graph: 2, State: "FAILED", Err: "line 1: bad"},
		{Kind: KindUpload, Tensor: up("w", 300)},
		{Kind: KindDrop, Name: "w"},
		{Kind: KindMove, Chunks: []Chunk{{ID: 201, NBytes: 32, Workers: []string{"w3"}}}},
		{Kind: KindUpload, Tensor: up("x", 400)}, // x replaced: graph 1 read the old one
		{Kind: KindSubmit, Graph: 3, Spec: "s = sum(y)\nkeep s\n", Inputs: map[string]uint64{"x": 400, "y": 200}},
	}
}

// writeHistory writes rs through a Log, syncing each, and returns the
// file's bytes and the offset at which each record ends.
func writeHistory(t *testing.T, rs []Record) (data []byte, ends []int) {
	t.Helper()
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Create(rs[0].Session, rs[0].Owner)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ends = append(ends, int(l.Size()))
	for _, r := range rs[1:] {
		if err := l.Append(r, true); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, int(l.Size()))
	}
	data, err = os.ReadFile(d.file(rs[0].Session))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != ends[len(ends)-1] {
		t.Fatalf("file holds %d bytes, the log says %d", len(data), ends[len(ends)-1])
	}
	return data, ends
}

// want folds the first n records.
func want(t *testing.T, rs []Record, n int) *State {
	t.Helper()
	s := &State{}
	for _, r := range rs[:n] {
		if err := s.Apply(r); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// sameState compares what a session serves: its graphs (with what each
// read), its tensors; not the versions no graph read, which compaction
// sheds.
func sameState(a, b *State) bool {
	x, y := *a, *b
	x.versions, y.versions = nil, nil
	return reflect.DeepEqual(x, y)
}

// TestTruncateEverywhere cuts the file at every byte: cut at the end of
// record k it restores exactly the state after k records; cut anywhere
// else, the session is lost. It never restores anything else.
func TestTruncateEverywhere(t *testing.T) {
	rs := history()
	data, ends := writeHistory(t, rs)
	boundary := map[int]int{} // offset → records before it
	for k, e := range ends {
		boundary[e] = k + 1
	}
	var restored, lost int
	for n := 0; n <= len(data); n++ {
		s, err := Restore(data[:n])
		k, atBoundary := boundary[n]
		switch {
		case atBoundary && err != nil:
			t.Fatalf("cut at the end of record %d (byte %d): %v", k, n, err)
		case atBoundary:
			if w := want(t, rs, k); !reflect.DeepEqual(s, w) { // versions too: nothing was compacted
				t.Fatalf("cut at the end of record %d: restored\n%+v\nwant\n%+v", k, s, w)
			}
			restored++
		case err == nil:
			t.Fatalf("cut at byte %d, inside a record: restored %+v, want the session lost", n, s)
		default:
			if n > 0 && !errors.Is(err, ErrTorn) {
				t.Fatalf("cut at byte %d: %v, want a torn record", n, err)
			}
			lost++
		}
	}
	if restored != len(rs) {
		t.Errorf("restored at %d boundaries, want %d", restored, len(rs))
	}
	t.Logf("%d bytes, %d records: %d cuts restored exactly, %d reported lost", len(data), len(rs), restored, lost)
}

// TestFlipEverywhere flips bits of every byte: the session is lost every
// time, never restored with a wrong byte.
func TestFlipEverywhere(t *testing.T) {
	data, _ := writeHistory(t, history())
	for i := range data {
		for _, mask := range []byte{0x01, 0x10, 0x80, 0xff} {
			bad := append([]byte(nil), data...)
			bad[i] ^= mask
			if s, err := Restore(bad); err == nil {
				t.Fatalf("byte %d ^ %#x: restored %+v, want the session lost", i, mask, s)
			}
		}
	}
}

// TestCompactKeepsState checks that compaction writes a shorter file that
// restores to the same state, and that appends go on after it.
func TestCompactKeepsState(t *testing.T) {
	rs := history()
	d, _ := OpenDir(t.TempDir())
	l, err := d.Create(7, "glenda")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs[1:] {
		if err := l.Append(r, false); err != nil {
			t.Fatal(err)
		}
	}
	before := l.Size()
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	if l.Size() >= before {
		t.Errorf("compacted to %d bytes from %d", l.Size(), before)
	}
	end := Record{Kind: KindGraphEnd, Graph: 3, State: "SUCCEEDED"}
	if err := l.Append(end, true); err != nil {
		t.Fatal(err)
	}
	l.Close()
	loaded, err := d.Load()
	if err != nil || len(loaded) != 1 || loaded[0].Err != nil {
		t.Fatalf("load: %v %+v", err, loaded)
	}
	got, w := loaded[0].State, want(t, append(rs, end), len(rs)+1)
	if !sameState(got, w) {
		t.Fatalf("after compaction:\n%+v\nwant\n%+v", got, w)
	}
	if g := got.Graphs[len(got.Graphs)-1]; g.ID != 3 || g.Running() {
		t.Errorf("last graph %+v", g)
	}
}

// TestLoadReportsLost puts a good file, a torn one, one under another's
// name and a compaction's leftover in one directory.
func TestLoadReportsLost(t *testing.T) {
	d, _ := OpenDir(t.TempDir())
	a, _ := d.Create(1, "a")
	a.Append(Record{Kind: KindSubmit, Graph: 1, Spec: "x = ones(4)\n"}, true)
	a.Close()
	b, _ := d.Create(2, "b")
	b.Append(Record{Kind: KindSubmit, Graph: 1, Spec: "x = ones(4)\n"}, true)
	b.Close()
	data, _ := os.ReadFile(d.file(2))
	os.WriteFile(d.file(2), data[:len(data)-3], 0o600)
	os.WriteFile(filepath.Join(d.Path(), "session-3.journal.tmp"), []byte("junk"), 0o600)
	os.WriteFile(d.file(4), data, 0o600) // session 2's file under 4's name
	loaded, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 3 {
		t.Fatalf("loaded %d sessions, want 3: %+v", len(loaded), loaded)
	}
	if loaded[0].Err != nil || loaded[0].State.Owner != "a" || !loaded[0].State.Graphs[0].Running() {
		t.Errorf("session 1: %+v", loaded[0])
	}
	// A torn record: cut off, the session restored as it was before it.
	if loaded[1].Err != nil || loaded[1].Cut == 0 || len(loaded[1].State.Graphs) != 0 {
		t.Errorf("session 2: %+v, want its torn submit cut", loaded[1])
	}
	if now, _ := os.ReadFile(d.file(2)); int64(len(now)) != loaded[1].Cut {
		t.Errorf("session 2's file is %d bytes, cut at %d", len(now), loaded[1].Cut)
	}
	if loaded[2].State != nil || loaded[2].Err == nil || !strings.Contains(loaded[2].Err.Error(), "opens session 2") {
		t.Errorf("session 4: %+v, want lost", loaded[2])
	}
	if _, err := os.Stat(filepath.Join(d.Path(), "session-3.journal.tmp")); err == nil {
		t.Error("leftover compaction file not removed")
	}
}

// TestLoadCutsTornEverywhere cuts the file at every byte and loads it:
// cut inside record k, it restores the state after the records before k,
// and the file is cut back to their end; cut inside the first, the
// session is lost. TestTruncateEverywhere checks Restore, which cuts
// nothing.
func TestLoadCutsTornEverywhere(t *testing.T) {
	rs := history()
	data, ends := writeHistory(t, rs)
	d, _ := OpenDir(t.TempDir())
	k := 0 // records whole before byte n
	for n := 1; n < len(data); n++ {
		for k < len(ends) && ends[k] <= n {
			k++
		}
		os.WriteFile(d.file(7), data[:n], 0o600)
		loaded, err := d.Load()
		if err != nil || len(loaded) != 1 {
			t.Fatalf("cut at byte %d: %v %+v", n, err, loaded)
		}
		l := loaded[0]
		if k == 0 {
			if l.State != nil {
				t.Fatalf("cut at byte %d, inside the opening record: restored %+v", n, l.State)
			}
			continue
		}
		if l.Err != nil || !sameFold(l.State, want(t, rs, k)) {
			t.Fatalf("cut at byte %d, inside record %d: %v, restored %+v", n, k, l.Err, l.State)
		}
		if atEnd := n == ends[k-1]; atEnd != (l.Cut == 0) {
			t.Fatalf("cut at byte %d: Cut %d", n, l.Cut)
		}
		if now, _ := os.ReadFile(d.file(7)); len(now) != ends[k-1] {
			t.Fatalf("cut at byte %d: the file is %d bytes, want %d", n, len(now), ends[k-1])
		}
	}
}

// TestFlipNeverTorn flips bits of every byte: none is taken for a torn
// record (Torn), which Load would cut off and restore what is before it;
// a flipped length in particular is not. The session is lost every time,
// never restored, not even in part.
func TestFlipNeverTorn(t *testing.T) {
	data, _ := writeHistory(t, history())
	for i := range data {
		for _, mask := range []byte{0x01, 0x10, 0x80, 0xff} {
			bad := append([]byte(nil), data...)
			bad[i] ^= mask
			_, err := Restore(bad)
			if off, torn := Torn(bad, err); torn {
				t.Fatalf("byte %d ^ %#x: taken for a record torn at byte %d (%v)", i, mask, off, err)
			}
		}
	}
}

// TestAppendRefusesNonsense checks the Log keeps the file a history.
func TestAppendRefusesNonsense(t *testing.T) {
	d, _ := OpenDir(t.TempDir())
	l, _ := d.Create(1, "a")
	defer l.Close()
	size := l.Size()
	if err := l.Append(Record{Kind: KindGraphEnd, Graph: 9, State: "SUCCEEDED"}, true); err == nil {
		t.Error("end of a graph never submitted accepted")
	}
	if l.Size() != size {
		t.Error("a refused record was written")
	}
}

func FuzzDecode(f *testing.F) {
	var seed []byte
	for _, r := range history() {
		seed, _ = Encode(seed, r)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		// Never a panic, and never a state from a damaged file.
		_, derr := Decode(data)
		s, err := Restore(data)
		if err == nil && derr != nil {
			t.Fatalf("restored %+v from a file Decode finds damaged: %v", s, derr)
		}
		if off, torn := Torn(data, err); torn && (off < 0 || off > int64(len(data))) {
			t.Fatalf("torn at byte %d of %d", off, len(data))
		}
	})
}

// BenchmarkAppend measures a submit-sized record appended, with and
// without fsync, on the disk of the test's temporary directory.
func BenchmarkAppend(b *testing.B) {
	for _, sync := range []bool{false, true} {
		name := "nosync"
		if sync {
			name = "sync"
		}
		b.Run(name, func(b *testing.B) {
			d, _ := OpenDir(b.TempDir())
			l, err := d.Create(1, "a")
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			src := strings.Repeat("x = ones((1000, 1000), chunks=100)\n", 5)
			for i := 0; b.Loop(); i++ {
				if err := l.Append(Record{Kind: KindSubmit, Graph: i + 1, Spec: src}, sync); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
