package shm

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// TotalRAM is the machine's memory in bytes.
func TotalRAM() (int64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, fmt.Errorf("shm: sysinfo: %w", err)
	}
	return int64(si.Totalram) * int64(si.Unit), nil
}
