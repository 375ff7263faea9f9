package main

import (
	"encoding/binary"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/codec/zarr"
)

// TestZarrThroughMount has zarr-python write an array with its default
// compressor (blosc lz4, byte shuffle) into the data directory of
// `marsfs up` (two worker processes, mounted); a spec written with echo
// reads it with from_zarr and writes a result with to_zarr; zarr-python
// reads the result equal to its own computation. No temporary is left;
// writing over the result without overwrite=True, and reading a store
// whose codec is not supported, are refused at the write, the error file
// naming the path.
func TestZarrThroughMount(t *testing.T) {
	needFUSE(t)
	py := "/usr/bin/python3"
	if err := osexec.Command(py, "-c", "import zarr").Run(); err != nil {
		t.Skip("no python3 with zarr (apt-get install python3-zarr)")
	}
	bin := build(t)
	data := t.TempDir()
	gen := `import numpy as np, zarr, sys
x = np.random.default_rng(4).standard_normal((3000, 700)).astype(np.float32)
zarr.open(sys.argv[1] + "/in.zarr", mode="w", shape=x.shape, chunks=(500, 350), dtype=x.dtype)[...] = x
zarr.open(sys.argv[1] + "/bz2.zarr", mode="w", shape=(4,), chunks=(2,), dtype="f8", compressor=__import__("numcodecs").BZ2())[...] = 1`
	if out, err := osexec.Command(py, "-c", gen, data).CombinedOutput(); err != nil {
		t.Fatalf("zarr-python: %v: %s", err, out)
	}
	_, mnt := startMounted(t, bin, "--workers", "2", "--data-dir", data)
	sess := filepath.Join(mnt, "sessions", strings.TrimSpace(readMounted(t, filepath.Join(mnt, "sessions/clone"))))
	shell := func(cmd string) error {
		return osexec.Command("bash", "-c", "cd "+sess+" && "+cmd).Run()
	}
	if err := shell(`echo 'x = from_zarr("in.zarr")
to_zarr((x - x.mean(axis=0)) * 2, "out.zarr")
to_zarr(x[::2, :100], "out3.zarr", compressor="blosc", zarr_format=3)' > submit`); err != nil {
		t.Fatalf("submit: %v (error %q)", err, readMounted(t, sess+"/error"))
	}
	if st := readMounted(t, sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph: %s", st)
	}
	check := `import numpy as np, zarr, sys
x = zarr.open(sys.argv[1] + "/in.zarr", mode="r")[...]
y = zarr.open(sys.argv[1] + "/out.zarr", mode="r")
print(y.dtype == np.float32 and y.shape == x.shape and y.chunks == (500, 350) and y.compressor.codec_id == "zstd" and
      np.allclose(y[...], (x - x.mean(axis=0)) * 2, rtol=1e-5, atol=1e-5))`
	if out, err := osexec.Command(py, "-c", check, data).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Errorf("zarr-python reads out.zarr: %s %v", out, err)
	}
	// The mean and variance along axis 0 read each store chunk once, in
	// one op that reduces it for both (the partials of the two workers'
	// ops read by range); they are NumPy's.
	if err := shell(`printf 'x = from_zarr("in.zarr")\nm = x.mean(axis=0)\nv = x.var(axis=0)\nfetch m, v\n' > submit`); err != nil {
		t.Fatalf("submit: %v (error %q)", err, readMounted(t, sess+"/error"))
	}
	if st := readMounted(t, sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph: %s", st)
	}
	if plan := readMounted(t, sess+"/graphs/last/plan"); strings.Count(plan, "fuse(from_zarr+maps(mean.map+var.map))") != 12 {
		t.Errorf("plan: want 12 fused reads of the 12 store chunks:\n%s", plan)
	}
	moments := `import numpy as np, zarr, sys
x = zarr.open(sys.argv[1] + "/in.zarr", mode="r")[...].astype(np.float64)
m = np.fromfile(sys.argv[2] + "/tensors/m/data", dtype="<f4")
v = np.fromfile(sys.argv[2] + "/tensors/v/data", dtype="<f4")
print(np.allclose(m, x.mean(axis=0), rtol=1e-6, atol=1e-7) and np.allclose(v, x.var(axis=0), rtol=1e-6, atol=1e-7))`
	if out, err := osexec.Command(py, "-c", moments, data, sess).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Errorf("mean and variance differ from NumPy's: %s %v", out, err)
	}
	// The format 3 array, read back through from_zarr.
	if err := shell(`echo 'a = from_zarr("out3.zarr")
b = from_zarr("in.zarr")[::2, :100]
d = abs(a - b).max()' > submit`); err != nil {
		t.Fatalf("submit: %v (error %q)", err, readMounted(t, sess+"/error"))
	}
	if st := readMounted(t, sess+"/graphs/last/wait"); !strings.HasPrefix(st, "SUCCEEDED") {
		t.Fatalf("graph: %s", st)
	}
	if d := strings.TrimSpace(readMounted(t, sess+"/tensors/d/text")); d != "0.0" {
		t.Errorf("format 3 array differs from what it was written from by %s", d)
	}
	if left, _ := filepath.Glob(filepath.Join(data, "*.part")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	for _, tc := range []struct{ spec, want string }{
		{`to_zarr(ones(3), "out.zarr")`, "exists"},
		{`y = from_zarr("bz2.zarr")`, `"bz2.zarr": .zarray: codec "bz2" is not supported`},
		{`y = from_zarr("../in.zarr")`, "not inside the data directory"},
	} {
		err := os.WriteFile(sess+"/submit", []byte(tc.spec+"\n"), 0o644)
		if !errorIs(err, syscall.EINVAL) {
			t.Errorf("%s: %v, want EINVAL", tc.spec, err)
		}
		if msg := readMounted(t, sess+"/error"); !strings.Contains(msg, tc.want) {
			t.Errorf("error file for %s: %q, want %q", tc.spec, msg, tc.want)
		}
	}
}

// TestFromZarrGiB writes a 1 GiB zarr array (zstd, 16 MiB chunks) into
// the data directory of `marsfs up` (two worker processes, mounted),
// reduces it with from_zarr through the mount, and checks the sums and
// that the scheduler's resident memory did not grow with the array: the
// workers read and decode their chunks themselves.
func TestFromZarrGiB(t *testing.T) {
	if testing.Short() {
		t.Skip("1 GiB array")
	}
	sumRampGiB(t, "from_zarr(\"x.zarr\")", func(dir string, rows, cols int) {
		writeRampZarr(t, filepath.Join(dir, "x.zarr"), rows, cols, 2048)
	})
}

// writeRampZarr writes a rows x cols float64 zarr array (format 2, zstd)
// whose element i is i, in chunks of chunkRows whole rows.
func writeRampZarr(t *testing.T, dir string, rows, cols, chunkRows int) {
	t.Helper()
	a, err := zarr.New([]int{rows, cols}, []int{chunkRows, cols}, tensor.Float64, 2, "zstd")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, a.ChunkBytes())
	for c := 0; c*chunkRows < rows; c++ {
		for i := range chunkRows * cols {
			v := float64(c*chunkRows*cols + i)
			if c*chunkRows+i/cols >= rows {
				v = 0
			}
			binary.LittleEndian.PutUint64(chunk[8*i:], math.Float64bits(v))
		}
		enc, err := a.Encode(chunk)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, a.Key([]int{c, 0})), enc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := a.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".zarray"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
}
