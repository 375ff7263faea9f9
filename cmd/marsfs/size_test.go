package main

import "testing"

// TestParseSize checks every unit form a size flag takes, and what it
// refuses.
func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"65536", 65536}, {"512B", 512}, {"512b", 512},
		{"64K", 64 << 10}, {"64k", 64 << 10}, {"64KiB", 64 << 10}, {"64kib", 64 << 10}, {"64KB", 64000}, {"64kb", 64000},
		{"64M", 64 << 20}, {"64MiB", 64 << 20}, {"64MB", 64e6}, {"64mb", 64e6},
		{"2G", 2 << 30}, {"2GiB", 2 << 30}, {"2GB", 2e9}, {"2g", 2 << 30},
		{"1T", 1 << 40}, {"1TiB", 1 << 40}, {"1TB", 1e12},
		{"1.5G", 3 << 29}, {"0.5KiB", 512}, {" 8M ", 8 << 20}, {"8 MiB", 8 << 20},
	} {
		got, err := parseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "M", "-1", "-1G", "lots", "1.2.3K", "1Q", "NaN", "1e30T", "inf"} {
		if got, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", bad, got)
		}
	}
	for _, n := range []int64{0, 1, 512, 1 << 10, 1536, 64 << 20, 6 << 30, 6<<30 + 1<<29, 1 << 40} {
		back, err := parseSize(formatSize(n))
		if err != nil || back != n {
			t.Errorf("formatSize(%d) = %q, parses back as %d, %v", n, formatSize(n), back, err)
		}
	}
}
