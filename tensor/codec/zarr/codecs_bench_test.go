package zarr

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// bestOf runs f in b's loop and reports, beside the mean, the MB/s of
// its fastest call ("best-MB/s") and of the median call's CPU time, the
// thread's own ("cpu-MB/s"): on a machine shared with other work the
// wall clock measures the load, the thread's CPU time much less so.
// bench/codecs.py times numcodecs the same ways.
func bestOf(b *testing.B, n int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.SetBytes(int64(n))
	best := time.Duration(1 << 62)
	var cpu []time.Duration
	for b.Loop() {
		t, c := time.Now(), threadCPU()
		f()
		cpu = append(cpu, threadCPU()-c)
		best = min(best, time.Since(t))
	}
	b.ReportMetric(float64(n)/best.Seconds()/1e6, "best-MB/s")
	slices.Sort(cpu)
	b.ReportMetric(float64(n)/cpu[len(cpu)/2].Seconds()/1e6, "cpu-MB/s")
}

// codecCase is one chunk of bench/codecs.py: its raw bytes, numcodecs'
// encoding of them, and the compressor that made it.
type codecCase struct {
	Name       string          `json:"name"`
	Itemsize   int             `json:"itemsize"`
	Compressor json.RawMessage `json:"compressor"`
	raw, enc   []byte
	codec      Codec
}

// codecCases reads the chunks bench/codecs.py writes (into
// $MARSFS_CODEC_BENCH, by default a directory of the temporary one),
// running it first when they are not there; it skips without numcodecs.
func codecCases(tb testing.TB) []codecCase {
	dir := os.Getenv("MARSFS_CODEC_BENCH")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "marsfs-codec-bench")
	}
	manifest := filepath.Join(dir, "manifest.json")
	if _, err := os.Stat(manifest); err != nil {
		needZarr(tb)
		if out, err := exec.Command(python, "../../../bench/codecs.py", "gen", dir).CombinedOutput(); err != nil {
			tb.Fatalf("bench/codecs.py gen: %v\n%s", err, out)
		}
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		tb.Fatal(err)
	}
	var cases []codecCase
	if err := json.Unmarshal(b, &cases); err != nil {
		tb.Fatalf("%s: %v", manifest, err)
	}
	for i := range cases {
		c := &cases[i]
		if c.codec, err = parseV2Compressor(c.Compressor); err != nil {
			tb.Fatal(err)
		}
		if c.codec.ID == "blosc" {
			c.codec.Typesize = c.Itemsize
		}
		if c.raw, err = os.ReadFile(filepath.Join(dir, c.Name+".raw")); err != nil {
			tb.Fatal(err)
		}
		if c.enc, err = os.ReadFile(filepath.Join(dir, c.Name+".enc")); err != nil {
			tb.Fatal(err)
		}
	}
	return cases
}

// BenchmarkCodecs decodes and encodes, on one core, the chunks
// bench/codecs.py makes and numcodecs encodes (a 6 MB climate-like
// float32 chunk and a 100 MB float64 one, with blosc's lz4 and blosclz,
// byte and bit shuffle, zstd, zlib, lz4): decode into a buffer reused
// from call to call ("reused"), into pages just mapped ("fresh"), encode
// into a buffer reused ("encode", what EncodeTo offers) and into a new
// one ("encodenew", Encode). MB/s are of decoded bytes; bench/codecs.py table puts them
// beside numcodecs'.
func BenchmarkCodecs(b *testing.B) {
	for _, c := range codecCases(b) {
		n := len(c.raw)
		b.Run(c.Name+"/reused", func(b *testing.B) {
			dst := make([]byte, n, n+zstdSlack)
			if err := c.codec.decodeInto(dst, c.enc); err != nil || !bytes.Equal(dst, c.raw) {
				b.Fatalf("decode: %v (equal %v)", err, bytes.Equal(dst, c.raw))
			}
			bestOf(b, n, func() {
				if err := c.codec.decodeInto(dst, c.enc); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(c.Name+"/fresh", func(b *testing.B) {
			bestOf(b, n, func() {
				dst, free := freshPages(b, n)
				if err := c.codec.decodeInto(dst, c.enc); err != nil {
					b.Fatal(err)
				}
				free()
			})
		})
		b.Run(c.Name+"/encode", func(b *testing.B) {
			enc, err := c.codec.encode(c.raw)
			if err != nil {
				b.Fatal(err)
			}
			bestOf(b, n, func() {
				if enc, err = c.codec.appendEncode(enc[:0], c.raw); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(n)/float64(len(enc)), "ratio") // after the loop, which clears metrics
		})
		b.Run(c.Name+"/encodenew", func(b *testing.B) {
			bestOf(b, n, func() {
				if _, err := c.codec.encode(c.raw); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
