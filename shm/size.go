package shm

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseBytes parses a size as given to --shm and --mem: a number of bytes
// with an optional binary unit (K, M, G, T, alone or followed by "iB" or
// "B": "512M", "2GiB", "1.5G"), or a percentage of the machine's RAM
// ("50%").
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f <= 0 || f > 100 {
			return 0, fmt.Errorf("bad size %q: a percentage of RAM is in (0, 100]", s)
		}
		ram, err := TotalRAM()
		if err != nil {
			return 0, err
		}
		return int64(float64(ram) * f / 100), nil
	}
	num := strings.TrimRight(t, "KMGTiBkmgtb")
	unit := strings.ToUpper(strings.TrimSpace(t[len(num):]))
	num = strings.TrimSpace(num)
	mult := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10,
		"M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
		"T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if mult == 0 || err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f*mult > 1<<62 {
		return 0, fmt.Errorf("bad size %q: want bytes with an optional unit (512M, 2GiB) or a percentage of RAM (50%%)", s)
	}
	return int64(f * mult), nil
}

// TotalRAM is the machine's memory in bytes.
func TotalRAM() (int64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, fmt.Errorf("shm: sysinfo: %w", err)
	}
	return int64(si.Totalram) * int64(si.Unit), nil
}
