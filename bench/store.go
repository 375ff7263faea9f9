package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sync"
	"time"

	"marsfs/tensor"
	"marsfs/tensor/codec/zarr"
)

// The data workloads (W7, W8) read a Zarr array on disk: rows x cols
// float64, 5 + a standard normal each, in chunks of rchunk whole rows.
// With q = 1 (W7) the values are quantized to 1/1024, as a measuring
// instrument's are, so that zstd has something to do (4.4:1); with q = 0
// (W8) they are not, and doubles of random mantissas do not compress: the
// files are as large as the data, larger than the memory available.
// Either way,
// format 2, zstd (level 1), as zarr-python writes it. The harness writes
// it once into its data directory (--data-dir, outside the repository)
// and keeps it for later runs; marsfs and Dask read the same files.

// storeName is the array's directory in the data directory; the Python
// side (dask_workloads.py) names it the same way.
func storeName(p map[string]int) string {
	kind := "n"
	if p["q"] != 0 {
		kind = "q"
	}
	return fmt.Sprintf("bench-%s-%dx%d-c%d.zarr", kind, p["rows"], p["cols"], p["rchunk"])
}

// ensureStore writes the array of p into dir unless it is there whole
// (its .zarray is written last), and returns its directory.
func ensureStore(dir string, p map[string]int, log io.Writer) (string, error) {
	path := filepath.Join(dir, storeName(p))
	if _, err := os.Stat(filepath.Join(path, ".zarray")); err == nil {
		return path, nil
	}
	rows, cols, rchunk := p["rows"], p["cols"], p["rchunk"]
	a, err := zarr.New([]int{rows, cols}, []int{rchunk, cols}, tensor.Float64, 2, "zstd")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "bench: writing %s (%.1f GB of float64, zstd), once\n", path, float64(rows)*float64(cols)*8/1e9)
	begin := time.Now()
	n := (rows + rchunk - 1) / rchunk
	next := make(chan int)
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, a.ChunkBytes())
			for c := range next {
				r := rand.New(rand.NewPCG(uint64(c), 7))
				for i := 0; i < len(buf); i += 8 {
					v := 5 + r.NormFloat64()
					if p["q"] != 0 {
						v = math.Round(v*1024) / 1024
					}
					if c*rchunk+i/8/cols >= rows {
						v = 0 // past the last row: the fill value
					}
					binary.LittleEndian.PutUint64(buf[i:], math.Float64bits(v))
				}
				enc, err := a.Encode(buf)
				if err == nil {
					err = os.WriteFile(filepath.Join(path, a.Key([]int{c, 0})), enc, 0o644)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for c := range n {
		select {
		case next <- c:
		case err := <-errs:
			close(next)
			wg.Wait()
			return "", err
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return "", err
	default:
	}
	meta, err := a.Metadata()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(path, ".zarray"), meta, 0o644); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "bench: wrote %s in %.0f s\n", path, time.Since(begin).Seconds())
	return path, nil
}

// storeFiles lists the chunk files of the array at path and their size.
func storeFiles(path string) ([]string, int64, error) {
	files, err := filepath.Glob(filepath.Join(path, "[0-9]*"))
	if err != nil {
		return nil, 0, err
	}
	var total int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, 0, err
		}
		total += st.Size()
	}
	return files, total, nil
}

// ddStore reads every chunk file of the array at path with dd, as the
// disk's own measure beside the engines': through the page cache, or
// with direct I/O (iflag=direct), which passes it by and reads the disk.
func ddStore(path string, direct bool) result {
	res := result{engine: "dd (page cache)"}
	if direct {
		res.engine = "dd iflag=direct (disk)"
	}
	files, total, err := storeFiles(path)
	if err != nil {
		res.err = err
		return res
	}
	begin := time.Now()
	for _, f := range files {
		args := []string{"if=" + f, "of=/dev/null", "bs=4M", "status=none"}
		if direct {
			args = append(args, "iflag=direct")
		}
		if out, err := osexec.Command("dd", args...).CombinedOutput(); err != nil {
			res.err = fmt.Errorf("dd %s: %v: %s", f, err, out)
			return res
		}
	}
	s := time.Since(begin).Seconds()
	res.times = []float64{s}
	res.value = []float64{float64(total) / s / 1e9} // GB/s
	return res
}
