package fs

import (
	"encoding/binary"
	"math"
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
// chunks, each sent on as its bytes arrive, in C and Fortran order and in
// dtypes the kernels hold converted, and reads them back.
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
		converted   string
		want        func(data []byte, i int) bool
	}{
		{"f8", "<f8", false, []int{5000000}, 8,
			func(d []byte, i int) { binary.LittleEndian.PutUint64(d, math.Float64bits(float64(i))) },
			"float64", "",
			func(d []byte, i int) bool {
				return math.Float64frombits(binary.LittleEndian.Uint64(d[8*i:])) == float64(i)
			}},
		{"u2", ">u2", true, []int{3000, 2000}, 2,
			func(d []byte, i int) { binary.BigEndian.PutUint16(d, uint16(i*7)) },
			"int32", "uint16",
			func(d []byte, i int) bool { return int32(binary.LittleEndian.Uint32(d[4*i:])) == int32(uint16(i*7)) }},
		{"i1", "|i1", false, []int{6, 7}, 1,
			func(d []byte, i int) { d[0] = byte(int8(i - 20)) },
			"int32", "int8",
			func(d []byte, i int) bool { return int32(binary.LittleEndian.Uint32(d[4*i:])) == int32(i-20) }},
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
			if !strings.Contains(meta, "dtype "+tc.dtype+"\n") || !strings.Contains(meta, "graph upload\n") ||
				(tc.converted != "") != strings.Contains(meta, "converted_from "+tc.converted+"\n") {
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
