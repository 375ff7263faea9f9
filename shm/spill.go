package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errNoRoom is wrapped by the error of an allocation that spilling cannot
// make room for.
var errNoRoom = errors.New("shared memory full")

// errGone reports a chunk deleted while the store worked on it unlocked.
var errGone = errors.New("chunk deleted meanwhile")

// tempPath returns a new name in dir for a segment not yet given to a chunk.
func (s *Store) tempPath(kind string) string {
	s.seq++
	return filepath.Join(s.dir, kind+"-"+strconv.FormatUint(s.seq, 10))
}

// allocLocked returns a writable segment of at least size bytes under a
// temporary name: a freed one of at most maxSize bytes, or a fresh one of
// size bytes once reserveLocked made room. what names the allocation in
// errors. A reused segment is cleared when zero is set; a fresh one is
// always zero. s.mu may be released meanwhile (see reserveLocked).
func (s *Store) allocLocked(size, maxSize int64, what string, zero bool) (segment, error) {
	best := -1
	for i, f := range s.free {
		if f.size >= size && f.size <= maxSize && (best < 0 || f.size < s.free[best].size) {
			best = i
		}
	}
	if best >= 0 {
		f := s.free[best]
		s.free = slices.Delete(s.free, best, best+1)
		if zero {
			clear(unsafe.Slice((*byte)(f.rw), f.size))
		} else {
			clear(unsafe.Slice((*byte)(f.rw), min(f.size, pageSize))) // the header's page
		}
		return f, nil
	}
	if err := s.reserveLocked(size, what); err != nil {
		return segment{}, err
	}
	path := s.tempPath("new")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return segment{}, fmt.Errorf("shm: %w", err)
	}
	defer f.Close()
	for retried := false; ; retried = true {
		err = backFile(f, size)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.ENOSPC) || retried {
			os.Remove(path)
			if errors.Is(err, unix.ENOSPC) {
				return segment{}, fmt.Errorf("shm: %s needs %s, and %s is full: %w", what, FormatBytes(size), s.dir, errNoRoom)
			}
			return segment{}, fmt.Errorf("shm: %w", err)
		}
		// The file system is full before the store's limit (a small
		// tmpfs, or others' files in it): the limit is what fits, and
		// spilling makes room for size under it.
		s.fitLimitLocked()
		s.limit = min(s.limit, s.used)
		if err := s.reserveLocked(size, what); err != nil {
			os.Remove(path)
			return segment{}, err
		}
	}
	rw, err := mapFilePopulated(f, size, unix.PROT_READ|unix.PROT_WRITE)
	if err != nil {
		os.Remove(path)
		return segment{}, fmt.Errorf("shm: %w", err)
	}
	ro, err := mapFile(f, nil, size, unix.PROT_READ)
	if err != nil {
		unmap(rw, size)
		os.Remove(path)
		return segment{}, fmt.Errorf("shm: %w", err)
	}
	s.used += size
	return segment{path: path, addr: ro, rw: rw, size: size}, nil
}

// backFile gives f size bytes of storage now, so that writing through a
// mapping of it can never fault for want of space (SIGBUS on a full
// tmpfs): it fails with ENOSPC instead. A file system without fallocate
// gets a sparse file.
func backFile(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(size)
	}
	return err
}

// dropSegmentLocked unmaps and removes a segment no chunk uses.
func (s *Store) dropSegmentLocked(f segment) {
	unmapSegment(f.addr, f.rw, f.size)
	os.Remove(f.path)
	s.used -= f.size
}

// reserveLocked makes room for size more bytes of shared memory: it gives up
// freed segments, then spills chunks, one at a time in the order
// ChooseVictims gives, until size fits. s.mu is released while a spill
// writes its file, so the state is looked at afresh after each.
func (s *Store) reserveLocked(size int64, what string) error {
	if s.used+size > s.limit && s.limit < s.maxLimit {
		s.fitLimitLocked() // the file system may have room again
	}
	if size > s.limit {
		return fmt.Errorf("shm: %s needs %s, limit is %s: %w", what, FormatBytes(size), FormatBytes(s.limit), errNoRoom)
	}
	for s.used+size > s.limit {
		if s.closed {
			return ErrClosed
		}
		if len(s.free) > 0 {
			slices.SortFunc(s.free, func(a, b segment) int { return int(b.size - a.size) })
			f := s.free[0]
			s.free = s.free[1:]
			s.dropSegmentLocked(f)
			continue
		}
		var cands []Candidate
		for _, c := range s.chunks {
			if c.resident && c.sealed && !c.busy {
				cands = append(cands, Candidate{ID: c.id, Size: c.size, Pinned: c.pins > 0, NextUse: c.nextUse, LastUse: c.lastUse})
			}
		}
		victims, _ := ChooseVictims(cands, s.used+size-s.limit)
		if len(victims) == 0 {
			if s.busy > 0 {
				// Spills under way elsewhere will free memory.
				s.cond.Wait()
				continue
			}
			return fmt.Errorf("shm: %s needs %s, limit is %s, %s held by chunks being written or deleted while read: %w",
				what, FormatBytes(size), FormatBytes(s.limit), FormatBytes(s.used), errNoRoom)
		}
		if err := s.spillLocked(s.chunks[victims[0]]); err != nil && !errors.Is(err, errGone) {
			return err
		}
	}
	if s.closed {
		return ErrClosed
	}
	return nil
}

// Spill moves chunk id, sealed, out of shared memory into its spill file.
// Its views stay valid. Spilling a spilled chunk does nothing.
func (s *Store) Spill(id uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed {
			return ErrClosed
		}
		c, ok := s.chunks[id]
		if !ok {
			return fmt.Errorf("shm: spill chunk %d: %w", id, ErrNotFound)
		}
		switch {
		case !c.sealed:
			return fmt.Errorf("shm: spill chunk %d: still being written", id)
		case c.busy:
			s.cond.Wait()
		case !c.resident:
			return nil
		default:
			err := s.spillLocked(c)
			if errors.Is(err, errGone) {
				err = fmt.Errorf("shm: spill chunk %d: %w", id, ErrNotFound)
			}
			return err
		}
	}
}

// beginLocked marks c busy: pinned, so that it stays mapped, and out of the
// reach of other spills and reloads while s.mu is released.
func (s *Store) beginLocked(c *chunk) {
	c.busy = true
	c.pins++
	s.busy++
}

// endLocked ends what beginLocked began, with s.mu held again, and reports
// whether c is still the store's: neither deleted nor the store closed
// meanwhile. When it is not, c's pin has been given up.
func (s *Store) endLocked(c *chunk) bool {
	c.busy = false
	s.busy--
	s.cond.Broadcast()
	if c.deleted || s.closed {
		s.unpinLocked(c)
		return false
	}
	c.pins--
	return true
}

// unpinLocked drops a pin of c, disposing of it at the last pin of a
// deleted chunk.
func (s *Store) unpinLocked(c *chunk) {
	c.pins--
	if c.pins == 0 {
		s.wakeLocked()
	}
	if c.pins == 0 && c.deleted && !s.closed {
		delete(s.zombies, c)
		s.finishLocked(c)
		return
	}
	if c.pins == 0 && !c.resident && !c.busy && !s.closed {
		// The spill file's pages read through the mapping count in the
		// process's resident set until unmapped: drop them from the
		// mapping (they stay in the page cache for the next reader).
		unix.Madvise(unsafe.Slice((*byte)(c.addr), c.size), unix.MADV_DONTNEED)
	}
}

// spillLocked writes resident chunk c to a spill file unless an earlier
// spill left one (chunks never change once sealed), with s.mu released
// during the write; then it maps the file over c's address and removes c's
// segment, whose pages go back to the system once no co-located reader maps
// them.
func (s *Store) spillLocked(c *chunk) error {
	if c.spill == "" {
		s.seq++
		p := filepath.Join(s.spillDir, strconv.FormatUint(c.id, 10)+"-"+strconv.FormatUint(s.seq, 10))
		s.beginLocked(c)
		s.mu.Unlock()
		err := writeFile(p, c.bytes())
		s.mu.Lock()
		if !s.endLocked(c) {
			os.Remove(p)
			if s.closed {
				return ErrClosed
			}
			return errGone
		}
		if err != nil {
			os.Remove(p)
			return fmt.Errorf("shm: spill chunk %d: %w", c.id, err)
		}
		c.spill = p
		s.spilled.Add(c.n)
	}
	f, err := os.Open(c.spill)
	if err != nil {
		return fmt.Errorf("shm: spill chunk %d: %w", c.id, err)
	}
	defer f.Close()
	// The mapping may run past the end of the file, to the segment's
	// size; nothing reads there.
	if _, err := mapFile(f, c.addr, c.size, unix.PROT_READ); err != nil {
		return fmt.Errorf("shm: spill chunk %d: %w", c.id, err)
	}
	// The segment's pages go with its last mapping and its name.
	unmap(c.rw, c.size)
	c.rw = nil
	os.Remove(s.segPath(c.id))
	c.resident = false
	s.used -= c.size
	return nil
}

func writeFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err1 := f.Close(); err == nil {
		err = err1
	}
	return err
}

// reloadLocked brings spilled chunk c back into a segment, copied with s.mu
// released, then mapped at c's address. The spill file stays, so that
// spilling c again costs no write.
func (s *Store) reloadLocked(c *chunk) error {
	// The new segment must fit c's address range: at most c.size bytes.
	seg, err := s.allocLocked(roundPage(c.off+c.n), c.size, fmt.Sprintf("reloading chunk %d", c.id), false)
	if err != nil {
		return err
	}
	if c.busy || c.deleted || s.closed || c.resident {
		// Others acted while allocLocked spilled.
		s.dropSegmentLocked(seg)
		return errGone
	}
	s.beginLocked(c)
	s.mu.Unlock()
	copy(unsafe.Slice((*byte)(seg.rw), seg.size), c.bytes())
	s.mu.Lock()
	if !s.endLocked(c) {
		s.dropSegmentLocked(seg)
		return errGone
	}
	path := s.segPath(c.id)
	err = os.Rename(seg.path, path)
	var f *os.File
	if err == nil {
		seg.path = path
		f, err = os.Open(path) // seg.rw stays its writable mapping

	}
	if err == nil {
		_, err = mapFile(f, c.addr, seg.size, unix.PROT_READ)
		f.Close()
	}
	if err != nil {
		s.dropSegmentLocked(seg)
		return fmt.Errorf("shm: reload chunk %d: %w", c.id, err)
	}
	unmap(seg.addr, seg.size) // c.addr maps it read-only now
	c.rw = seg.rw
	if seg.size < c.size {
		// The tail mapped the spill file past its data.
		unmap(unsafe.Add(c.addr, seg.size), c.size-seg.size)
		c.size = seg.size
	}
	c.resident = true
	s.reloaded += c.n
	return nil
}
