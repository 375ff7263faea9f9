package shm

import (
	"fmt"
	"strconv"
	"testing"
	"unsafe"

	"marsfs/tensor"
)

// sum reads every byte of b, eight at a time.
func sum(b []byte) uint64 {
	w := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
	var s uint64
	for _, x := range w {
		s += x
	}
	return s
}

// BenchmarkMapRead maps a sealed chunk read-only through a second mapping
// (as a co-located reader does) and reads all of it; the bytes per second
// include mapping and page-table faults.
func BenchmarkMapRead(b *testing.B) {
	for _, size := range []int64{64 << 20, 1 << 30} {
		b.Run(FormatBytes(size), func(b *testing.B) {
			s := openTest(b, 2*size, -1)
			w, err := s.Create(1, tensor.Float64, []int{int(size / 8)})
			if err != nil {
				b.Fatal(err)
			}
			buf := w.Data
			for i := range buf {
				buf[i] = byte(i)
			}
			w.Seal()
			r, _ := OpenReader(s.Dir())
			want := sum(buf)
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				m, err := r.MapChunk("1")
				if err != nil {
					b.Fatal(err)
				}
				if sum(m.Data) != want {
					b.Fatal("wrong sum")
				}
				m.Close()
			}
		})
	}
}

// BenchmarkViewRead reads a chunk through the store's own mapping, already
// faulted in: the ceiling for BenchmarkMapRead.
func BenchmarkViewRead(b *testing.B) {
	const size = 64 << 20
	s := openTest(b, 2*size, -1)
	if err := s.Put(1, tensor.NewArray(tensor.Float64, []int{size / 8})); err != nil {
		b.Fatal(err)
	}
	v, _ := s.Get(1)
	defer v.Release()
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		sum(v.Data)
	}
}

// BenchmarkCreateFill creates a chunk, writes every byte, seals and deletes
// it: with fresh pages (no free list), every page is faulted in and zeroed by
// the kernel; with reuse, a freed segment is cleared and refilled.
func BenchmarkCreateFill(b *testing.B) {
	const size = 64 << 20
	for _, c := range []struct {
		name     string
		keepFree int64
	}{{"fresh", -1}, {"reuse", 2 * size}} {
		b.Run(c.name, func(b *testing.B) {
			s := openTest(b, 4*size, c.keepFree)
			b.SetBytes(size)
			for i := range b.N {
				id := uint64(i)
				buf, err := s.Create(id, tensor.Float64, []int{size / 8})
				if err != nil {
					b.Fatal(err)
				}
				w := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(buf.Data))), len(buf.Data)/8)
				for j := range w {
					w[j] = uint64(j)
				}
				buf.Seal()
				s.Delete(id)
			}
		})
	}
}

// BenchmarkSpillReload spills a chunk to disk and brings it back.
func BenchmarkSpillReload(b *testing.B) {
	const size = 64 << 20
	for _, first := range []bool{true, false} {
		b.Run("rewrite="+strconv.FormatBool(first), func(b *testing.B) {
			s := openTest(b, 2*size, -1)
			a := tensor.NewArray(tensor.Float64, []int{size / 8})
			if err := s.Put(0, a); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(2 * size)
			b.ResetTimer()
			for i := range b.N {
				id := uint64(0)
				if first {
					// A new chunk every time: the spill file is written.
					id = uint64(i + 1)
					s.Delete(uint64(i))
					if err := s.Put(id, a); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Spill(id); err != nil {
					b.Fatal(err)
				}
				v, err := s.Get(id)
				if err != nil {
					b.Fatal(err)
				}
				v.Release()
			}
		})
	}
}

func ExampleStore() {
	s, err := Open(Options{Limit: 1 << 20, Name: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	buf, _ := s.Create(7, tensor.Int32, []int{4})
	a := &tensor.Array{DType: tensor.Int32, Shape: []int{4}, Data: buf.Data}
	for i := range a.Int32s() {
		a.Int32s()[i] = int32(i * i) // the kernel writes into shared memory
	}
	buf.Seal()
	v, _ := s.Get(7)
	defer v.Release()
	fmt.Println(v.Array().Int32s())
	// Output: [0 1 4 9]
}
