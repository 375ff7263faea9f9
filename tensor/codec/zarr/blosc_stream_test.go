package zarr

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
)

// TestChunkEncoder checks that a chunk handed to a ChunkEncoder in pieces
// of every size (empty, one byte, ragged, a block and more, the chunk
// whole) makes Encode's frame to the byte, for each inner codec, shuffle
// and element size and chunks that end in a short block; that a chunk
// that does not compress says ErrNotStreamed; and that arrays it cannot
// encode so are declined. A frame Encode stores copied must say
// ErrNotStreamed.
func TestChunkEncoder(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 9))
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int16, tensor.Uint8} {
		for _, cname := range []string{"lz4", "blosclz", "zstd"} {
			level := 5
			if cname == "zstd" {
				level = 1 // the frame's layout is the level's; zstd's time is not this test's
			}
			for shuffle := range 3 {
				for _, chunks := range [][]int{{24, 181, 36}, {3, 100}, {1, 70001}, {2, 90001}} {
					a := &Array{Format: 2, Shape: chunks, Chunks: chunks, DType: dt, Fill: make([]byte, dt.Size()),
						Codecs: []Codec{{ID: "blosc", Cname: cname, Level: level, Shuffle: shuffle}}}
					src := climateLike(a.ChunkBytes(), dt.Size(), uint64(len(chunks)*shuffle+1))
					if dt == tensor.Float32 {
						v := tensor.View[float32](src)
						for i := 0; i < len(v); i += 37 {
							v[i] = float32(math.NaN())
						}
					}
					want, err := a.Encode(src)
					if err != nil {
						t.Fatal(err)
					}
					pieces := []int{0, 4093, 1<<16 + 12, len(src)}
					if len(src) < 4096 {
						pieces = append(pieces, 1) // a byte at a time
					}
					for _, piece := range pieces {
						w, ok := a.ChunkEncoder(make([]byte, 0, 16))
						if !ok {
							t.Fatalf("%v %s shuffle %d %v: declined", dt, cname, shuffle, chunks)
						}
						for p := src; len(p) > 0; {
							n := min(len(p), piece)
							if piece == 0 {
								n = min(len(p), r.IntN(3*(1<<18))) // ragged, empty ones among them
							}
							if err := w.Write(p[:n]); err != nil {
								t.Fatal(err)
							}
							p = p[n:]
						}
						got, err := w.Finish()
						if want[2]&bloscMemcpyed != 0 && errors.Is(err, ErrNotStreamed) {
							continue // stored copied: Encode's to make
						}
						if err != nil || !bytes.Equal(got, want) {
							t.Fatalf("%v %s shuffle %d %v, pieces of %d: %v, %d bytes, Encode's %d, equal %v", dt, cname, shuffle, chunks, piece, err, len(got), len(want), bytes.Equal(got, want))
						}
					}
				}
			}
		}
	}
	f4 := func(chunks []int, level int) *Array {
		return &Array{Format: 2, Shape: chunks, Chunks: chunks, DType: tensor.Float32, Fill: make([]byte, 4),
			Codecs: []Codec{{ID: "blosc", Cname: "lz4", Level: level, Shuffle: 1}}}
	}
	// Noise does not compress: c-blosc stores it copied, which the
	// pieces cannot make.
	a := f4([]int{1 << 18}, 5)
	noise := make([]byte, a.ChunkBytes())
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	w, ok := a.ChunkEncoder(nil)
	if !ok {
		t.Fatal("declined")
	}
	if err := w.Write(noise); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); !errors.Is(err, ErrNotStreamed) {
		t.Fatalf("noise: %v, want ErrNotStreamed", err)
	}
	// Too many bytes, too few, and after Finish.
	w, _ = a.ChunkEncoder(nil)
	if err := w.Write(make([]byte, a.ChunkBytes()+1)); err == nil {
		t.Fatal("a chunk and a byte written")
	}
	if _, err := w.Finish(); err == nil {
		t.Fatal("finished with nothing written")
	}
	if err := w.Write([]byte{1}); err == nil {
		t.Fatal("written after Finish")
	}
	for _, b := range []*Array{f4([]int{16}, 5), f4([]int{4096}, 0),
		{Format: 2, Shape: []int{4096}, Chunks: []int{4096}, DType: tensor.Float32, Fill: make([]byte, 4), Codecs: []Codec{{ID: "zstd", Level: 1}}}} {
		if _, ok := b.ChunkEncoder(nil); ok {
			t.Fatalf("%v %v: not declined", b.Chunks, b.Codecs)
		}
	}
}
