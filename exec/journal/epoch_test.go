package journal

import (
	"errors"
	"strings"
	"testing"
)

// TestEpochRecord: a takeover's epoch record goes into the state, survives
// compaction (State.Records) and a restore, and an epoch that does not
// rise is refused, the file left as it was.
func TestEpochRecord(t *testing.T) {
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := &State{}
	for _, r := range history() {
		if err := st.Apply(r); err != nil {
			t.Fatal(err)
		}
	}
	st.Epoch, st.Home = 1, "scheduler-2" // what a takeover sets before Resume
	l, err := d.Resume(st)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if e, h := l.Epoch(); e != 1 || h != "scheduler-2" {
		t.Fatalf("after Resume: epoch %d at %q", e, h)
	}
	if err := l.Append(Record{Kind: KindEpoch, Epoch: 1, Home: "scheduler-3"}, true); err == nil || !strings.Contains(err.Error(), "after epoch 1") {
		t.Fatalf("an epoch that does not rise: %v", err)
	}
	if err := l.Append(Record{Kind: KindEpoch, Epoch: 2, Home: "scheduler-3"}, true); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	loaded, err := d.Load()
	if err != nil || len(loaded) != 1 || loaded[0].State == nil {
		t.Fatalf("load: %v %+v", err, loaded)
	}
	if got := loaded[0].State; got.Epoch != 2 || got.Home != "scheduler-3" || len(got.Graphs) != 3 {
		t.Errorf("restored: epoch %d at %q, %d graphs", got.Epoch, got.Home, len(got.Graphs))
	}
}

// TestConfirmRefused: a synced write the successor does not confirm
// (SetConfirm) is refused, and the file is written again without it
// before the next record, which a restart then finds in its place.
func TestConfirmRefused(t *testing.T) {
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	refuse := errors.New("its successor has not confirmed holding it")
	var no bool
	var confirmed []int64
	d.SetConfirm(func(session int, end int64) error {
		if no {
			return refuse
		}
		confirmed = append(confirmed, end)
		return nil
	})
	l, err := d.Create(7, "glenda")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rs := history()
	if err := l.Append(rs[1], true); err != nil {
		t.Fatal(err)
	}
	no = true
	if err := l.Append(rs[2], true); !errors.Is(err, refuse) {
		t.Fatalf("an unconfirmed write: %v", err)
	}
	no = false
	if err := l.Append(rs[7], true); err != nil {
		t.Fatal(err)
	}
	loaded, err := d.Load()
	if err != nil || len(loaded) != 1 || loaded[0].State == nil {
		t.Fatalf("load: %v %+v", err, loaded)
	}
	if g := loaded[0].State.Graphs; len(g) != 0 {
		t.Errorf("the refused submit is in the file: %+v", g)
	}
	if len(confirmed) != 2 || confirmed[1] != l.Size() {
		t.Errorf("confirmed ends %v, the file has %d bytes", confirmed, l.Size())
	}
}
