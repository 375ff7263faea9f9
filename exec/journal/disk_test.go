package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// A faultDisk is a fileSystem over the real one that fills and fails as
// a test says: it counts the bytes its files hold against room, and a
// write past it writes what fits and fails with ENOSPC, as a full disk
// does; the next Sync, Truncate or Rename can be made to fail. Its Sync
// does not reach the disk: durability is not what these tests are about.
type faultDisk struct {
	mu    sync.Mutex
	room  int64            // bytes the files may hold in all; < 0 for no bound
	sizes map[string]int64 // each file's length
	// Errors for the next call of each kind, then nil again.
	syncErr, truncErr, renameErr error
}

func newFaultDisk() *faultDisk { return &faultDisk{room: -1, sizes: map[string]int64{}} }

// openFaultDir opens a state directory on a faultDisk.
func openFaultDir(t *testing.T) (*Dir, *faultDisk) {
	t.Helper()
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fd := newFaultDisk()
	d.fs = fd
	return d, fd
}

// fill leaves n bytes of room on the disk.
func (d *faultDisk) fill(n int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n < 0 {
		d.room = -1
		return
	}
	var used int64
	for _, s := range d.sizes {
		used += s
	}
	d.room = used + n
}

func (d *faultDisk) take(errp *error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := *errp
	*errp = nil
	return err
}

func (d *faultDisk) OpenFile(name string, flag int, perm os.FileMode) (file, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	d.mu.Lock()
	d.sizes[name] = st.Size()
	d.mu.Unlock()
	return &faultFile{f: f, d: d, name: name}, nil
}

func (d *faultDisk) Rename(oldpath, newpath string) error {
	if err := d.take(&d.renameErr); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	d.mu.Lock()
	d.sizes[newpath] = d.sizes[oldpath]
	delete(d.sizes, oldpath)
	d.mu.Unlock()
	return nil
}

func (d *faultDisk) Remove(name string) error {
	if err := os.Remove(name); err != nil {
		return err
	}
	d.mu.Lock()
	delete(d.sizes, name)
	d.mu.Unlock()
	return nil
}

func (d *faultDisk) SyncDir(string) error { return nil }

// A faultFile is a file of a faultDisk. Its name follows a rename of the
// file only through the disk's sizes: the Log renames a file it has open.
type faultFile struct {
	f    *os.File
	d    *faultDisk
	name string
}

func (f *faultFile) Write(p []byte) (int, error) {
	f.d.mu.Lock()
	name := f.name
	if _, ok := f.d.sizes[name]; !ok { // renamed: find it by its new name
		name = f.renamed()
	}
	n, short := len(p), false
	if f.d.room >= 0 {
		var used int64
		for _, s := range f.d.sizes {
			used += s
		}
		if left := f.d.room - used; int64(n) > left {
			n, short = int(max(left, 0)), true
		}
	}
	f.d.mu.Unlock()
	n, err := f.f.Write(p[:n])
	f.d.mu.Lock()
	f.d.sizes[name] += int64(n)
	f.d.mu.Unlock()
	if err == nil && short {
		err = &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
	}
	return n, err
}

// renamed returns the name the file has now: a Log's file is only ever
// renamed from NAME.tmp to NAME. f.d.mu is held.
func (f *faultFile) renamed() string {
	f.name = f.name[:len(f.name)-len(".tmp")]
	return f.name
}

func (f *faultFile) Sync() error {
	if err := f.d.take(&f.d.syncErr); err != nil {
		return &os.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return nil
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.d.take(&f.d.truncErr); err != nil {
		return &os.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	if err := f.f.Truncate(size); err != nil {
		return err
	}
	f.d.mu.Lock()
	if _, ok := f.d.sizes[f.name]; !ok {
		f.renamed()
	}
	f.d.sizes[f.name] = size
	f.d.mu.Unlock()
	return nil
}

func (f *faultFile) Seek(off int64, whence int) (int64, error) { return f.f.Seek(off, whence) }
func (f *faultFile) Close() error                              { return f.f.Close() }

// fileOf reads a session's file.
func fileOf(t *testing.T, d *Dir, session int) []byte {
	t.Helper()
	b, err := os.ReadFile(d.file(session))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadOne loads d, which holds one session, and fails unless it restores.
func loadOne(t *testing.T, d *Dir) *State {
	t.Helper()
	loaded, err := d.Load()
	if err != nil || len(loaded) != 1 || loaded[0].Err != nil {
		t.Fatalf("load: %v %+v", err, loaded)
	}
	return loaded[0].State
}

// TestAppendENOSPCEverywhere fills the disk at every byte of every
// record: the append fails with ENOSPC, the file is byte for byte what it
// was, it restores to the state before the record, nothing was shipped
// to the replica, and once there is room the session goes on to the end
// of its history as if nothing had happened.
func TestAppendENOSPCEverywhere(t *testing.T) {
	rs := history()
	whole, ends := writeHistory(t, rs)
	cases := 0
	for k := 1; k < len(rs); k++ {
		for cut := int64(0); cut < int64(ends[k]-ends[k-1]); cut++ {
			d, disk := openFaultDir(t)
			var shipped int
			d.SetShip(func(Shipment) { shipped++ })
			l, err := d.Create(7, "glenda")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs[1:k] {
				if err := l.Append(r, false); err != nil {
					t.Fatal(err)
				}
			}
			before, ships := fileOf(t, d, 7), shipped
			disk.fill(cut)
			err = l.Append(rs[k], true)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("record %d, %d bytes of room: append returned %v, want ENOSPC", k, cut, err)
			}
			if now := fileOf(t, d, 7); !bytes.Equal(now, before) {
				t.Fatalf("record %d, %d bytes of room: the file is %d bytes, was %d", k, cut, len(now), len(before))
			}
			if shipped != ships {
				t.Fatalf("record %d, %d bytes of room: a refused record was shipped", k, cut)
			}
			if got := loadOne(t, d); !sameFold(got, want(t, rs, k)) {
				t.Fatalf("record %d, %d bytes of room: restored %+v", k, cut, got)
			}
			disk.fill(-1)
			for _, r := range rs[k:] {
				if err := l.Append(r, true); err != nil {
					t.Fatalf("record %d, %d bytes of room: after room was made: %v", k, cut, err)
				}
			}
			l.Close()
			if now := fileOf(t, d, 7); !bytes.Equal(now, whole) {
				t.Fatalf("record %d, %d bytes of room: the whole history is not the file a Log without faults writes", k, cut)
			}
			cases++
		}
	}
	t.Logf("%d appends cut by a full disk, each refused and the file left whole", cases)
}

// sameFold compares states as TestTruncateEverywhere does.
func sameFold(a, b *State) bool { return sameState(a, b) && len(a.versions) == len(b.versions) }

// TestSyncFails: an fsync that fails (EIO) refuses the record; the file
// is written again whole before the next one, and the replica follows.
func TestSyncFails(t *testing.T) {
	rs := history()
	d, disk := openFaultDir(t)
	r := shipTo(t, d)
	l, err := d.Create(7, "glenda")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, rec := range rs[1:5] {
		if err := l.Append(rec, false); err != nil {
			t.Fatal(err)
		}
	}
	disk.syncErr = syscall.EIO
	if err := l.Append(rs[5], true); !errors.Is(err, syscall.EIO) {
		t.Fatalf("append with a failing fsync: %v, want EIO", err)
	}
	if got := loadOne(t, d); !sameState(got, want(t, rs, 5)) {
		t.Fatalf("after the failed fsync the file restores %+v", got)
	}
	// The next append writes the file again (what the failed fsync may
	// have lost of the unsynced records before) and goes on.
	for _, rec := range rs[5:] {
		if err := l.Append(rec, true); err != nil {
			t.Fatal(err)
		}
	}
	if got := loadOne(t, d); !sameState(got, want(t, rs, len(rs))) {
		t.Fatalf("after the rewrite: %+v", got)
	}
	if rep, err := os.ReadFile(r.Dir().file(7)); err != nil || !bytes.Equal(rep, fileOf(t, d, 7)) {
		t.Errorf("replica (%v) differs from the file", err)
	}
}

// TestCutFails: a write that fails and whose bytes cannot be cut off
// again leaves the Log stale: the next record writes the file again
// whole first, so that the torn bytes are gone.
func TestCutFails(t *testing.T) {
	rs := history()
	d, disk := openFaultDir(t)
	l, err := d.Create(7, "glenda")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	disk.fill(20)
	disk.truncErr = syscall.EIO
	if err := l.Append(rs[1], true); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v", err)
	}
	if n := len(fileOf(t, d, 7)); n == int(l.Size()) {
		t.Fatalf("the fault did not leave a torn record (%d bytes)", n)
	}
	disk.fill(-1)
	if err := l.Append(rs[1], true); err != nil {
		t.Fatal(err)
	}
	if got := loadOne(t, d); !sameState(got, want(t, rs, 2)) {
		t.Fatalf("after the rewrite: %+v", got)
	}
}

// TestNoteKeepsState: what Note records stays in the state when its write
// fails, and reaches the file before the next record that is written.
func TestNoteKeepsState(t *testing.T) {
	rs := history()
	d, disk := openFaultDir(t)
	l, err := d.Create(7, "glenda")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, rec := range rs[1:4] { // up to graph 1's kept tensor
		if err := l.Append(rec, true); err != nil {
			t.Fatal(err)
		}
	}
	disk.fill(0)
	if err := l.Note(rs[4], true); !errors.Is(err, syscall.ENOSPC) { // graph 1's end
		t.Fatalf("note on a full disk: %v", err)
	}
	if got := loadOne(t, d); !sameState(got, want(t, rs, 4)) {
		t.Fatalf("the file after the failed note: %+v", got)
	}
	if err := l.Append(rs[5], true); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v", err)
	}
	// Room for the noted record and the next, not for a second copy of
	// the file: the note is appended, not written with the file anew.
	a, _ := Encode(nil, rs[4])
	b, _ := Encode(nil, rs[5])
	disk.fill(int64(len(a) + len(b)))
	if err := l.Append(rs[5], true); err != nil {
		t.Fatal(err)
	}
	if got := loadOne(t, d); !sameState(got, want(t, rs, 6)) {
		t.Fatalf("the note did not reach the file: %+v", got)
	}
}

// TestCompactENOSPCEverywhere fills the disk at every byte of a
// compaction, and makes its rename and its fsync fail: each time the
// session's file is untouched, no temporary file is left, and appends go
// on in it.
func TestCompactENOSPCEverywhere(t *testing.T) {
	rs := history()
	setup := func() (*Dir, *faultDisk, *Log, []byte) {
		d, disk := openFaultDir(t)
		l, err := d.Create(7, "glenda")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs[1 : len(rs)-1] {
			if err := l.Append(r, false); err != nil {
				t.Fatal(err)
			}
		}
		return d, disk, l, fileOf(t, d, 7)
	}
	check := func(what string, d *Dir, l *Log, before []byte) {
		t.Helper()
		if now := fileOf(t, d, 7); !bytes.Equal(now, before) {
			t.Fatalf("%s: the session's file changed", what)
		}
		if _, err := os.Stat(d.file(7) + ".tmp"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the compaction's file is left (%v)", what, err)
		}
		if err := l.Append(rs[len(rs)-1], true); err != nil {
			t.Fatalf("%s: append after the failed compaction: %v", what, err)
		}
		l.Close()
		if got := loadOne(t, d); !sameState(got, want(t, rs, len(rs))) {
			t.Fatalf("%s: restored %+v", what, got)
		}
	}
	var compacted int
	{
		d, _, l, _ := setup()
		l.Compact()
		compacted = int(l.Size())
		l.Close()
		_ = d
	}
	for room := int64(0); room < int64(compacted); room++ {
		d, disk, l, before := setup()
		disk.fill(room)
		if err := l.Compact(); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("compaction with %d bytes of room: %v, want ENOSPC", room, err)
		}
		disk.fill(-1)
		check("ENOSPC", d, l, before)
	}
	for _, fault := range []string{"sync", "rename"} {
		d, disk, l, before := setup()
		if fault == "sync" {
			disk.syncErr = syscall.EIO
		} else {
			disk.renameErr = syscall.EIO
		}
		if err := l.Compact(); !errors.Is(err, syscall.EIO) {
			t.Fatalf("compaction whose %s fails: %v, want EIO", fault, err)
		}
		check(fault, d, l, before)
	}
}

// TestFullDiskSharedBySessions: one session filling the disk changes no
// byte of another's file; the other's compaction and resumption on the
// full disk fail softly (it goes on in its last good file), and both
// restore.
func TestFullDiskSharedBySessions(t *testing.T) {
	rs := history()
	d, disk := openFaultDir(t)
	a, err := d.Create(7, "glenda")
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Create(8, "rob")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append(Record{Kind: KindSubmit, Graph: 1, Spec: "x = ones(4)\n"}, true); err != nil {
		t.Fatal(err)
	}
	bBefore := fileOf(t, d, 8)
	disk.fill(300)
	n := 1
	for ; n < len(rs); n++ {
		if err := a.Append(rs[n], true); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	if n == len(rs) {
		t.Fatal("the disk did not fill")
	}
	if err := b.Compact(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("compaction on the full disk: %v", err)
	}
	if err := b.Append(Record{Kind: KindGraphEnd, Graph: 1, State: "SUCCEEDED"}, true); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on the full disk: %v", err)
	}
	if !bytes.Equal(fileOf(t, d, 8), bBefore) {
		t.Fatal("session 8's file changed")
	}
	if _, err := d.Create(9, "ken"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a new session on the full disk: %v, want ENOSPC", err)
	}
	a.Close()
	b.Close()
	loaded, err := d.Load()
	if err != nil || len(loaded) != 2 {
		t.Fatalf("load: %v %+v", err, loaded)
	}
	if loaded[0].Err != nil || !sameState(loaded[0].State, want(t, rs, n)) {
		t.Errorf("session 7: %+v", loaded[0])
	}
	if loaded[1].Err != nil || len(loaded[1].State.Graphs) != 1 || !loaded[1].State.Graphs[0].Running() {
		t.Errorf("session 8: %+v", loaded[1])
	}
	// Started again on the full disk: resumed in their files as they are.
	for _, l := range loaded {
		log, err := d.Resume(l.State)
		if err != nil {
			t.Fatalf("resume session %d on the full disk: %v", l.Session, err)
		}
		log.Close()
	}
	if ents, _ := os.ReadDir(d.Path()); len(ents) != 2 {
		t.Errorf("the state dir holds %d files, want the 2 sessions'", len(ents))
	}
	if _, err := os.Stat(filepath.Join(d.Path(), "session-9.journal")); err == nil {
		t.Error("the refused session left a file")
	}
}
