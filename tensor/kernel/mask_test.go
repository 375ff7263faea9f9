package kernel

import (
	"context"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestMaskSelectEveryWidth checks mask.select and mask.count against the
// definition for rows of every width the branch-free loops take and one
// they do not, masks of any nonzero byte, all true, all false.
func TestMaskSelectEveryWidth(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dt := range []tensor.DType{tensor.Bool, tensor.Float16, tensor.Int32, tensor.Float64} {
		for _, rest := range [][]int{nil, {3}} {
			for n := 0; n <= 40; n++ {
				for _, fill := range []string{"random", "true", "false"} {
					m := tensor.NewArray(tensor.Bool, []int{n})
					for i := range m.Data {
						switch fill {
						case "random":
							m.Data[i] = []byte{0, 1, 2, 0x80, 0xff}[r.IntN(5)]
						case "true":
							m.Data[i] = 1
						}
					}
					x := tensor.NewArray(dt, append([]int{n}, rest...))
					for i := range x.Data {
						x.Data[i] = byte(r.Uint32())
					}
					row := len(x.Data) / max(n, 1)
					var want []byte
					for i, b := range m.Data {
						if b != 0 {
							want = append(want, x.Data[i*row:(i+1)*row]...)
						}
					}
					op := &chunk.Op{DType: dt, Shape: append([]int{0}, rest...)}
					got, err := maskSelectKernel(context.Background(), op, []*tensor.Array{x, m})
					if err != nil {
						t.Fatal(err)
					}
					if got.Shape[0] != len(want)/max(row, 1) || string(got.Data) != string(want) {
						t.Fatalf("%v%v, n %d, %s mask: got %d rows %x, want %x", dt, rest, n, fill, got.Shape[0], got.Data, want)
					}
					count, err := maskCountKernel(context.Background(), op, []*tensor.Array{m})
					if err != nil {
						t.Fatal(err)
					}
					if int(count.Int64s()[0]) != got.Shape[0] {
						t.Fatalf("%v, n %d: count %d, select %d", dt, n, count.Int64s()[0], got.Shape[0])
					}
				}
			}
		}
	}
}

func BenchmarkMaskSelect(b *testing.B) {
	const n = 1 << 20
	r := rand.New(rand.NewPCG(3, 4))
	m := tensor.NewArray(tensor.Bool, []int{n})
	for i := range m.Data {
		m.Data[i] = byte(r.IntN(2))
	}
	x := tensor.NewArray(tensor.Float64, []int{n})
	op := &chunk.Op{DType: tensor.Float64, Shape: []int{0}}
	b.SetBytes(8 * n)
	for b.Loop() {
		if _, err := maskSelectKernel(context.Background(), op, []*tensor.Array{x, m}); err != nil {
			b.Fatal(err)
		}
	}
}
