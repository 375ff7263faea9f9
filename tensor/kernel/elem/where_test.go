package elem

import (
	"math/rand/v2"
	"testing"
)

// TestWhereEveryWidth checks where's vector and scalar loops against the
// definition, for every element width, every length up to past two vector
// loops, conditions of any nonzero byte, and offsets that misalign the
// rows.
func TestWhereEveryWidth(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	conds := []byte{0, 1, 2, 0x7f, 0x80, 0xff}
	for _, vec := range []bool{false, true} {
		if vec && !useWhereAVX2 {
			continue
		}
		saved := useWhereAVX2
		useWhereAVX2 = vec
		for _, w := range []int{1, 4, 8} {
			f := map[int]RowFn{1: whereRow[uint8], 4: whereRow[uint32], 8: whereRow[uint64]}[w]
			for n := 0; n <= 80; n++ {
				for off := 0; off < 3; off++ {
					c := make([]byte, n+off)[off:]
					x := make([]byte, (n+off)*w)[off*w:]
					y := make([]byte, (n+off)*w)[off*w:]
					d := make([]byte, (n+off)*w)[off*w:]
					for i := range c {
						c[i] = conds[r.IntN(len(conds))]
					}
					for i := range x {
						x[i], y[i] = byte(r.Uint32()), byte(r.Uint32())
					}
					if err := f(d, [][]byte{c, x, y}); err != nil {
						t.Fatal(err)
					}
					for i := range n {
						want := y[i*w : i*w+w]
						if c[i] != 0 {
							want = x[i*w : i*w+w]
						}
						if string(d[i*w:i*w+w]) != string(want) {
							t.Fatalf("vector %v, width %d, n %d, offset %d: element %d (cond %#x) = %x, want %x", vec, w, n, off, i, c[i], d[i*w:i*w+w], want)
						}
					}
				}
			}
		}
		useWhereAVX2 = saved
	}
}

func BenchmarkWhere(b *testing.B) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(1, 2))
	c := make([]byte, n)
	for i := range c {
		c[i] = byte(r.IntN(2))
	}
	x, y, d := make([]byte, 8*n), make([]byte, 8*n), make([]byte, 8*n)
	for _, vec := range []bool{false, true} {
		name := "scalar"
		if vec {
			name = "avx2"
			if !useWhereAVX2 {
				continue
			}
		}
		b.Run(name, func(b *testing.B) {
			saved := useWhereAVX2
			useWhereAVX2 = vec
			defer func() { useWhereAVX2 = saved }()
			b.SetBytes(8 * n)
			for b.Loop() {
				whereRow[uint64](d, [][]byte{c, x, y})
			}
		})
	}
}
