package fs

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/hugelgupf/p9/p9"
)

// arrowValues decodes an arrow file: the shape and dtype of its metadata,
// the rows of each batch, and every element as float64 in C order.
func arrowValues(t *testing.T, b []byte, name string) (shape, dtype string, rows []int64, vals []float64) {
	t.Helper()
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("ipc.NewReader: %v", err)
	}
	defer r.Release()
	s := r.Schema()
	if s.NumFields() != 1 || s.Field(0).Name != name {
		t.Fatalf("schema %v, want one column %q", s, name)
	}
	md := s.Metadata()
	shape, dtype = md.Values()[md.FindKey("shape")], md.Values()[md.FindKey("dtype")]
	for r.Next() {
		rec := r.RecordBatch()
		rows = append(rows, rec.NumRows())
		col := rec.Column(0)
		if l, ok := col.(*array.FixedSizeList); ok {
			col = l.ListValues()
		}
		switch c := col.(type) {
		case *array.Float64:
			for _, v := range c.Float64Values() {
				vals = append(vals, v)
			}
		case *array.Int64:
			for _, v := range c.Int64Values() {
				vals = append(vals, float64(v))
			}
		case *array.Boolean:
			for i := range c.Len() {
				vals = append(vals, map[bool]float64{true: 1}[c.Value(i)])
			}
		default:
			t.Fatalf("column of %T", col)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("reading batches: %v", err)
	}
	return shape, dtype, rows, vals
}

// dataValues decodes a data file of the given dtype as float64s.
func dataValues(b []byte, dtype string) []float64 {
	var out []float64
	switch dtype {
	case "float64":
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
		}
	case "int64":
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, float64(int64(binary.LittleEndian.Uint64(b[i:]))))
		}
	case "bool":
		for _, v := range b {
			out = append(out, float64(v))
		}
	}
	return out
}

func TestArrowFile(t *testing.T) {
	needParser(t)
	ts := startServer(t, Config{})
	c := dial(t, ts.sock)
	s := clone(t, c)
	submit(t, c, s, `a = arange(10, chunks=3) * 1.5
b = arange(24, chunks=5).reshape(4, 6)
m = ones((5, 2, 3), chunks=(2, 1, 3))
p = arange(7, chunks=3) > 2
z = arange(5).sum()
fetch a, b, m, p, z
`)
	waitSucceeded(t, c, s, "last")
	for _, tc := range []struct {
		name, shape, dtype string
		nrows              int64 // the first axis, 1 for 0-d
		rows               []int64
	}{
		{"a", "(10,)", "float64", 10, []int64{3, 3, 3, 1}},
		{"b", "(4, 6)", "int64", 4, nil},
		{"m", "(5, 2, 3)", "float64", 5, []int64{2, 2, 1}},
		{"p", "(7,)", "bool", 7, []int64{3, 3, 1}},
		{"z", "()", "int64", 1, []int64{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := s + "/tensors/" + tc.name
			shape, dtype, rows, vals := arrowValues(t, []byte(read(t, c, dir+"/arrow")), tc.name)
			if shape != tc.shape || dtype != tc.dtype {
				t.Errorf("metadata shape %s dtype %s, want %s %s", shape, dtype, tc.shape, tc.dtype)
			}
			if tc.rows != nil && !equal(rows, tc.rows) {
				t.Errorf("batches of %v rows, want %v", rows, tc.rows)
			}
			var total int64
			for _, r := range rows {
				total += r
			}
			if want := dataValues([]byte(read(t, c, dir+"/data")), tc.dtype); !equal(vals, want) {
				t.Errorf("values %v, want %v", vals, want)
			}
			if total != tc.nrows {
				t.Errorf("%d rows, want %d", total, tc.nrows)
			}
		})
	}
	// Reads in small pieces, and going back, give the same stream.
	whole := []byte(read(t, c, s+"/tensors/m/arrow"))
	f, err := c.Open(s+"/tensors/m/arrow", p9.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, step := range []int{7, 100} {
		var got []byte
		buf := make([]byte, step)
		for off := int64(0); ; off += int64(step) {
			n, _ := f.ReadAt(buf, off)
			if n == 0 {
				break
			}
			got = append(got, buf[:n]...)
		}
		if !bytes.Equal(got, whole) {
			t.Errorf("read by %d bytes: %d bytes differing from the %d of one read", step, len(got), len(whole))
		}
	}
}
