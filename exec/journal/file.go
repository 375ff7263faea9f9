package journal

import (
	"errors"
	"fmt"
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
	ship func(Shipment) // SetShip; nil for none
}

// OpenDir makes (if need be) and opens the state directory at path.
func OpenDir(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Dir{path: path}, nil
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
}

// Load reads back every session file of the directory, in order of
// session number. A file that cannot be read, is damaged or does not
// make a history is returned with Err set and no State: the caller
// reports the session lost. Temporary files of a compaction cut short
// are removed.
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

// Remove deletes a session's file: the session is no more.
func (d *Dir) Remove(session int) error {
	err := os.Remove(d.file(session))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if err == nil {
		d.shipped(Shipment{Session: session, Remove: true})
	}
	return err
}

// A Log is the open file of one session, appended to as things happen.
// Its methods are safe for concurrent use.
type Log struct {
	dir     *Dir
	session int

	mu    sync.Mutex
	f     *os.File
	size  int64
	state State // what the file holds, folded: what Compact writes
	buf   []byte
	err   error // the first write that failed: every later one fails too
}

// Create starts the file of a new session, replacing any of that number.
func (d *Dir) Create(session int, owner string) (*Log, error) {
	l := &Log{dir: d, session: session}
	if err := l.rewrite([]Record{{Kind: KindSession, Session: session, Owner: owner}}); err != nil {
		return nil, err
	}
	return l, nil
}

// Resume reopens the file of a session restored from it (Load), to append
// to: its state is s. The file is compacted first, so that it starts
// clean.
func (d *Dir) Resume(s *State) (*Log, error) {
	l := &Log{dir: d, session: s.Session}
	if err := l.rewrite(s.Records()); err != nil {
		return nil, err
	}
	return l, nil
}

// Append writes record r at the end of the file; with sync, it is on disk
// when Append returns. A record that does not fit the session's history
// (State.Apply) is refused and nothing is written: that is a bug of the
// caller's, and the file stays a history.
func (l *Log) Append(r Record, sync bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	var err error
	l.buf, err = Encode(l.buf[:0], r)
	if err != nil {
		return err
	}
	if err := l.state.Apply(r); err != nil {
		return fmt.Errorf("journal: session %d: %w", l.session, err)
	}
	if _, err := l.f.Write(l.buf); err != nil {
		l.err = fmt.Errorf("journal: session %d: %w", l.session, err)
		return l.err
	}
	l.dir.shipped(Shipment{Session: l.session, Offset: l.size, Frames: append([]byte(nil), l.buf...)})
	l.size += int64(len(l.buf))
	if sync {
		if err := l.f.Sync(); err != nil {
			l.err = fmt.Errorf("journal: session %d: %w", l.session, err)
			return l.err
		}
	}
	return nil
}

// Size is the file's length in bytes.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
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

// Compact writes the file again from the session's state, shorter: by a
// temporary file renamed over it, so that a crash leaves one or the other.
func (l *Log) Compact() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	return l.rewrite(l.state.Records())
}

// rewrite makes the file hold exactly records rs, synced, and keeps it open
// to append. l.mu is held (or l is not yet shared).
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
	path := l.dir.file(l.session)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err = f.Write(buf); err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(l.dir.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal: session %d: %w", l.session, err)
	}
	if l.f != nil {
		l.f.Close()
	}
	// The descriptor now names the renamed file; writes go on at its end.
	if _, err := f.Seek(0, 2); err != nil {
		f.Close()
		return fmt.Errorf("journal: %w", err)
	}
	l.f, l.size, l.state = f, int64(len(buf)), st
	l.dir.shipped(Shipment{Session: l.session, Reset: true, Frames: buf})
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
	if l.err == nil {
		l.err = errors.New("journal: closed")
	}
	return err
}

func syncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
