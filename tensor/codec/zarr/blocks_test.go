package zarr

import (
	"bytes"
	"encoding/binary"
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
	saved := useShuffleAVX2
	defer func() { useShuffleAVX2 = saved }()
	for _, vec := range []bool{false, saved} {
		useShuffleAVX2 = vec
		testDecodeBlocks(t)
	}
}

func testDecodeBlocks(t *testing.T) {
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
					for _, frame := range [][]byte{enc, reversedBlocks(enc)} {
						for _, at := range []int{0, 1, 128, 16 << 10} {
							got := make([]byte, len(src))
							next := 0
							visit := func(off int, piece []byte) error {
								if off != next || off%dt.Size() != 0 || len(piece)%dt.Size() != 0 {
									t.Fatalf("%v %s shuffle %d %v at %v: a piece of %d bytes at %d, after %d", dt, cname, shuffle, chunks, at, len(piece), off, next)
								}
								next = off + copy(got[off:], piece)
								return nil
							}
							var ok bool
							var err error
							switch at {
							case 0:
								ok, err = a.DecodeBlocks(frame, visit)
							case 1:
								ok, err = a.DecodeBlocksAt(bytes.NewReader(frame), int64(len(frame)), visit)
							default:
								ok, err = a.DecodePiecesAt(bytes.NewReader(frame), int64(len(frame)), at, visit)
							}
							if !ok || err != nil || next != len(src) || !bytes.Equal(got, src) {
								t.Fatalf("%v %s shuffle %d %v at %v: ok %v, %v, %d of %d bytes, equal %v", dt, cname, shuffle, chunks, at, ok, err, next, len(src), bytes.Equal(got, src))
							}
						}
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
	calls = 0
	if _, err := a.DecodeBlocksAt(bytes.NewReader(enc), int64(len(enc)), func(int, []byte) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("a visitor's error, read at: %v after %d calls", err, calls)
	}
	calls = 0
	if _, err := a.DecodePiecesAt(bytes.NewReader(enc), int64(len(enc)), 1024, func(int, []byte) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("a visitor's error, in pieces: %v after %d calls", err, calls)
	}
	if _, err := a.DecodePiecesAt(bytes.NewReader(enc), int64(len(enc)), 100, func(int, []byte) error { t.Fatal("visited"); return nil }); err == nil {
		t.Errorf("pieces of 100 bytes taken")
	}
	if _, err := a.DecodeBlocks(enc[:20], func(int, []byte) error { return nil }); err == nil {
		t.Errorf("a cut frame decoded")
	}
	for _, n := range []int{0, 10, 20, len(enc) / 2, len(enc) - 1} {
		if _, err := a.DecodeBlocksAt(bytes.NewReader(enc[:n]), int64(n), func(int, []byte) error { return nil }); err == nil {
			t.Errorf("a frame cut to %d bytes decoded, read at", n)
		}
	}
	// Block offsets outside the frame, or overlapping the header.
	bad := bytes.Clone(enc)
	bad[bloscHeader] = 3
	if _, err := a.DecodeBlocksAt(bytes.NewReader(bad), int64(len(bad)), func(int, []byte) error { return nil }); err == nil {
		t.Errorf("a block at offset 3 decoded, read at")
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

// reversedBlocks returns the blosc frame enc with its blocks stored in
// the opposite order, their offsets saying where each is (c-blosc's
// threads store blocks as they finish); a frame of one block, or copied
// whole, is returned as it is.
func reversedBlocks(enc []byte) []byte {
	f, err := parseBloscHeader(enc)
	if err != nil || f.flags&bloscMemcpyed != 0 || f.nbytes == 0 {
		return enc
	}
	nb := (f.nbytes + f.blocksize - 1) / f.blocksize
	if nb < 2 {
		return enc
	}
	start := func(b int) int { return int(binary.LittleEndian.Uint32(enc[bloscHeader+4*b:])) }
	out := bytes.Clone(enc[:bloscHeader+4*nb])
	for b := nb - 1; b >= 0; b-- {
		end := f.cbytes
		if b+1 < nb {
			end = start(b + 1)
		}
		binary.LittleEndian.PutUint32(out[bloscHeader+4*b:], uint32(len(out)))
		out = append(out, enc[start(b):end]...)
	}
	return out
}
