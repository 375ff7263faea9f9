package zarr

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
)

// BenchmarkDecode decodes one 40 MB chunk of float64 (5 + a normal,
// quantized to 1/1024, as bench's W7 array holds) with each compressor
// marsfs writes.
func BenchmarkDecode(b *testing.B) {
	for _, comp := range []string{"zstd", "blosc", "zlib", ""} {
		a, _ := New([]int{5000, 1000}, []int{5000, 1000}, tensor.Float64, 2, comp)
		chunk := make([]byte, a.ChunkBytes())
		r := rand.New(rand.NewPCG(1, 7))
		for i := 0; i < len(chunk); i += 8 {
			binary.LittleEndian.PutUint64(chunk[i:], math.Float64bits(math.Round((5+r.NormFloat64())*1024)/1024))
		}
		enc, err := a.Encode(chunk)
		if err != nil {
			b.Fatal(err)
		}
		name := comp
		if name == "" {
			name = "none"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(chunk)))
			b.ReportMetric(float64(len(chunk))/float64(len(enc)), "ratio")
			dst := make([]byte, len(chunk))
			for b.Loop() {
				if err := a.Decode(dst, enc, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
