package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// This file holds the journal's replica: where several schedulers run,
// each ships the writes of its session files to the next scheduler of
// the ring, which keeps them under its own state directory as the files
// of the dead one's sessions, to restore them should it die (docs/marsfs.4.md,
// "Schedulers"). Shipping is a byte copy of what the Log wrote, so the
// replica has the very framing and checksums of the original, and Load
// reads it back as it reads a state directory.

// A Shipment is one write of a session's file, as its replica applies it:
// Frames appended at Offset (the file's length before them), or, with
// Reset, the file's whole content written anew (Create, Resume, Compact
// rewrite it), or, with Remove, the session's end.
type Shipment struct {
	Session int
	Offset  int64
	Reset   bool
	Remove  bool
	Frames  []byte
}

// ErrGap is a Shipment appended at an offset that is not the end of the
// replica's file: a write was missed (the replica came late, or a
// shipment was lost), and only a Reset of the session mends it.
var ErrGap = errors.New("journal: replica: gap")

// SetShip makes every Log of d call ship with each write of its file,
// in the order of the writes, with the Log's lock held: ship must not
// block (it queues: the network is not the journal's business). Each
// Shipment's Frames are its own, to keep. Set it before any Log of d is
// made; nil ships nothing.
func (d *Dir) SetShip(ship func(Shipment)) { d.ship = ship }

// shipped hands s to the Dir's shipper, if any.
func (d *Dir) shipped(s Shipment) {
	if d.ship != nil {
		d.ship(s)
	}
}

// A Replica is the directory of another scheduler's session files, kept
// under this one's state directory: DIR/replica/NAME. Its methods are
// safe for concurrent use.
type Replica struct {
	dir *Dir
	mu  sync.Mutex
}

// Replica makes (if need be) and opens the replica of the scheduler named
// name under d.
func (d *Dir) Replica(name string) (*Replica, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("journal: replica: bad scheduler name %q", name)
	}
	rd, err := OpenDir(filepath.Join(d.path, "replica", name))
	if err != nil {
		return nil, err
	}
	return &Replica{dir: rd}, nil
}

// Dir is the replica's directory: Load reads its sessions back.
func (r *Replica) Dir() *Dir { return r.dir }

// Apply writes shipment s in the replica. Frames that do not decode whole
// (a torn or damaged record) are refused and nothing is written, so the
// file stays what Load reads as a history up to its last record. The
// replica's writes are not synced: it guards against the other
// scheduler's death, not this host's, and the kernel keeps what a dead
// process wrote.
func (r *Replica) Apply(s Shipment) error {
	if s.Session <= 0 {
		return fmt.Errorf("journal: replica: session %d", s.Session)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	path := r.dir.file(s.Session)
	if s.Remove {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("journal: replica: %w", err)
		}
		return nil
	}
	rs, err := Decode(s.Frames)
	if err != nil {
		return fmt.Errorf("journal: replica: session %d: %w", s.Session, err)
	}
	if s.Reset {
		if len(rs) == 0 || rs[0].Kind != KindSession || rs[0].Session != s.Session {
			return fmt.Errorf("journal: replica: session %d: a reset that does not open the session", s.Session)
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, s.Frames, 0o600); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("journal: replica: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("journal: replica: %w", err)
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: session %d has no file", ErrGap, s.Session)
	}
	if err != nil {
		return fmt.Errorf("journal: replica: %w", err)
	}
	defer f.Close()
	end, err := f.Seek(0, 2)
	if err != nil {
		return fmt.Errorf("journal: replica: %w", err)
	}
	if end != s.Offset {
		return fmt.Errorf("%w: session %d: at byte %d, the file has %d", ErrGap, s.Session, s.Offset, end)
	}
	if _, err := f.Write(s.Frames); err != nil {
		// A short write leaves a torn tail: cut it, so the next shipment
		// finds the gap rather than a damaged record.
		f.Truncate(end)
		return fmt.Errorf("journal: replica: %w", err)
	}
	return nil
}
