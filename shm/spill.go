package shm

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errNoRoom is wrapped by the error of an allocation that spilling cannot
// make room for.
var errNoRoom = errors.New("shared memory full")

// allocLocked returns a writable segment at path of at least size bytes: a
// freed one of at most maxSize bytes, or a fresh one of size bytes once
// reserveLocked made room. what names the allocation in errors.
func (s *Store) allocLocked(path string, size, maxSize int64, what string) (segment, error) {
	best := -1
	for i, f := range s.free {
		if f.size >= size && f.size <= maxSize && (best < 0 || f.size < s.free[best].size) {
			best = i
		}
	}
	if best >= 0 {
		f := s.free[best]
		s.free = slices.Delete(s.free, best, best+1)
		err := os.Rename(f.path, path)
		if err != nil {
			path = f.path
		} else {
			err = protect(f.addr, f.size, unix.PROT_READ|unix.PROT_WRITE)
		}
		if err != nil {
			unmap(f.addr, f.size)
			os.Remove(path)
			s.used -= f.size
			return segment{}, fmt.Errorf("shm: reuse segment: %w", err)
		}
		clear(unsafe.Slice((*byte)(f.addr), f.size))
		return segment{path: path, addr: f.addr, size: f.size}, nil
	}
	if err := s.reserveLocked(size, what); err != nil {
		return segment{}, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return segment{}, fmt.Errorf("shm: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		os.Remove(path)
		return segment{}, fmt.Errorf("shm: %w", err)
	}
	p, err := mapFile(f, nil, size, unix.PROT_READ|unix.PROT_WRITE)
	if err != nil {
		os.Remove(path)
		return segment{}, fmt.Errorf("shm: %w", err)
	}
	s.used += size
	return segment{path: path, addr: p, size: size}, nil
}

// reserveLocked makes room for size more bytes of shared memory: it gives up
// freed segments, then spills chunks in the order ChooseVictims gives.
func (s *Store) reserveLocked(size int64, what string) error {
	if size > s.limit {
		return fmt.Errorf("shm: %s needs %s, limit is %s", what, FormatBytes(size), FormatBytes(s.limit))
	}
	over := s.used + size - s.limit
	if over <= 0 {
		return nil
	}
	slices.SortFunc(s.free, func(a, b segment) int { return int(b.size - a.size) })
	for over > 0 && len(s.free) > 0 {
		f := s.free[0]
		s.free = s.free[1:]
		unmap(f.addr, f.size)
		os.Remove(f.path)
		s.used -= f.size
		over -= f.size
	}
	if over <= 0 {
		return nil
	}
	var cands []Candidate
	for _, c := range s.chunks {
		if c.resident && c.sealed {
			cands = append(cands, Candidate{ID: c.id, Size: c.size, Pinned: c.pins > 0, NextUse: c.nextUse, LastUse: c.lastUse})
		}
	}
	victims, _ := ChooseVictims(cands, over)
	for _, id := range victims {
		c := s.chunks[id]
		if err := s.spillLocked(c); err != nil {
			return err
		}
		over -= c.size
	}
	if over > 0 {
		return fmt.Errorf("shm: %s needs %s, limit is %s, %s held by chunks being written or deleted while read: %w",
			what, FormatBytes(size), FormatBytes(s.limit), FormatBytes(s.used), errNoRoom)
	}
	return nil
}

// Spill moves chunk id, sealed, out of shared memory into its spill file.
// Its views stay valid. Spilling a spilled chunk does nothing.
func (s *Store) Spill(id uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	c, ok := s.chunks[id]
	if !ok {
		return fmt.Errorf("shm: spill chunk %d: %w", id, ErrNotFound)
	}
	if !c.sealed {
		return fmt.Errorf("shm: spill chunk %d: still being written", id)
	}
	if !c.resident {
		return nil
	}
	return s.spillLocked(c)
}

// spillLocked writes c to its spill file unless an earlier spill left one
// (chunks never change once sealed), then maps the file over c's address and
// removes c's segment, whose pages go back to the system once no co-located
// reader maps them.
func (s *Store) spillLocked(c *chunk) error {
	p := s.spillPath(c.id)
	if !c.onDisk {
		if err := writeFile(p, c.bytes()); err != nil {
			os.Remove(p)
			return fmt.Errorf("shm: spill chunk %d: %w", c.id, err)
		}
		c.onDisk = true
		s.spilled += c.n
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("shm: spill chunk %d: %w", c.id, err)
	}
	defer f.Close()
	// The mapping may run past the end of the file, to the segment's
	// size; nothing reads there.
	if _, err := mapFile(f, c.addr, c.size, unix.PROT_READ); err != nil {
		return fmt.Errorf("shm: spill chunk %d: %w", c.id, err)
	}
	os.Remove(s.segPath(c.id))
	c.resident = false
	s.used -= c.size
	return nil
}

func writeFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err1 := f.Close(); err == nil {
		err = err1
	}
	return err
}

// reloadLocked brings spilled chunk c back into a segment mapped at its
// address. The spill file stays, so that spilling c again costs no write.
func (s *Store) reloadLocked(c *chunk) error {
	path := s.segPath(c.id)
	// The new segment must fit c's address range: at most c.size bytes.
	seg, err := s.allocLocked(path, roundPage(c.off+c.n), c.size, fmt.Sprintf("reloading chunk %d", c.id))
	if err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(seg.addr), seg.size), c.bytes())
	// Opened for writing, though mapped read-only, so that the segment can
	// be made writable again when it is freed and reused.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		defer f.Close()
		_, err = mapFile(f, c.addr, seg.size, unix.PROT_READ)
	}
	unmap(seg.addr, seg.size)
	if err != nil {
		os.Remove(path)
		s.used -= seg.size
		return fmt.Errorf("shm: reload chunk %d: %w", c.id, err)
	}
	if seg.size < c.size {
		// The tail mapped the spill file past its data.
		unmap(unsafe.Add(c.addr, seg.size), c.size-seg.size)
		c.size = seg.size
	}
	c.resident = true
	s.reloaded += c.n
	return nil
}
