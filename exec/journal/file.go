package journal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A Dir is a scheduler's state directory: one file per session, named
// session-N.journal.
type Dir struct {
	path string
	fs   fileSystem     // the disk, or the tests' faulty one
	ship func(Shipment) // SetShip; nil for none
	// confirm, if not nil, waits until a synced write of a session, its
	// file now end bytes long, is held where the session must survive
	// its scheduler (SetConfirm).
	confirm func(session int, end int64) error
}

// SetConfirm makes every synced write of a Log of d wait, before it is
// acknowledged, for confirm to say that the file up to its end is held
// elsewhere as well (its replica on the ring successor: cmd/marsfs's
// synchronous shipping). An error fails the write as a failed fsync does:
// the file is written again whole, without it, before the next record.
// Set it before any Log of d is made.
func (d *Dir) SetConfirm(confirm func(session int, end int64) error) { d.confirm = confirm }

// OpenDir makes (if need be) and opens the state directory at path.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Dir{path: path, fs: osFS{}}, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

func (d *Dir) file(session int) string {
	return filepath.Join(d.path, "session-"+strconv.Itoa(session)+".journal")
}

// A Loaded is one session file read back: its state, or why it is lost.
type Loaded struct {
	Session int    // from the file's name
	File    string // its path
	State   *State // nil when lost
	Err     error  // why it is lost
	// Cut is, for a file that ended in a torn record (see Torn), where
	// the record began: the file was cut there, and State is what the
	// records before it tell.
	Cut int64
}

// Load reads back every session file of the directory, in order of
// session number. A file that cannot be read, is damaged or does not
// make a history is returned with Err set and no State: the caller
// reports the session lost. A file that ends in a torn record (Torn)
// is cut before it, and restores to what the records before it tell: a
// record is acknowledged only once it is whole on disk, so the torn one
// never was. Temporary files of a compaction cut short are removed.
func (d *Dir) Load() ([]Loaded, error) {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var out []Loaded
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			os.Remove(filepath.Join(d.path, name)) // a compaction that did not finish
			continue
		}
		num, ok := strings.CutPrefix(name, "session-")
		num, ok2 := strings.CutSuffix(num, ".journal")
		n, err := strconv.Atoi(num)
		if !ok || !ok2 || err != nil || n <= 0 {
			continue
		}
		l := Loaded{Session: n, File: filepath.Join(d.path, name)}
		data, err := os.ReadFile(l.File)
		if err == nil {
			l.State, err = Restore(data)
			if off, torn := Torn(data, err); torn && off > 0 {
				if l.State, err = Restore(data[:off]); err == nil {
					if err = os.Truncate(l.File, off); err != nil {
						l.State = nil
					}
					l.Cut = off
				}
			}
		}
		if err == nil && l.State.Session != n {
			l.State, err = nil, fmt.Errorf("file of session %d opens session %d", n, l.State.Session)
		}
		l.Err = err
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b Loaded) int { return a.Session - b.Session })
	return out, nil
}

// Remove deletes a session's file, durably (the directory is synced):
// the session is no more. An error says the file may still be there, and
// the session with it at the next start.
func (d *Dir) Remove(session int) error {
	err := d.fs.Remove(d.file(session))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err == nil {
		err = d.fs.SyncDir(d.path)
	}
	if err != nil {
		return fmt.Errorf("journal: session %d: remove: %w", session, err)
	}
	d.shipped(Shipment{Session: session, Remove: true})
	return nil
}

// ErrClosed is a write to a Log that was closed.
var ErrClosed = errors.New("journal: closed")

// A Log is the open file of one session, appended to as things happen.
// Its methods are safe for concurrent use.
//
// A write that fails (the disk is full, or fails) is cut off the file
// again, so that the file stays the history it was; where that cannot be
// known (a failed fsync may have lost earlier unsynced writes too, a cut
// may itself fail) the file is marked stale, and before the next record
// it is written again whole from the state, beside the last good file and
// renamed over it, as Compact does. A session's file therefore never
// holds a record that was refused, and the session goes on once there is
// room again.
type Log struct {
	dir     *Dir
	session int

	mu sync.Mutex
	f  file // nil once closed
	// size is the length of the whole records in the file: where the
	// next one goes.
	size int64
	// state is what the file holds, folded, and what Note noted that a
	// failed write did not put there: what the next rewrite writes.
	state State
	stale bool // the file's bytes are in doubt: write it again whole
	// pending are the records Note folded whose write failed and was cut
	// off cleanly: written before the next record.
	pending []Record
	buf     []byte
}

// Create starts the file of a new session, replacing any of that number.
// It fails (a full disk) with nothing left behind.
func (d *Dir) Create(session int, owner string) (*Log, error) {
	l := &Log{dir: d, session: session}
	if err := l.rewrite([]Record{{Kind: KindSession, Session: session, Owner: owner}}); err != nil {
		if l.f != nil { // renamed, but the directory would not sync
			l.Close()
			d.fs.Remove(d.file(session))
		}
		return nil, err
	}
	return l, nil
}

// Resume reopens the file of a session restored from it (Load), to append
// to: its state is s. The file is compacted first, so that it starts
// clean; if that fails (the disk is full: compaction needs room for a
// second copy), the file Load read is appended to as it is.
func (d *Dir) Resume(s *State) (*Log, error) {
	l := &Log{dir: d, session: s.Session}
	err := l.rewrite(s.Records())
	if err == nil || l.f != nil { // l.f: renamed, stale until written again
		return l, nil
	}
	f, err2 := d.fs.OpenFile(d.file(s.Session), os.O_WRONLY|os.O_APPEND, 0)
	if err2 != nil {
		return nil, errors.Join(err, fmt.Errorf("journal: session %d: %w", s.Session, err2))
	}
	size, err2 := f.Seek(0, io.SeekEnd)
	if err2 != nil {
		f.Close()
		return nil, errors.Join(err, fmt.Errorf("journal: session %d: %w", s.Session, err2))
	}
	for _, r := range s.Records() {
		l.state.Apply(r) // cannot fail: Records makes a history
	}
	l.f, l.size = f, size
	return l, nil
}

// Append writes record r at the end of the file; with sync, it is on disk
// when Append returns. The record is part of the session's state only if
// Append returns nil. A record that does not fit the session's history
// (State.Apply) is refused and nothing is written: that is a bug of the
// caller's, and the file stays a history. A write or sync that fails
// (ENOSPC, EIO) returns the error, which wraps the system's, and leaves
// the file without the record (see Log).
func (l *Log) Append(r Record, sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.state.Check(r); err != nil {
		return fmt.Errorf("journal: session %d: %w", l.session, err)
	}
	if err := l.repair(); err != nil {
		return err
	}
	if err := l.write(r, sync); err != nil {
		return err
	}
	l.state.fold(r)
	return nil
}

// Note records r, something that has happened already and that no
// client waits on (a graph's end, the tensors it kept, chunks moved):
// unlike Append, r becomes part of the state even when its write fails,
// and is written before the next record (or with the file written again
// whole, if its bytes are in doubt). The error says the write failed:
// until a later one succeeds, a restart finds the session as it was
// before r.
func (l *Log) Note(r Record, sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.state.Check(r); err != nil {
		return fmt.Errorf("journal: session %d: %w", l.session, err)
	}
	err := l.repair()
	if err == nil {
		err = l.write(r, sync)
	}
	l.state.fold(r)
	if err != nil && !l.stale {
		l.pending = append(l.pending, r)
	}
	return err
}

// write appends r, framed, to the file, and ships it once it is written
// (and synced, with sync). On failure the bytes written are cut off, and
// the file is marked stale when that, or what is on disk, is in doubt.
// l.mu is held.
func (l *Log) write(r Record, sync bool) error {
	var err error
	if l.buf, err = Encode(l.buf[:0], r); err != nil {
		return err
	}
	_, err = l.f.Write(l.buf)
	if err == nil && sync {
		if err = l.f.Sync(); err != nil {
			// After a failed fsync the kernel may have dropped the
			// pages of earlier unsynced writes too: only a rewrite
			// knows what the file holds.
			l.stale = true
		}
	}
	if err != nil {
		if terr := l.f.Truncate(l.size); terr != nil {
			l.stale = true
		}
		return fmt.Errorf("journal: session %d: %v record: %w", l.session, r.Kind, err)
	}
	l.size += int64(len(l.buf))
	l.dir.shipped(Shipment{Session: l.session, Offset: l.size - int64(len(l.buf)), Frames: append([]byte(nil), l.buf...)})
	if sync && l.dir.confirm != nil {
		if err := l.dir.confirm(l.session, l.size); err != nil {
			// On disk here but not held elsewhere: not acknowledged,
			// and the file is written again without it.
			l.stale = true
			return fmt.Errorf("journal: session %d: %v record: %w", l.session, r.Kind, err)
		}
	}
	return nil
}

// repair brings the file up to the state: written again whole if it is
// stale, else with the records noted that it lacks. l.mu is held.
func (l *Log) repair() error {
	if l.f == nil {
		return ErrClosed
	}
	if l.stale {
		return l.rewrite(l.state.Records())
	}
	for len(l.pending) > 0 {
		if err := l.write(l.pending[0], false); err != nil {
			if l.stale {
				return l.rewrite(l.state.Records())
			}
			return err
		}
		l.pending = l.pending[1:]
	}
	l.pending = nil
	return nil
}

// Remove deletes the session's file, durably, and closes the Log: the
// session is no more. On failure the Log stays open, and a file the
// removal may have left or not is written again whole before the next
// record.
func (l *Log) Remove() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	path := l.dir.file(l.session)
	err := l.dir.fs.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err == nil {
		l.stale = true // gone from the directory, whatever follows
		err = l.dir.fs.SyncDir(l.dir.path)
	}
	if err != nil {
		return fmt.Errorf("journal: session %d: remove: %w", l.session, err)
	}
	l.dir.shipped(Shipment{Session: l.session, Remove: true})
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	return nil
}

// Size is the file's length in bytes.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}

// Epoch is the session's epoch and the scheduler holding it, as the
// file tells them (0 and "" before any takeover).
func (l *Log) Epoch() (uint64, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state.Epoch, l.state.Home
}

// State returns a copy of the session's state as the file tells it.
func (l *Log) State() *State {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &State{}
	for _, r := range l.state.Records() {
		s.Apply(r) // cannot fail: Records makes a history
	}
	return s
}

// Compact writes the file again from the session's state, shorter: beside
// the last good file, synced, and renamed over it, so that a crash leaves
// one or the other. A compaction that fails (no room for the second copy)
// leaves the last good file as the session's, appended to as before.
func (l *Log) Compact() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	return l.rewrite(l.state.Records())
}

// rewrite makes the file hold exactly records rs, synced, and keeps it open
// to append. Until the rename, the last good file is untouched; a failure
// before it removes the new file and changes nothing. l.mu is held (or l
// is not yet shared).
func (l *Log) rewrite(rs []Record) error {
	var st State
	var buf []byte
	for _, r := range rs {
		if err := st.Apply(r); err != nil {
			return fmt.Errorf("journal: session %d: %w", l.session, err)
		}
		var err error
		if buf, err = Encode(buf, r); err != nil {
			return err
		}
	}
	fsys := l.dir.fs
	path := l.dir.file(l.session)
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("journal: session %d: %w", l.session, err)
	}
	if _, err = f.Write(buf); err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		f.Close()
		fsys.Remove(tmp)
		return fmt.Errorf("journal: session %d: rewrite: %w", l.session, err)
	}
	// Writes go on at the renamed file's end, through a descriptor opened
	// by its name, which its errors then say (the one written names the
	// temporary file).
	if nf, err := fsys.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		f.Close()
		f = nf
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.size, l.state, l.stale, l.pending = f, int64(len(buf)), st, false, nil
	l.dir.shipped(Shipment{Session: l.session, Reset: true, Frames: buf})
	if err := fsys.SyncDir(l.dir.path); err != nil {
		// The rename may not survive a crash: the old file might come
		// back. Write the file again at the next record.
		l.stale = true
		return fmt.Errorf("journal: session %d: rewrite: %w", l.session, err)
	}
	return nil
}

// Close closes the file; the session stays in the directory.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
