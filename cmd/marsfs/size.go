package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeFlag is a flag whose value is a size in bytes: a number, with or
// without a unit, case-insensitive. K, M, G and T and KiB, MiB, GiB and
// TiB are powers of 1024; KB, MB, GB and TB powers of 1000; B is a byte.
// With none set, "none" stands for 0 (no bound).
type sizeFlag struct {
	p    *int64
	none bool
}

func (f sizeFlag) Set(s string) error {
	if f.none && strings.EqualFold(strings.TrimSpace(s), "none") {
		*f.p = 0
		return nil
	}
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*f.p = n
	return nil
}

func (f sizeFlag) String() string {
	if f.p == nil || *f.p < 0 {
		return "" // not set: the default, which the usage says
	}
	return formatSize(*f.p)
}

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseSize parses a size in bytes with an optional unit (see sizeFlag):
// "65536", "64K", "64KiB", "64KB", "1.5G".
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil && mult == 1 {
		if n < 0 {
			return 0, fmt.Errorf("size %q is negative", s)
		}
		return n, nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || t == "" {
		return 0, fmt.Errorf("size %q: want a number of bytes, with a unit if you like (64M, 2GiB, 500MB)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("size %q is negative", s)
	}
	b := v * mult
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(math.Round(b)), nil
}

// formatSize renders n bytes in binary units, as a size flag takes them
// back: 0, 512B, 64MiB, 5.9GiB.
func formatSize(n int64) string {
	if n == 0 {
		return "0"
	}
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + "B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f%s", v, units[i])
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}
