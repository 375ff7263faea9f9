package zarr

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"marsfs/tensor"
)

// testData returns n bytes that compress some: a noisy ramp of typesize
// elements, and a run of zeros.
func testData(n, typesize int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := 0; i+typesize <= n/2; i += typesize {
		binary.LittleEndian.PutUint32(b[i:], uint32(i/typesize)+uint32(r.IntN(4)))
	}
	return b
}

var allCodecs = []Codec{
	{ID: "zlib", Level: 1}, {ID: "gzip", Level: 5}, {ID: "zstd", Level: 1}, {ID: "zstd", Level: 9}, {ID: "lz4"},
	{ID: "blosc", Cname: "lz4", Level: 5, Shuffle: 1, Typesize: 8}, {ID: "blosc", Cname: "zstd", Level: 3, Shuffle: 2, Typesize: 4},
	{ID: "blosc", Cname: "zlib", Level: 5, Shuffle: 0, Typesize: 1}, {ID: "blosc", Cname: "lz4", Shuffle: 2, Typesize: 2},
	{ID: "crc32c"},
}

// TestCodecRoundTrip encodes and decodes data of several sizes (empty, a
// few bytes, not a multiple of the element, several blosc blocks, and
// random noise that does not compress) through every codec.
func TestCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	noise := make([]byte, 300_001)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	for _, c := range allCodecs {
		for _, n := range []int{0, 1, 7, 64, 1000, 4099, 600_008} {
			for _, src := range [][]byte{testData(n, 4, uint64(n)), noise[:min(n, len(noise))]} {
				enc, err := c.encode(src)
				if err != nil {
					t.Fatalf("%+v: encode %d bytes: %v", c, n, err)
				}
				dst := make([]byte, len(src))
				if err := c.decodeInto(dst, enc); err != nil {
					t.Fatalf("%+v: decode %d bytes: %v", c, n, err)
				}
				if !bytes.Equal(dst, src) {
					t.Fatalf("%+v: %d bytes differ after a round trip", c, n)
				}
				if got, err := c.decode(enc, len(src)); err != nil || !bytes.Equal(got, src) {
					t.Fatalf("%+v: decode of unknown size, %d bytes: %v", c, n, err)
				}
			}
		}
	}
}

// TestShuffles checks the byte and bit shuffles against their
// definitions on a small case, and that each undoes the other.
func TestShuffles(t *testing.T) {
	src := []byte{1, 2, 3, 4, 5, 6, 7} // two elements of 3, one byte over
	dst := make([]byte, len(src))
	shuffleBytes(dst, src, 3)
	if want := []byte{1, 4, 2, 5, 3, 6, 7}; !bytes.Equal(dst, want) {
		t.Errorf("shuffle: %v, want %v", dst, want)
	}
	// Eight 2-byte elements: element i = i<<8 | 1. Bit plane (byte 0, bit
	// 0) is all ones; (byte 1, bit b) holds bit b of each i.
	e := make([]byte, 16)
	for i := range 8 {
		binary.LittleEndian.PutUint16(e[2*i:], uint16(i)<<8|1)
	}
	bs := make([]byte, 16)
	bitshuffle(bs, e, make([]byte, 16), 2)
	want := []byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0xaa, 0xcc, 0xf0, 0, 0, 0, 0, 0}
	if !bytes.Equal(bs, want) {
		t.Errorf("bitshuffle: % x, want % x", bs, want)
	}
	for _, ts := range []int{1, 2, 4, 8, 3} {
		for _, n := range []int{0, 5, 64, 1003, 4096} {
			src := testData(n, ts, 3)
			a, b := make([]byte, n), make([]byte, n)
			shuffleBytes(a, src, ts)
			unshuffle(b, a, ts)
			if !bytes.Equal(b, src) {
				t.Errorf("unshuffle(shuffle) typesize %d, %d bytes", ts, n)
			}
			bitshuffle(a, src, make([]byte, n), ts)
			bitunshuffle(b, a, make([]byte, n), ts)
			if !bytes.Equal(b, src) {
				t.Errorf("bitunshuffle(bitshuffle) typesize %d, %d bytes", ts, n)
			}
		}
	}
}

// TestBlosclz decodes streams written by hand: literals, a match, a run
// (a match one byte back), and refuses streams that point outside.
func TestBlosclz(t *testing.T) {
	for _, tc := range []struct {
		src  []byte
		want string
		err  string
	}{
		{[]byte{2, 'a', 'b', 'c'}, "abc", ""},
		// "abc", then a match of 3+1 bytes 3 back, then literal "x".
		{[]byte{2, 'a', 'b', 'c', 2<<5 | 0, 2, 0, 'x'}, "abcabcax", ""},
		// "a", then a run of 3+2 bytes of it, then "b".
		{[]byte{0, 'a', 3<<5 | 0, 0, 0, 'b'}, "aaaaaab", ""},
		{[]byte{0, 'a', 3<<5 | 0, 9, 0, 'b'}, "", "back"},
		{[]byte{5, 'a'}, "", "overflows"},
		{[]byte{0, 'a', 7<<5 | 0, 255, 255}, "", "past the end"},
	} {
		dst := make([]byte, max(len(tc.want), 8))
		n, err := blosclzDecode(dst, tc.src)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("% x: %v, want an error with %q", tc.src, err, tc.err)
		case tc.err == "" && (err != nil || string(dst[:n]) != tc.want):
			t.Errorf("% x: %q %v, want %q", tc.src, dst[:n], err, tc.want)
		}
	}
}

// TestCorrupt hands every decoder damaged input: cut short, a byte
// flipped at each place, header fields out of range. Each must return an
// error that names what is wrong, or (for flips inside compressed data
// without a checksum) wrong bytes, never panic.
func TestCorrupt(t *testing.T) {
	src := testData(70_000, 8, 9)
	for _, c := range allCodecs {
		enc, err := c.encode(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(src))
		for _, cut := range []int{0, 1, 3, 15, 17, len(enc) / 2, len(enc) - 1} {
			if cut < len(enc) {
				if err := c.decodeInto(dst, enc[:cut]); err == nil && c.ID != "crc32c" {
					t.Errorf("%+v: %d of %d bytes decoded without an error", c, cut, len(enc))
				}
			}
		}
		for i := 0; i < len(enc); i += 1 + len(enc)/200 {
			bad := bytes.Clone(enc)
			bad[i] ^= 0x5a
			c.decodeInto(dst, bad)
			c.decode(bad, len(src))
		}
		if err := c.decodeInto(make([]byte, len(src)+1), enc); err == nil && c.ID != "crc32c" {
			t.Errorf("%+v: decoded into a chunk of the wrong size", c)
		}
	}
	frame, _ := bloscEncode(nil, src, "lz4", 5, 1, 8)
	for _, tc := range []struct {
		at   int
		val  uint32
		want string
	}{
		{0, 9, "format version 9"},
		{12, 1 << 30, "the header says"},
		{8, 0, "blocksize 0"},
		{16, 3, "outside the frame"},
		{4, 70_001, "holds 70001 bytes"},
	} {
		bad := bytes.Clone(frame)
		if tc.at == 0 {
			bad[0] = byte(tc.val)
		} else {
			binary.LittleEndian.PutUint32(bad[tc.at:], tc.val)
		}
		err := bloscDecode(make([]byte, len(src)), bad)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("blosc header field at %d = %d: %v, want %q", tc.at, tc.val, err, tc.want)
		}
	}
}

// TestDecodeArray checks an Array's chunk pipeline: a transposed,
// big-endian chunk with two codecs decodes to the C-order native
// elements it was encoded from.
func TestDecodeArray(t *testing.T) {
	a := &Array{Format: 3, Shape: []int{5, 7, 3}, Chunks: []int{2, 7, 3}, DType: tensor.Int32, BigEndian: true,
		Perm: []int{2, 0, 1}, Fill: make([]byte, 4), Prefix: "c", Separator: "/",
		Codecs: []Codec{{ID: "zstd", Level: 1}, {ID: "crc32c"}}}
	chunk := make([]byte, a.ChunkBytes())
	for i := range a.ChunkBytes() / 4 {
		binary.LittleEndian.PutUint32(chunk[4*i:], uint32(i*7+1))
	}
	enc, err := a.Encode(chunk)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(chunk))
	var scratch []byte
	if err := a.Decode(got, enc, &scratch); err != nil || !bytes.Equal(got, chunk) {
		t.Fatalf("decode: %v, equal %v", err, bytes.Equal(got, chunk))
	}
	if k := a.Key([]int{1, 0, 2}); k != "c/1/0/2" {
		t.Errorf("key %q", k)
	}
	meta, err := a.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	back, err := parseV3(meta)
	if err != nil {
		t.Fatalf("%v\n%s", err, meta)
	}
	if back.BigEndian != a.BigEndian || len(back.Codecs) != 2 || back.Key([]int{1, 0, 2}) != "c/1/0/2" {
		t.Errorf("metadata round trip: %+v\n%s", back, meta)
	}
	if err := back.Decode(got, enc, nil); err != nil || !bytes.Equal(got, chunk) {
		t.Errorf("decode after a metadata round trip: %v", err)
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder: none may panic or
// allocate past the bound of a chunk.
func FuzzDecode(f *testing.F) {
	src := testData(5000, 4, 1)
	for _, c := range allCodecs {
		enc, _ := c.encode(src)
		f.Add(enc)
	}
	f.Add([]byte{2, 1, 0x21, 4, 0, 1, 0, 0, 0, 1, 0, 0, 32, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		dst := make([]byte, 5000)
		for _, c := range allCodecs {
			c.decodeInto(dst, b)
			c.decode(b, len(dst))
		}
		blosclzDecode(dst, b)
	})
}
