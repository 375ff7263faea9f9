package fs

import (
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// npyStream is a .npy file of the given descr, order and shape whose
// element of C index i is written by put, in the order the file holds it.
func npyStream(descr string, fortran bool, shape []int, size int, put func(dst []byte, i int)) []byte {
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': ("
	if fortran {
		dict = strings.Replace(dict, "False", "True", 1)
	}
	for i, s := range shape {
		if i > 0 {
			dict += ", "
		}
		dict += strconv.Itoa(s)
	}
	if len(shape) == 1 {
		dict += ","
	}
	dict += "), }"
	for (10+len(dict)+1)%64 != 0 {
		dict += " "
	}
	dict += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	b = append(b, dict...)
	n := 1
	for _, s := range shape {
		n *= s
	}
	data := make([]byte, n*size)
	for pos := range n {
		// The C index of the element at file position pos.
		i := pos
		if fortran && len(shape) == 2 {
			r, c := pos%shape[0], pos/shape[0]
			i = r*shape[1] + c
		}
		put(data[pos*size:], i)
	}
	return append(b, data...)
}

// TestUploadStreams uploads tensors large enough to be cut into several
// chunks, each sent on as its bytes arrive, in C and Fortran order, in
// either byte order and in narrow dtypes, and reads them back.
func TestUploadStreams(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	for _, tc := range []struct {
		name, descr string
		fortran     bool
		shape       []int
		size        int
		put         func(dst []byte, i int)
		dtype       string
		want        func(data []byte, i int) bool
	}{
		{"f8", "<f8", false, []int{5000000}, 8,
			func(d []byte, i int) { binary.LittleEndian.PutUint64(d, math.Float64bits(float64(i))) },
			"float64",
			func(d []byte, i int) bool {
				return math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:])) == float64(i)
			}},
		{"u2", ">u2", true, []int{3000, 2000}, 2,
			func(d []byte, i int) { binary.BigEndian.PutUint16(d, uint16(i*7)) },
			"uint16",
			func(d []byte, i int) bool { return binary.LittleEndian.Uint16(d[2*i:]) == uint16(i*7) }},
		{"i1", "|i1", false, []int{6, 7}, 1,
			func(d []byte, i int) { d[0] = byte(int8(i - 20)) },
			"int8",
			func(d []byte, i int) bool { return int8(d[i]) == int8(i-20) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := npyStream(tc.descr, tc.fortran, tc.shape, tc.size, tc.put)
			f, err := c.Create(s+"/tensors", tc.name+".npy")
			if err != nil {
				t.Fatal(err)
			}
			// Written in pieces, as a client sends them.
			for off := 0; off < len(file); off += 1 << 20 {
				if _, err := f.Write(file[off:min(off+1<<20, len(file))]); err != nil {
					t.Fatalf("write at %d: %v (error %q)", off, err, read(t, c, s+"/error"))
				}
			}
			if err := f.Close(); err != nil {
				t.Fatalf("close: %v (error %q)", err, read(t, c, s+"/error"))
			}
			meta := read(t, c, s+"/tensors/"+tc.name+"/meta")
			if !strings.Contains(meta, "dtype "+tc.dtype+"\n") || !strings.Contains(meta, "graph upload\n") {
				t.Errorf("meta:\n%s", meta)
			}
			data, err := c.ReadFile(s + "/tensors/" + tc.name + "/data")
			if err != nil {
				t.Fatal(err)
			}
			n := 1
			for _, d := range tc.shape {
				n *= d
			}
			for i := range n {
				if !tc.want(data, i) {
					t.Fatalf("element %d reads wrong", i)
				}
			}
		})
	}
	// Nothing is left of an upload cut short: its chunks are freed.
	held := ts.run.Len()
	file := npyStream("<f8", false, []int{5000000}, 8, func(d []byte, i int) {})
	w, err := c.Create(s+"/tensors", "cut.npy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(file[:len(file)-100]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("an upload cut short was accepted")
	}
	if got := read(t, c, s+"/error"); !strings.Contains(got, "header says") {
		t.Errorf("error after a short upload: %q", got)
	}
	waitFor(t, func() bool { return ts.run.Len() == held }, "the chunks of an upload cut short freed")
}

// TestUploadEveryDType has NumPy write a tensor in every dtype, byte order
// and memory order it writes; each is uploaded and read back as .npy, and
// NumPy finds it equal, of its own dtype.
func TestUploadEveryDType(t *testing.T) {
	needParser(t)
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("no python3 with numpy")
	}
	dir := t.TempDir()
	const gen = `
import sys, os
import numpy as np
rng = np.random.default_rng(5)
for code in ["b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]:
    for bo in "<>":
        for order in "CF":
            dt = np.dtype("bool") if code == "b1" else np.dtype(bo + code)
            if dt.kind == "f":
                a = rng.normal(0, 100, size=(37, 23)).astype(dt)
            elif dt.kind == "b":
                a = rng.integers(0, 2, size=(37, 23)).astype(dt)
            else:
                info = np.iinfo(dt)
                a = rng.integers(info.min, min(int(info.max), 2**62), size=(37, 23), dtype=np.int64 if info.min < 0 else np.uint64).astype(dt)
            name = "%s%s%s" % ({"<": "le", ">": "be"}[bo], code, order)
            np.save(os.path.join(sys.argv[1], name + ".npy"), np.asarray(a, order=order))
`
	if out, err := exec.Command(py, "-c", gen, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v: %s", err, out)
	}
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	files, _ := filepath.Glob(filepath.Join(dir, "*.npy"))
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".npy")
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.Create(s+"/tensors", name+".npy")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(raw); err != nil {
			t.Fatalf("upload %s: %v (error %q)", name, err, read(t, c, s+"/error"))
		}
		if err := f.Close(); err != nil {
			t.Fatalf("upload %s: %v (error %q)", name, err, read(t, c, s+"/error"))
		}
		back, err := c.ReadFile(s + "/tensors/" + name + "/npy")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".back"), back, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const check = `
import sys, os, glob
import numpy as np
held = {"b1": "bool", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
        "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "f2": "float16", "f4": "float32", "f8": "float64"}
bad = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.npy"))):
    name = os.path.basename(f)[:-4]
    a = np.load(f)
    b = np.load(os.path.join(sys.argv[1], name + ".back"))
    want = a.astype(held[name[2:4]])
    if b.dtype != want.dtype or b.shape != want.shape or not np.array_equal(b, want):
        bad.append(name)
print(len(glob.glob(os.path.join(sys.argv[1], "*.npy"))), " ".join(bad))
`
	out, err := exec.Command(py, "-c", check, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy check: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "48" {
		t.Errorf("NumPy found these uploads read back wrong (count, names): %s", got)
	}
}
