package zarr

import (
	"bytes"
	"errors"
	"testing"

	"marsfs/tensor"
)

// TestDecodeBlocks checks that the pieces DecodeBlocks hands over, put
// at their offsets, are the chunk Decode makes, in order and element-
// aligned, for each shuffle, inner codec, element size and a chunk that
// is not a multiple of the block (or small enough to be copied whole);
// that it declines, visiting nothing, what it cannot decode so; and that
// a visitor's error stops it.
func TestDecodeBlocks(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int16, tensor.Uint8} {
		for _, cname := range []string{"lz4", "blosclz", "zstd"} {
			for shuffle := range 3 {
				for _, chunks := range [][]int{{24, 181, 36}, {3, 100}, {7}, {1, 70001}} {
					a := &Array{Format: 2, Shape: chunks, Chunks: chunks, DType: dt, Fill: make([]byte, dt.Size()),
						Codecs: []Codec{{ID: "blosc", Cname: cname, Level: 5, Shuffle: shuffle, Typesize: dt.Size()}}}
					src := climateLike(a.ChunkBytes(), dt.Size(), uint64(len(chunks)*shuffle+1))
					enc, err := a.Encode(src)
					if err != nil {
						t.Fatal(err)
					}
					got := make([]byte, len(src))
					next := 0
					ok, err := a.DecodeBlocks(enc, func(off int, piece []byte) error {
						if off != next || off%dt.Size() != 0 || len(piece)%dt.Size() != 0 {
							t.Fatalf("%v %s shuffle %d %v: a piece of %d bytes at %d, after %d", dt, cname, shuffle, chunks, len(piece), off, next)
						}
						next = off + copy(got[off:], piece)
						return nil
					})
					if !ok || err != nil || next != len(src) || !bytes.Equal(got, src) {
						t.Fatalf("%v %s shuffle %d %v: ok %v, %v, %d of %d bytes, equal %v", dt, cname, shuffle, chunks, ok, err, next, len(src), bytes.Equal(got, src))
					}
				}
			}
		}
	}
	a := &Array{Format: 2, Shape: []int{4096}, Chunks: []int{4096}, DType: tensor.Float32, Fill: make([]byte, 4),
		Codecs: []Codec{{ID: "blosc", Cname: "lz4", Level: 5, Shuffle: 1, Typesize: 4}}}
	enc, err := a.Encode(climateLike(a.ChunkBytes(), 4, 9))
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	calls := 0
	if _, err := a.DecodeBlocks(enc, func(int, []byte) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("a visitor's error: %v after %d calls", err, calls)
	}
	if _, err := a.DecodeBlocks(enc[:20], func(int, []byte) error { return nil }); err == nil {
		t.Errorf("a cut frame decoded")
	}
	for _, b := range []*Array{
		{Format: 2, Shape: []int{4096}, Chunks: []int{4096}, DType: tensor.Float32, Codecs: []Codec{{ID: "zstd", Level: 1}}},
		{Format: 2, Shape: []int{4096}, Chunks: []int{4096}, DType: tensor.Float32, BigEndian: true, Codecs: a.Codecs},
		{Format: 2, Shape: []int{64, 64}, Chunks: []int{64, 64}, DType: tensor.Float32, Perm: []int{1, 0}, Codecs: a.Codecs},
		{Format: 2, Shape: []int{4096}, Chunks: []int{4096}, DType: tensor.Float32},
	} {
		if ok, err := b.DecodeBlocks(enc, func(int, []byte) error { t.Fatal("visited"); return nil }); ok || err != nil {
			t.Errorf("%+v: ok %v, %v, want declined", b, ok, err)
		}
	}
	// A frame whose blocks split the elements: typesize 3 over int16s.
	odd, err := bloscEncode(nil, climateLike(3*1000, 3, 1), "lz4", 5, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := bloscBlocks(odd, 3000, 2, func(int, []byte) error { return nil }); ok && len(odd) > bloscHeader && odd[2]&bloscMemcpyed == 0 {
		blocksize := int(odd[8]) | int(odd[9])<<8 | int(odd[10])<<16
		if blocksize%2 != 0 {
			t.Errorf("blocks of %d bytes taken for 2-byte elements", blocksize)
		}
	}
}
