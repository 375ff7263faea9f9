package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// Every store keeps its segments in a directory of its own under Dir, and its
// spill files in one under SpillDir, both named
//
//	marsfs-<worker>-<pid>-<start>-<seq>
//
// where pid and start (the process's start time in clock ticks since boot,
// from /proc/<pid>/stat) identify the owning process even after its pid is
// reused, and seq tells apart the stores one process opens. The owner also
// holds an flock(2) on each directory while it lives; the kernel drops it
// when the process dies however it dies. A directory is stale when its owner
// is gone by both signs: CleanStale removes it. The lock covers what the pid
// cannot see (an owner in another pid namespace sharing /dev/shm), and the
// pid covers the moment between a directory's creation and its locking.
const prefix = "marsfs-"

var storeSeq atomic.Uint64

// ownerName returns a new store directory name for worker.
func ownerName(worker string) (string, error) {
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%s-%d-%d-%d", prefix, sanitize(worker), pid, start, storeSeq.Add(1)), nil
}

// sanitize keeps a worker name usable in a file name.
func sanitize(name string) string {
	if name == "" {
		return "worker"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

// parseOwner extracts the owning process from a store directory name.
func parseOwner(name string) (pid int, start uint64, ok bool) {
	if !strings.HasPrefix(name, prefix) {
		return 0, 0, false
	}
	f := strings.Split(name[len(prefix):], "-")
	if len(f) < 4 {
		return 0, 0, false
	}
	n := len(f)
	if _, err := strconv.ParseUint(f[n-1], 10, 64); err != nil {
		return 0, 0, false
	}
	start, err := strconv.ParseUint(f[n-2], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	pid, err = strconv.Atoi(f[n-3])
	if err != nil || pid <= 0 {
		return 0, 0, false
	}
	return pid, start, true
}

// startTime returns the start time of process pid in clock ticks since boot
// (field 22 of /proc/<pid>/stat).
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is parenthesized and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// alive reports whether the process that started at start with pid still
// runs.
func alive(pid int, start uint64) bool {
	st, err := startTime(pid)
	if err == nil {
		return st == start
	}
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	// /proc unreadable: fall back on signal 0, which cannot see pid reuse.
	return syscall.Kill(pid, 0) != syscall.ESRCH
}

// makeOwnedDir creates dir and locks it for this process.
func makeOwnedDir(dir string) (*os.File, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.Open(dir)
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return f, nil
}

// lockedByOther reports whether another open of dir holds its lock: a live
// owner.
func lockedByOther(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close() // drops the lock taken below
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == syscall.EWOULDBLOCK
}

// CleanStale removes the segment and spill directories, under dir and
// spillDir, of stores whose process has ended: what a crashed or killed
// worker left behind. It returns the number of directories removed; those
// of live processes, and anything not named by a store, are left alone.
// Either directory may be empty, and missing ones are skipped.
func CleanStale(dir, spillDir string) (int, error) {
	removed := 0
	var errs []error
	for _, d := range []string{dir, spillDir} {
		if d == "" {
			continue
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range ents {
			pid, start, ok := parseOwner(e.Name())
			if !ok || !e.IsDir() || alive(pid, start) || lockedByOther(filepath.Join(d, e.Name())) {
				continue
			}
			if err := os.RemoveAll(filepath.Join(d, e.Name())); err != nil {
				errs = append(errs, err)
				continue
			}
			removed++
		}
	}
	return removed, errors.Join(errs...)
}
