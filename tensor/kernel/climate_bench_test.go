package kernel

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec/zarr"
)

// climateStore is bench's CLIM array (go run ./bench --only CLIM-MEAN
// writes it): float32 (4380, 181, 360) in chunks (24, 181, 360), blosc
// lz4 with byte shuffle; $MARSFS_BENCH_CLIM names another.
func climateStore(b *testing.B) (*os.Root, string, *zarr.Array) {
	p := os.Getenv("MARSFS_BENCH_CLIM")
	if p == "" {
		p = filepath.Join(os.TempDir(), "marsfs-bench-data", "clim-lz4-4380x181x360-c24.zarr")
	}
	root, err := os.OpenRoot(filepath.Dir(p))
	if err != nil {
		b.Skipf("no climate store (go run ./bench --only CLIM-MEAN writes it): %v", err)
	}
	b.Cleanup(func() { root.Close() })
	arr, err := zarr.Open(root.FS(), filepath.Base(p))
	if err != nil {
		b.Skipf("no climate store (go run ./bench --only CLIM-MEAN writes it): %v", err)
	}
	return root, filepath.Base(p), arr
}

// BenchmarkClimateChunk runs, on 8 chunks of a real climate store in
// turn, the steps of the time mean's fused op: reading a store chunk's
// file, decoding it, its mean partial, and the whole op
// (fuse(from_zarr+mean.map)). Times are a chunk's, MB/s of decoded bytes.
func BenchmarkClimateChunk(b *testing.B) {
	root, name, arr := climateStore(b)
	ctx := WithData(context.Background(), root)
	shape := arr.Chunks
	n := arr.ChunkBytes()
	read := func(i int) *chunk.Op {
		return &chunk.Op{Kind: "from_zarr", Shape: shape, DType: arr.DType,
			Args: chunk.ZarrArgs{Path: name, Array: arr.Desc(), Offset: []int{(i % 8) * 23 * shape[0], 0, 0}}}
	}
	var files [][]byte
	for i := range 8 {
		f, err := root.Open(filepath.Join(name, arr.Key([]int{(i % 8) * 23, 0, 0})))
		if err != nil {
			b.Fatal(err)
		}
		raw, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, raw)
	}
	b.Run("file", func(b *testing.B) {
		b.SetBytes(int64(n))
		var buf []byte
		i := 0
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			if _, err := readWhole(root, filepath.Join(name, arr.Key([]int{(i % 8) * 23, 0, 0})), &buf); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(n))
		dst := make([]byte, n)
		var scratch []byte
		i := 0
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			if err := arr.Decode(dst, files[i%8], &scratch); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	x := tensor.NewArray(arr.DType, shape)
	if err := arr.Decode(x.Data, files[0], nil); err != nil {
		b.Fatal(err)
	}
	mean := mapOp(tensor.OpMean, arr.DType, shape, []int{0})
	b.Run("mean.map", func(b *testing.B) {
		b.SetBytes(int64(n))
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			if _, err := Run(ctx, mean, []*tensor.Array{x}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fused", func(b *testing.B) {
		b.SetBytes(int64(n))
		i := 0
		defer reportCPU(b, cpuTime())
		for b.Loop() {
			m := *mean
			m.Inputs = []int{0}
			op := &chunk.Op{Kind: chunk.KindFuse, Shape: m.Shape, DType: m.DType,
				Args: chunk.FuseArgs{Members: []chunk.Op{*read(i), m}}}
			if _, err := Run(ctx, op, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// cpuTime is the process' CPU time so far (user and system): on a loaded
// host, a benchmark's CPU time an op says more than its wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time an op since start (see cpuTime).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
}
