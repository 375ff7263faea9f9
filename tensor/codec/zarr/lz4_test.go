package zarr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/pierrec/lz4/v4"
)

// lz4Inputs are blocks that exercise every path of the decoder: empty
// and tiny, noise (long literal runs), runs of one byte, patterns of
// every distance 2-20 (the overlapping copies), text-like data, and
// shuffled float32s as blosc hands lz4 its streams.
func lz4Inputs() [][]byte {
	r := rand.New(rand.NewPCG(4, 4))
	var ins [][]byte
	for _, n := range []int{0, 1, 5, 12, 13, 16, 17, 31, 64, 100, 1000, 65536, 70001} {
		noise := make([]byte, n)
		for i := range noise {
			noise[i] = byte(r.Uint32())
		}
		ins = append(ins, noise, bytes.Repeat([]byte{7}, n))
	}
	for d := 2; d <= 20; d++ {
		b := make([]byte, 3000+d)
		for i := range b {
			b[i] = byte(i%d) * 3
		}
		for i := 0; i < len(b); i += 97 {
			b[i] = byte(r.Uint32()) // breaks the runs now and then
		}
		ins = append(ins, b)
	}
	var text []byte
	words := []string{"chunk ", "zarr ", "blosc ", "float32 ", "the ", "of ", "marsfs "}
	for len(text) < 50000 {
		text = append(text, words[r.IntN(len(words))]...)
	}
	ins = append(ins, text)
	floats := testData(200_000, 4, 3)
	shuf := make([]byte, len(floats))
	shuffleBytes(shuf, floats, 4)
	return append(ins, shuf, floats)
}

// TestLZ4RoundTrip compresses each input at several accelerations and
// decodes it with the assembly decoder (where there is one), the Go one
// and pierrec/lz4's, an implementation of liblz4's format written apart;
// and decodes pierrec/lz4's blocks of the same inputs.
func TestLZ4RoundTrip(t *testing.T) {
	var table lz4Table
	for i, in := range lz4Inputs() {
		for _, accel := range []int{1, 2, 5, 9} {
			enc := lz4Compress(nil, in, accel, &table)
			got := make([]byte, len(in))
			if err := lz4Block(got, enc); err != nil || !bytes.Equal(got, in) {
				t.Fatalf("input %d (%d bytes), accel %d: %v, equal %v", i, len(in), accel, err, bytes.Equal(got, in))
			}
			if n := lz4DecodeGo(got, enc); n != len(in) || !bytes.Equal(got, in) {
				t.Fatalf("input %d, accel %d: the Go decoder returns %d", i, accel, n)
			}
			if n, err := lz4.UncompressBlock(enc, got); err != nil || n != len(in) || !bytes.Equal(got, in) {
				t.Fatalf("input %d, accel %d: pierrec/lz4 reads %d bytes of our block: %v", i, accel, n, err)
			}
		}
		theirs := make([]byte, lz4.CompressBlockBound(len(in)))
		var c lz4.Compressor
		n, err := c.CompressBlock(in, theirs)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			continue // pierrec/lz4 gives up on noise
		}
		got := make([]byte, len(in))
		if err := lz4Block(got, theirs[:n]); err != nil || !bytes.Equal(got, in) {
			t.Fatalf("input %d: pierrec/lz4's block: %v", i, err)
		}
	}
}

// lz4Guarded decodes src into a dst of n bytes in the middle of a larger
// buffer, and fails t if a byte around dst changed.
func lz4Guarded(t testing.TB, src []byte, n int, decode func(dst, src []byte) int) (int, []byte) {
	const guard = 64
	buf := bytes.Repeat([]byte{0xa5}, n+2*guard)
	dst := buf[guard : guard+n : guard+n]
	r := decode(dst, src)
	for i, b := range buf {
		if (i < guard || i >= guard+n) && b != 0xa5 {
			t.Fatalf("a write outside dst, at %d of a %d-byte dst (returned %d), from % x", i-guard, n, r, src[:min(len(src), 64)])
		}
	}
	return r, dst
}

// TestLZ4Corrupt cuts and damages compressed blocks: the assembly
// decoder must give what the Go one gives (the same bytes, or the same
// error), never write outside dst and never read outside src (the race
// detector's and the guard's checks).
func TestLZ4Corrupt(t *testing.T) {
	var table lz4Table
	r := rand.New(rand.NewPCG(8, 8))
	for _, in := range lz4Inputs() {
		enc := lz4Compress(nil, in, 1, &table)
		for k := range 60 {
			bad := bytes.Clone(enc)
			switch {
			case k < 20 && len(bad) > 0:
				bad = bad[:r.IntN(len(bad))]
			case len(bad) > 0:
				for range 1 + k%3 {
					bad[r.IntN(len(bad))] = byte(r.Uint32())
				}
			}
			for _, n := range []int{len(in), len(in) / 2, len(in) + 40} {
				got, a := lz4Guarded(t, bad, n, lz4DecodeBlock)
				want, b := lz4Guarded(t, bad, n, lz4DecodeGo)
				if got != want || got > 0 && !bytes.Equal(a[:got], b[:got]) {
					t.Fatalf("%d-byte block, %d-byte dst: assembly %d, Go %d", len(bad), n, got, want)
				}
			}
		}
	}
	for _, tc := range []struct {
		src  []byte
		want error
	}{
		{[]byte{}, errLZ4Src},
		{[]byte{0x10}, errLZ4Src},               // a literal promised, none there
		{[]byte{0x10, 'a', 1}, errLZ4Src},       // half a distance
		{[]byte{0x10, 'a', 2, 0}, errLZ4Offset}, // two back from one byte
		{[]byte{0x10, 'a', 0, 0}, errLZ4Offset}, // distance 0
		{[]byte{0x1f, 'a', 1, 0, 255}, errLZ4Src},
		{[]byte{0xf0, 255, 255}, errLZ4Src},
	} {
		_, err := lz4Decode(make([]byte, 100), tc.src)
		if !errors.Is(err, tc.want) {
			t.Errorf("% x: %v, want %v", tc.src, err, tc.want)
		}
	}
	if _, err := lz4Decode(make([]byte, 3), []byte{0x40, 'a', 'b', 'c', 'd'}); !errors.Is(err, errLZ4Dst) {
		t.Errorf("4 literals into 3 bytes: %v", err)
	}
}

// FuzzLZ4Decode: arbitrary bytes, the assembly and Go decoders agree and
// neither writes outside dst.
func FuzzLZ4Decode(f *testing.F) {
	var table lz4Table
	for _, in := range lz4Inputs()[:40] {
		f.Add(lz4Compress(nil, in, 1, &table), uint16(len(in)))
	}
	f.Fuzz(func(t *testing.T, src []byte, n uint16) {
		got, a := lz4Guarded(t, src, int(n), lz4DecodeBlock)
		want, b := lz4Guarded(t, src, int(n), lz4DecodeGo)
		if got != want || got > 0 && !bytes.Equal(a[:got], b[:got]) {
			t.Fatalf("assembly %d, Go %d", got, want)
		}
	})
}

// BenchmarkLZ4 decodes and encodes the byte-shuffled float32 streams
// blosc gives lz4 (one 512 KiB block of climate-like values, split by
// byte plane).
func BenchmarkLZ4(b *testing.B) {
	floats := testData(512<<10, 4, 3)
	shuf := make([]byte, len(floats))
	shuffleBytes(shuf, floats, 4)
	var table lz4Table
	enc := lz4Compress(nil, shuf, 5, &table)
	dst := make([]byte, len(shuf))
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(shuf)))
		for b.Loop() {
			lz4DecodeBlock(dst, enc)
		}
	})
	b.Run("decodeGo", func(b *testing.B) {
		b.SetBytes(int64(len(shuf)))
		for b.Loop() {
			lz4DecodeGo(dst, enc)
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(shuf)))
		out := make([]byte, 0, lz4Bound(len(shuf)))
		for b.Loop() {
			lz4Compress(out[:0], shuf, 5, &table)
		}
	})
}

// lz4CompressRef is the compressor as first written, appending a byte at
// a time: lz4Compress must make its blocks to the byte.
func lz4CompressRef(dst, src []byte, accel int, t *lz4Table) []byte {
	n := len(src)
	if n < lz4MinCompLen {
		return lz4Literals(dst, src)
	}
	accel = max(accel, 1)
	clear(t[:])
	mflimit := n - lz4MFLimit
	matchlimit := n - lz4LastLits
	anchor, ip := 0, 1
	t[lz4Hash(binary.LittleEndian.Uint32(src))] = 0
	for ip < mflimit {
		step, misses := 1, accel<<lz4SkipLog
		var ref int
		for {
			v := binary.LittleEndian.Uint32(src[ip:])
			h := lz4Hash(v)
			ref = int(t[h])
			t[h] = uint32(ip)
			if ip-ref <= lz4MaxOffset && binary.LittleEndian.Uint32(src[ref:]) == v {
				break
			}
			ip += step
			step = misses >> lz4SkipLog
			misses++
			if ip >= mflimit {
				return lz4Last(dst, src[anchor:])
			}
		}
		for ip > anchor && ref > 0 && src[ip-1] == src[ref-1] {
			ip--
			ref--
		}
		ml := lz4MinMatch + matchLen(src[ip+lz4MinMatch:matchlimit], src[ref+lz4MinMatch:])
		ll, m := ip-anchor, ml-lz4MinMatch
		dst = append(dst, byte(min(ll, 15)<<4|min(m, 15)))
		if ll >= 15 {
			dst = lz4Length(dst, ll-15)
		}
		dst = append(dst, src[anchor:ip]...)
		dst = append(dst, byte(ip-ref), byte((ip-ref)>>8))
		if m >= 15 {
			dst = lz4Length(dst, m-15)
		}
		ip += ml
		anchor = ip
		if ip >= mflimit {
			break
		}
		t[lz4Hash(binary.LittleEndian.Uint32(src[ip-2:]))] = uint32(ip - 2)
	}
	return lz4Last(dst, src[anchor:])
}

// TestLZ4CompressRef checks the compressor's blocks against the
// reference's, byte for byte, on every input of the round trip and on
// shuffled float32 and float64 planes of ragged lengths (NaNs and
// infinities among them, an anomaly's values around zero), at each
// acceleration, appended after a prefix and into a dst with no room, so
// that the wild copies' room checks are taken both ways.
func TestLZ4CompressRef(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 4))
	ins := lz4Inputs()
	for _, n := range []int{13, 14, 27, 28, 29, 33, 4095, 131072, 131071 + 7} {
		f := make([]float32, n)
		for i := range f {
			f[i] = float32(r.NormFloat64())
			if i%101 == 0 {
				f[i] = float32(math.NaN())
			}
			if i%997 == 0 {
				f[i] = float32(math.Inf(1 - 2*(i%2)))
			}
		}
		raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*n)
		shuf := make([]byte, len(raw))
		shuffleBytes(shuf, raw, 4)
		ins = append(ins, shuf, shuf[:len(shuf)/4], shuf[3*len(shuf)/4:])
		d := testData(8*n, 8, 3)
		shuf8 := make([]byte, len(d))
		shuffleBytes(shuf8, d, 8)
		ins = append(ins, shuf8, shuf8[:len(shuf8)/8+3])
	}
	var ta, tb lz4Table
	for i, in := range ins {
		for _, accel := range []int{1, 2, 5, 9} {
			want := lz4CompressRef([]byte("prefix"), in, accel, &ta)
			for _, dst := range [][]byte{[]byte("prefix"), append(make([]byte, 0, 1<<20), "prefix"...)} {
				got := lz4Compress(dst, in, accel, &tb)
				if !bytes.Equal(got, want) {
					t.Fatalf("input %d (%d bytes), accel %d, dst cap %d: %d bytes, the reference's %d", i, len(in), accel, cap(dst), len(got), len(want))
				}
			}
		}
	}
}
