package shm

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// HostMemory is the memory the processes of this one's memory cgroup may
// use: the machine's RAM, or less where a cgroup (v1's
// memory.limit_in_bytes, v2's memory.max, of this cgroup or an ancestor)
// limits it. Defaults are taken from it, so that marsfs in a container or
// a systemd slice sizes itself to what it is granted, not to the machine.
func HostMemory() (int64, error) {
	ram, err := TotalRAM()
	if err != nil {
		return 0, err
	}
	if lim, ok := cgroupLimit(os.ReadFile); ok && lim < ram {
		return lim, nil
	}
	return ram, nil
}

// cgroupLimit finds the memory limit of this process's cgroup with read
// (os.ReadFile, or a test's), the least along its path to the root; ok is
// false when no limit applies.
func cgroupLimit(read func(string) ([]byte, error)) (limit int64, ok bool) {
	b, err := read("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		var dir, file string
		switch {
		case f[1] == "" && f[0] == "0": // v2, unified
			dir, file = "/sys/fs/cgroup", "memory.max"
		case hasController(f[1], "memory"): // v1
			dir, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for p := path.Clean("/" + f[2]); ; p = path.Dir(p) {
			if v, err := read(path.Join(dir, p, file)); err == nil {
				if n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64); err == nil && n > 0 && n < 1<<60 {
					if !ok || n < limit {
						limit, ok = n, true
					}
				}
			}
			if p == "/" {
				break
			}
		}
	}
	return limit, ok
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// DirFree is the space left for an unprivileged writer in the file system
// of dir.
func DirFree(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
