package shm

import (
	"os"
	"testing"
)

// TestCgroupLimit reads the memory limit of scripted cgroup trees, v1 and
// v2: the least limit on the path to the root counts, and "max" or v1's
// huge number is no limit.
func TestCgroupLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		limit int64
		ok    bool
	}{
		{"v1 limited", map[string]string{
			"/proc/self/cgroup": "9:name=systemd:/\n4:memory:/marsfs/test\n3:cpu,cpuacct:/\n",
			"/sys/fs/cgroup/memory/marsfs/test/memory.limit_in_bytes": "3221225472\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes":             "9223372036854771712\n",
		}, 3 << 30, true},
		{"v1 parent tighter", map[string]string{
			"/proc/self/cgroup": "4:memory:/a/b\n",
			"/sys/fs/cgroup/memory/a/b/memory.limit_in_bytes": "9223372036854771712\n",
			"/sys/fs/cgroup/memory/a/memory.limit_in_bytes":   "1073741824\n",
		}, 1 << 30, true},
		{"v1 none", map[string]string{
			"/proc/self/cgroup":                           "4:memory:/\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, 0, false},
		{"v2 limited", map[string]string{
			"/proc/self/cgroup":                        "0::/user.slice/job\n",
			"/sys/fs/cgroup/user.slice/job/memory.max": "2147483648\n",
			"/sys/fs/cgroup/user.slice/memory.max":     "max\n",
		}, 2 << 30, true},
		{"v2 max", map[string]string{
			"/proc/self/cgroup":         "0::/\n",
			"/sys/fs/cgroup/memory.max": "max\n",
		}, 0, false},
		{"no cgroup file", map[string]string{}, 0, false},
	} {
		read := func(p string) ([]byte, error) {
			if s, ok := tc.files[p]; ok {
				return []byte(s), nil
			}
			return nil, os.ErrNotExist
		}
		if limit, ok := cgroupLimit(read); limit != tc.limit || ok != tc.ok {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, limit, ok, tc.limit, tc.ok)
		}
	}
	if m, err := HostMemory(); err != nil || m <= 0 {
		t.Errorf("HostMemory() = %d, %v", m, err)
	}
}
