package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// A memSampler follows the memory of a process tree: the root and every
// descendant, found again every refresh, their resident sizes read every
// interval. A process's memory is RssAnon + RssFile; shared memory is
// counted once, either as RssShmem of each process or, for a tree that
// keeps its chunks as files in shmDir, as the bytes of those files.
type memSampler struct {
	root     int
	shmDir   string
	interval time.Duration
	refresh  time.Duration

	mu   sync.Mutex
	peak int64
	last int64
	stop chan struct{}
	done chan struct{}
}

func newMemSampler(root int, shmDir string) *memSampler {
	return &memSampler{root: root, shmDir: shmDir, interval: 5 * time.Millisecond, refresh: 50 * time.Millisecond}
}

// start samples in the background until stop.
func (m *memSampler) start() {
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(m.done)
		pids := descendants(m.root)
		found := time.Now()
		tick := time.NewTicker(m.interval)
		defer tick.Stop()
		for {
			if time.Since(found) > m.refresh {
				pids, found = descendants(m.root), time.Now()
			}
			n := m.measure(pids)
			m.mu.Lock()
			m.last, m.peak = n, max(m.peak, n)
			m.mu.Unlock()
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
}

func (m *memSampler) halt() {
	close(m.stop)
	<-m.done
}

// now is the tree's memory at once, measured afresh.
func (m *memSampler) now() int64 { return m.measure(descendants(m.root)) }

// resetPeak starts a new peak from the current value.
func (m *memSampler) resetPeak() {
	m.mu.Lock()
	m.peak = m.last
	m.mu.Unlock()
}

func (m *memSampler) peakBytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

func (m *memSampler) measure(pids []int) int64 {
	var n int64
	for _, pid := range pids {
		f := statusFile("/proc/" + strconv.Itoa(pid) + "/status")
		n += f["RssAnon"] + f["RssFile"]
		if m.shmDir == "" {
			n += f["RssShmem"]
		}
	}
	if m.shmDir != "" {
		n += dirBytes(m.shmDir)
	}
	return n
}

// statusFile reads the "Key: N kB" fields of a file such as
// /proc/PID/status or /proc/meminfo, in bytes.
func statusFile(path string) map[string]int64 {
	b, err := os.ReadFile(path)
	out := map[string]int64{}
	if err != nil {
		return out // the process has ended
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || !bytes.HasSuffix(v, []byte(" kB")) {
			continue
		}
		x, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(v, []byte(" kB")))), 10, 64)
		if err == nil {
			out[string(k)] = x << 10
		}
	}
	return out
}

// descendants returns root and every process below it.
func descendants(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return []int{root}
	}
	kids := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentOf(pid); ppid > 0 {
			kids[ppid] = append(kids[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, kids[out[i]]...)
	}
	return out
}

// parentOf reads the parent pid from /proc/PID/stat, whose second field
// (the command name, in parentheses) may itself hold spaces.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	return ppid
}

// dirBytes sums the allocated bytes of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n
}
