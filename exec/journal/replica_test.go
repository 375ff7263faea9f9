package journal

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// shipTo makes d's Logs ship each write to a Replica named "s1" under a
// second state directory, as a scheduler's successor would keep it; a
// shipment the replica refuses fails the test.
func shipTo(t *testing.T, d *Dir) *Replica {
	t.Helper()
	other, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := other.Replica("s1")
	if err != nil {
		t.Fatal(err)
	}
	d.SetShip(func(s Shipment) {
		if err := r.Apply(s); err != nil {
			t.Errorf("replica: %v", err)
		}
	})
	return r
}

// TestReplicaFollows: a session's history written, compacted, appended to
// again and resumed reads back from the replica byte for byte as from the
// file, and folds to the same state; a session removed leaves it.
func TestReplicaFollows(t *testing.T) {
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := shipTo(t, d)
	rs := history()
	l, err := d.Create(rs[0].Session, rs[0].Owner)
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range rs[1:] {
		if err := l.Append(rec, false); err != nil {
			t.Fatal(err)
		}
		if i == 5 {
			if err := l.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	}
	same := func(when string) {
		t.Helper()
		a, err := os.ReadFile(d.file(7))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(r.Dir().file(7))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: the replica has %d bytes, the file %d, not the same", when, len(b), len(a))
		}
		got, err := r.Dir().Load()
		if err != nil || len(got) != 1 || got[0].Err != nil {
			t.Fatalf("%s: replica loads %+v, %v", when, got, err)
		}
		if !sameState(got[0].State, l.State()) {
			t.Fatalf("%s: the replica folds to another state", when)
		}
	}
	same("appended")
	l.Close()
	loaded, err := d.Load()
	if err != nil {
		t.Fatal(err)
	}
	if l, err = d.Resume(loaded[0].State); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Record{Kind: KindDrop, Name: "y"}, true); err != nil {
		t.Fatal(err)
	}
	same("resumed")
	l.Close()
	if err := d.Remove(7); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Dir().Load(); len(got) != 0 {
		t.Fatalf("removed, the replica still has %d sessions", len(got))
	}
}

// TestReplicaRefuses: an append at the wrong offset or to a session the
// replica never saw is a gap (only a reset mends it), damaged frames and
// a reset that does not open the session are refused; none of them
// changes the file.
func TestReplicaRefuses(t *testing.T) {
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Replica("s1")
	if err != nil {
		t.Fatal(err)
	}
	rs := history()
	open, _ := Encode(nil, rs[0])
	next, _ := Encode(nil, rs[1])
	if err := r.Apply(Shipment{Session: 7, Offset: 0, Frames: next}); !errors.Is(err, ErrGap) {
		t.Fatalf("append to no file: %v, want ErrGap", err)
	}
	if err := r.Apply(Shipment{Session: 7, Reset: true, Frames: next}); err == nil {
		t.Fatal("a reset that does not open the session was taken")
	}
	if err := r.Apply(Shipment{Session: 8, Reset: true, Frames: open}); err == nil {
		t.Fatal("a reset opening session 7 was taken as session 8's")
	}
	if err := r.Apply(Shipment{Session: 7, Reset: true, Frames: open}); err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(Shipment{Session: 7, Offset: int64(len(open)) + 1, Frames: next}); !errors.Is(err, ErrGap) {
		t.Fatalf("append past the end: %v, want ErrGap", err)
	}
	torn := next[:len(next)-1]
	if err := r.Apply(Shipment{Session: 7, Offset: int64(len(open)), Frames: torn}); err == nil {
		t.Fatal("a torn record was taken")
	}
	flipped := bytes.Clone(next)
	flipped[len(flipped)-1] ^= 1
	if err := r.Apply(Shipment{Session: 7, Offset: int64(len(open)), Frames: flipped}); err == nil {
		t.Fatal("a damaged record was taken")
	}
	if b, _ := os.ReadFile(r.Dir().file(7)); !bytes.Equal(b, open) {
		t.Fatalf("refusals changed the file: %d bytes, want %d", len(b), len(open))
	}
	if err := r.Apply(Shipment{Session: 7, Offset: int64(len(open)), Frames: next}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", ".", "..", "a/b", `a\b`} {
		if _, err := d.Replica(name); err == nil {
			t.Errorf("replica named %q made", name)
		}
	}
	// The replicas are not the directory's own sessions.
	if got, err := d.Load(); err != nil || len(got) != 0 {
		t.Fatalf("the state dir loads %d sessions, %v, with only a replica in it", len(got), err)
	}
}
