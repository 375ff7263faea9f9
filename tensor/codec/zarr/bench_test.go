package zarr

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"marsfs/tensor"
)

// BenchmarkDecode decodes one 40 MB chunk of float64 (5 + a normal,
// quantized to 1/1024, as bench's W7 array holds) with each compressor
// marsfs writes.
func BenchmarkDecode(b *testing.B) {
	for _, comp := range []string{"zstd", "blosc", "zlib", ""} {
		a, _ := New([]int{5000, 1000}, []int{5000, 1000}, tensor.Float64, 2, comp)
		chunk := make([]byte, a.ChunkBytes())
		r := rand.New(rand.NewPCG(1, 7))
		for i := 0; i < len(chunk); i += 8 {
			binary.LittleEndian.PutUint64(chunk[i:], math.Float64bits(math.Round((5+r.NormFloat64())*1024)/1024))
		}
		enc, err := a.Encode(chunk)
		if err != nil {
			b.Fatal(err)
		}
		name := comp
		if name == "" {
			name = "none"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(chunk)))
			b.ReportMetric(float64(len(chunk))/float64(len(enc)), "ratio")
			dst := make([]byte, len(chunk))
			for b.Loop() {
				if err := a.Decode(dst, enc, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchStore is the array bench's W7 reads, when bench has written it
// (go run ./bench --only W7); BenchmarkDecodeStore skips without it.
var benchStore = func() string {
	if s := os.Getenv("MARSFS_BENCH_ZARR"); s != "" {
		return s
	}
	return filepath.Join(os.TempDir(), "marsfs-bench-data", "bench-q-500000x1000-c5000.zarr")
}()

// BenchmarkDecodeStore decodes real store chunks of bench's W7 array (8
// of its 100 files, in turn, 40 MB each decoded) on one core, as the
// from_zarr kernel does and as it might: into a buffer reused from chunk
// to chunk with room for the decoder's over-write (what a fused from_zarr
// does: "reused"); into pages just mapped, which the decoder touches first
// ("fresh", what a chunk written to new shared memory costs, and
// da.from_zarr's new arrays); and into a reused one by a decoder of its
// own, checking the frames' xxhash64 ("own") and not ("nocheck", which
// libzstd would check too). MB/s are of decoded bytes. The decode floor
// of W7 is 4 GB at the "reused" rate on two cores.
func BenchmarkDecodeStore(b *testing.B) {
	a, err := Open(os.DirFS(filepath.Dir(benchStore)), filepath.Base(benchStore))
	if err != nil {
		b.Skipf("no W7 array (go run ./bench --only W7 writes it): %v", err)
	}
	var files [][]byte
	for i := range 8 {
		raw, err := os.ReadFile(filepath.Join(benchStore, a.Key([]int{i * 12, 0})))
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, raw)
	}
	n := a.ChunkBytes()
	b.Run("reused", func(b *testing.B) {
		b.SetBytes(int64(n))
		dst := make([]byte, n, n+zstdSlack)
		i := 0
		for b.Loop() {
			if err := a.Decode(dst, files[i%len(files)], nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("fresh", func(b *testing.B) {
		b.SetBytes(int64(n))
		i := 0
		for b.Loop() {
			dst, free := freshPages(b, n+zstdSlack)
			if err := a.Decode(dst[:n], files[i%len(files)], nil); err != nil {
				b.Fatal(err)
			}
			free()
			i++
		}
	})
	for _, nocheck := range []bool{false, true} {
		name := "own"
		if nocheck {
			name = "nocheck"
		}
		b.Run(name, func(b *testing.B) {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.IgnoreChecksum(nocheck), zstd.WithDecoderMaxMemory(maxChunk))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(n))
			dst := make([]byte, 0, n+zstdSlack)
			i := 0
			for b.Loop() {
				out, err := d.DecodeAll(files[i%len(files)], dst[:0])
				if err != nil || len(out) != n {
					b.Fatal(len(out), err)
				}
				i++
			}
		})
	}
}
