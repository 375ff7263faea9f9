package main

import (
	"fmt"

	"marsfs/shm"
)

// memDefaults are the --shm and --mem a worker takes when they are not
// given, from what the host really grants: the memory the cgroup allows
// (else the RAM), and the free space of the shared-memory directory.
type memDefaults struct {
	host    int64 // the memory granted to this cgroup, or the RAM
	dirFree int64 // free space of --shm-dir; -1 when unknown
	shm     int64 // a worker's shared memory
	mem     int64 // a worker's quota
}

// defaultsFor computes the defaults for workers workers sharing the host,
// their chunks under shmDir ("" for /dev/shm):
//   - --shm: half the memory between the workers, and no more than fits
//     in shmDir (Docker gives /dev/shm 64 MiB);
//   - --mem: three quarters of what is left of the memory once the shared
//     memory is counted, between the workers. The quota bounds what the
//     operands running hold in a worker's heap, beside its shared memory.
func defaultsFor(workers int, shmDir string) (memDefaults, error) {
	if workers < 1 {
		workers = 1
	}
	host, err := shm.HostMemory()
	if err != nil {
		return memDefaults{}, err
	}
	if shmDir == "" {
		shmDir = "/dev/shm"
	}
	d := memDefaults{host: host, dirFree: -1}
	d.shm = host / 2 / int64(workers)
	if free, err := shm.DirFree(shmDir); err == nil {
		d.dirFree = free
		d.shm = min(d.shm, free/int64(workers))
	}
	d.mem = (host - d.shm*int64(workers)) * 3 / 4 / int64(workers)
	return d, nil
}

// describe says, for --help, what the defaults resolve to here.
func (d memDefaults) describe(workers int) (shmHelp, memHelp string) {
	between := ""
	if workers > 1 {
		between = fmt.Sprintf(" between the %d workers", workers)
	}
	shmHelp = fmt.Sprintf("%s here: half the memory%s (%s, the cgroup's limit or the RAM)", formatSize(d.shm), between, formatSize(d.host))
	if d.dirFree >= 0 && d.shm*int64(max(workers, 1)) >= d.dirFree {
		shmHelp += fmt.Sprintf(", within the %s free in --shm-dir", formatSize(d.dirFree))
	}
	memHelp = fmt.Sprintf("%s here: three quarters of the memory the shared memory leaves%s", formatSize(d.mem), between)
	return shmHelp, memHelp
}
