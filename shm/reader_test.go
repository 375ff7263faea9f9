package shm

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"marsfs/tensor"
)

// TestReaderSharesPages checks that a co-located reader's mapping is the
// store's pages, not a copy: a write to the segment file shows through both
// the store's view and the reader's mapping.
func TestReaderSharesPages(t *testing.T) {
	s := openTest(t, 1<<20, -1)
	a := pattern(42, 3, 1000)
	if err := s.Put(42, a); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.MapChunk("42")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.ID != 42 || m.DType != tensor.Float64 || len(m.Shape) != 2 || m.Shape[0] != 3 || m.Shape[1] != 1000 ||
		!bytes.Equal(m.Data, a.Data) || m.Array().Check() != nil {
		t.Fatalf("mapped %d %v%v", m.ID, m.DType, m.Shape)
	}
	v, err := s.Get(42)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Release()
	if unsafe.SliceData(v.Data) == unsafe.SliceData(m.Data) {
		t.Fatal("the reader got the store's own mapping, not one of its own")
	}
	path, _ := s.Path(42)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := int64(dataOffset(2)) + 5
	if _, err := f.WriteAt([]byte{0xAB}, off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if v.Data[5] != 0xAB || m.Data[5] != 0xAB {
		t.Fatalf("write through the file not seen: store %x reader %x", v.Data[5], m.Data[5])
	}
	// Both mappings name the segment in /proc/self/maps.
	if n := len(mappingsOf(t, s.Dir())); n < 2 {
		t.Fatalf("%d mappings of the segment, want the store's and the reader's", n)
	}
	// The reader's mapping outlives a spill and a delete of the chunk.
	s.Spill(42)
	s.Delete(42)
	if m.Data[5] != 0xAB || m.Data[6] != a.Data[6] {
		t.Fatal("reader's mapping changed by spill and delete")
	}
}

func TestReaderRefuses(t *testing.T) {
	s := openTest(t, 1<<20, -1)
	r, err := OpenReader(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Create(1, tensor.Int32, []int{4})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"1", "2", "../x", "", ".."} {
		if _, err := r.MapChunk(name); err == nil {
			t.Errorf("MapChunk(%q) succeeded", name)
		}
	}
	w.Seal()
	if m, err := r.MapChunk("1"); err != nil {
		t.Fatal(err)
	} else {
		m.Close()
		m.Close()
	}
	if _, err := OpenReader(filepath.Join(s.Dir(), "1")); err == nil {
		t.Fatal("OpenReader of a file succeeded")
	}
}

// TestParseHeader checks that corrupt headers are refused with an error.
func TestParseHeader(t *testing.T) {
	good := make([]byte, 128+24)
	putHeader(good, 9, tensor.Int64, []int{3}, 24, true)
	if h, err := parseHeader(good, int64(len(good))); err != nil || h.id != 9 || h.n != 24 || h.off != 64 {
		t.Fatalf("good header: %+v, %v", h, err)
	}
	for i, mutate := range []func(b []byte) int64{
		func(b []byte) int64 { b[0] = 'X'; return int64(len(b)) },
		func(b []byte) int64 { b[12] = 0; return int64(len(b)) },
		func(b []byte) int64 { binary.LittleEndian.PutUint16(b[14:], 1000); return int64(len(b)) },
		func(b []byte) int64 { binary.LittleEndian.PutUint64(b[24:], 1<<62); return int64(len(b)) },
		func(b []byte) int64 { binary.LittleEndian.PutUint64(b[32:], 128); return int64(len(b)) },
		func(b []byte) int64 { binary.LittleEndian.PutUint64(b[40:], 4); return int64(len(b)) },
		func(b []byte) int64 { binary.LittleEndian.PutUint64(b[40:], 1<<63); return int64(len(b)) },
		func(b []byte) int64 { return 80 },
	} {
		b := bytes.Clone(good)
		size := mutate(b)
		if _, err := parseHeader(b, size); err == nil {
			t.Errorf("mutation %d accepted", i)
		}
	}
	// A file that is not a segment.
	dir := t.TempDir()
	for i, content := range []string{"", "short", strings.Repeat("x", 100)} {
		p := filepath.Join(dir, strconv.Itoa(i))
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := MapChunk(p); err == nil {
			t.Errorf("MapChunk of %q succeeded", content)
		}
	}
}
