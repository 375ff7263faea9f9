package zarr

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// climateLike returns n bytes of float32s as a smooth field plus noise,
// or float64s when typesize is 8; other typesizes get a noisy ramp.
func climateLike(n, typesize int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	b := make([]byte, n)
	for i := 0; i+typesize <= n; i += typesize {
		v := 280 + 20*math.Sin(float64(i/typesize)/300) + r.NormFloat64()
		switch typesize {
		case 4:
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(v)))
		case 8:
			binary.LittleEndian.PutUint64(b[i:], math.Float64bits(math.Round(v*1024)/1024))
		default:
			for j := range typesize {
				b[i+j] = byte(int(v*4) >> (j % 3 * 4))
			}
		}
	}
	return b
}

// TestBloscRoundTrip encodes and decodes frames over every typesize from
// 1 to 16 (and 255, and 300 which blosc treats as 1), each shuffle and
// inner codec, levels that choose other block sizes, and sizes that are
// not a multiple of the block or of the element, with the vector kernels
// and without.
func TestBloscRoundTrip(t *testing.T) {
	sizes := []int{0, 1, 127, 128, 1000, 65536 + 7, 300_001}
	eachPath(t, func(t *testing.T) {
		for _, ts := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 255, 300} {
			for _, cname := range []string{"lz4", "blosclz", "zstd", "zlib", "snappy", "lz4hc"} {
				for shuffle := range 3 {
					for _, level := range []int{0, 1, 5, 9} {
						if cname != "lz4" && level != 5 || ts > 16 && level != 5 {
							continue // every level on one codec is enough
						}
						for _, n := range sizes {
							if n > 70000 && (ts%4 != 0 || cname == "zlib") {
								continue
							}
							src := climateLike(n, ts, uint64(ts*n))
							enc, err := bloscEncode(nil, src, cname, level, shuffle, ts)
							if err != nil {
								t.Fatalf("%s ts %d shuffle %d level %d, %d bytes: %v", cname, ts, shuffle, level, n, err)
							}
							dst := make([]byte, n)
							if err := bloscDecode(dst, enc); err != nil || !bytes.Equal(dst, src) {
								t.Fatalf("%s ts %d shuffle %d level %d, %d bytes: %v (equal %v)", cname, ts, shuffle, level, n, err, bytes.Equal(dst, src))
							}
						}
					}
				}
			}
		}
	})
}

// TestBloscLayout checks the frame's layout against c-blosc's rules on
// the chunks zarr-python writes: the block size and the split for the
// default compressor on float32 and float64 chunks, zstd's larger blocks
// unsplit, and small chunks copied.
func TestBloscLayout(t *testing.T) {
	for _, tc := range []struct {
		cname            string
		level, ts, n, bs int
		split            bool
	}{
		{"lz4", 5, 4, 6255360, 512 << 10, true},
		{"lz4", 5, 8, 100 << 20, 1 << 20, true},
		{"blosclz", 5, 4, 6255360, 512 << 10, true},
		{"zstd", 5, 4, 6255360, 256 << 10, false},
		{"lz4", 1, 4, 1 << 20, 64 << 10, true},
		{"lz4", 9, 2, 1 << 20, 512 << 10, true},
		{"lz4", 5, 1, 20000, 20000, true},
		{"lz4", 5, 4, 100, 100, false},
	} {
		bs := bloscBlocksize(bloscNames[tc.cname], tc.level, tc.ts, tc.n)
		split := bloscSplits(bloscNames[tc.cname], tc.ts, bs)
		if bs != tc.bs || split != tc.split {
			t.Errorf("%s level %d typesize %d, %d bytes: blocks of %d split %v, want %d %v", tc.cname, tc.level, tc.ts, tc.n, bs, split, tc.bs, tc.split)
		}
	}
	// Too small to compress, and noise that does not: stored copied.
	for _, src := range [][]byte{make([]byte, 100), testData(1000, 1, 1)} {
		r := rand.New(rand.NewPCG(1, 2))
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		enc, err := bloscEncode(nil, src, "lz4", 5, 1, 4)
		if err != nil || enc[2]&bloscMemcpyed == 0 || len(enc) != len(src)+bloscHeader {
			t.Errorf("%d bytes of noise: flags %#x, %d bytes, %v", len(src), enc[2], len(enc), err)
		}
	}
}

// TestBloscNumcodecs has numcodecs (c-blosc) decode marsfs' frames and
// marsfs decode c-blosc's, over typesizes, shuffles, inner codecs and
// sizes with short last blocks, and compares the frames: the same block
// size and flags, and sizes within 10% of c-blosc's.
func TestBloscNumcodecs(t *testing.T) {
	needZarr(t)
	dir := t.TempDir()
	type item struct {
		name           string
		cname          string
		ts, shuffle, n int
		raw, ours      []byte
	}
	var items []item
	for _, ts := range []int{1, 2, 3, 4, 8, 16} {
		for _, cname := range []string{"lz4", "blosclz", "zstd", "zlib", "snappy"} {
			for shuffle := range 3 {
				for _, n := range []int{1000, 1 << 20, 3<<20 + 4*ts} {
					if n > 1000 && cname != "lz4" && cname != "blosclz" && ts != 4 {
						continue
					}
					n -= n % ts
					raw := climateLike(n, ts, uint64(n+ts))
					ours, err := bloscEncode(nil, raw, cname, 5, shuffle, ts)
					if err != nil {
						t.Fatal(err)
					}
					it := item{fmt.Sprintf("%s_%d_%d_%d", cname, ts, shuffle, n), cname, ts, shuffle, n, raw, ours}
					os.WriteFile(filepath.Join(dir, it.name+".raw"), raw, 0o644)
					os.WriteFile(filepath.Join(dir, it.name+".ours"), ours, 0o644)
					items = append(items, it)
				}
			}
		}
	}
	script := `
import sys, os, glob
import numpy as np
from numcodecs import blosc, Blosc
d = sys.argv[1]
bad = []
for raw in sorted(glob.glob(d + "/*.raw")):
    name = os.path.basename(raw)[:-4]
    cname, ts, shuffle, n = name.split("_")
    data = open(raw, "rb").read()
    ours = open(d + "/" + name + ".ours", "rb").read()
    if bytes(blosc.decompress(ours)) != data:
        bad.append(name)
    # c-blosc's typesize is the buffer's item size
    x = np.frombuffer(data, dtype="u1").view("V%d" % int(ts)) if int(ts) > 1 else np.frombuffer(data, dtype="u1")
    theirs = blosc.compress(x, cname.encode(), 5, int(shuffle))
    open(d + "/" + name + ".theirs", "wb").write(theirs)
print("bad:", " ".join(bad))
`
	out, err := exec.Command(python, "-c", script, dir).CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "bad:") {
		t.Fatalf("numcodecs: %v\n%s", err, out)
	}
	if bad := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bad:")); bad != "" {
		t.Errorf("numcodecs decodes these of marsfs' frames wrong: %s", bad)
	}
	for _, it := range items {
		theirs, err := os.ReadFile(filepath.Join(dir, it.name+".theirs"))
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, it.n)
		if err := bloscDecode(dst, theirs); err != nil || !bytes.Equal(dst, it.raw) {
			t.Errorf("%s: c-blosc's frame: %v (equal %v)", it.name, err, bytes.Equal(dst, it.raw))
			continue
		}
		if it.ours[2]&bloscMemcpyed != 0 || theirs[2]&bloscMemcpyed != 0 {
			continue
		}
		if !bytes.Equal(it.ours[2:4], theirs[2:4]) || !bytes.Equal(it.ours[8:12], theirs[8:12]) {
			t.Errorf("%s: flags %#x typesize %d blocks of %d; c-blosc's %#x %d %d", it.name, it.ours[2], it.ours[3],
				binary.LittleEndian.Uint32(it.ours[8:]), theirs[2], theirs[3], binary.LittleEndian.Uint32(theirs[8:]))
		}
		if ratio := float64(len(it.ours)) / float64(len(theirs)); it.n > 1000 && (ratio > 1.10 || ratio < 0.7) {
			t.Logf("%s: %d bytes, c-blosc's %d (%.2f)", it.name, len(it.ours), len(theirs), ratio)
			if (it.cname == "lz4" || it.cname == "blosclz") && it.shuffle > 0 && ratio > 1.10 {
				t.Errorf("%s: %.2f times c-blosc's size", it.name, ratio)
			}
		}
	}
}

// FuzzBloscDecode: arbitrary frames decode to an error or to bytes,
// never a panic nor a write past the chunk.
func FuzzBloscDecode(f *testing.F) {
	for _, cname := range []string{"lz4", "blosclz", "zstd"} {
		for shuffle := range 3 {
			enc, _ := bloscEncode(nil, climateLike(3000, 4, 1), cname, 5, shuffle, 4)
			f.Add(enc)
		}
	}
	big, _ := bloscEncode(nil, climateLike(300_000, 8, 1), "lz4", 5, 1, 8)
	f.Add(big)
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := BloscSize(b)
		if err != nil || n > 1<<20 {
			n = 3000
		}
		const guard = 32
		buf := bytes.Repeat([]byte{0x5a}, n+2*guard)
		bloscDecode(buf[guard:guard+n:guard+n], b)
		for i, c := range buf {
			if (i < guard || i >= guard+n) && c != 0x5a {
				t.Fatalf("a write outside the chunk at %d", i-guard)
			}
		}
	})
}

// FuzzBlosclzDecode: arbitrary streams decode to an error or to bytes.
func FuzzBlosclzDecode(f *testing.F) {
	var table blosclzTable
	for _, in := range lz4Inputs()[:30] {
		f.Add(blosclzCompress(nil, in, &table), uint16(len(in)))
	}
	f.Fuzz(func(t *testing.T, b []byte, n uint16) {
		dst := make([]byte, n)
		if m, err := blosclzDecode(dst, b); err == nil && (m < 0 || m > len(dst)) {
			t.Fatalf("%d bytes decoded into %d", m, len(dst))
		}
	})
}
