package tensortest

import (
	"errors"
	"math/rand"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/codec"
)

// cutChunks cuts a into the chunks of a grid of the given chunk sizes, in
// C order of the grid.
func cutChunks(a *tensor.Array, chunks [][]int) []*tensor.Array {
	offs, grid := tensor.ChunkOffsets(chunks), tensor.GridShape(chunks)
	var parts []*tensor.Array
	idx := make([]int, len(grid))
	for n := tensor.NumElements(grid); n > 0; n-- {
		shape := make([]int, len(idx))
		sel := make([]tensor.Slice, len(idx))
		for ax, i := range idx {
			shape[ax] = chunks[ax][i]
			sel[ax] = tensor.Slice{Start: offs[ax][i], Step: 1, Len: shape[ax]}
		}
		p := tensor.NewArray(a.DType, shape)
		tensor.CopyStrided(p, make([]int, len(shape)), a, sel)
		parts = append(parts, p)
		for ax := len(idx) - 1; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < grid[ax] {
				break
			}
			idx[ax] = 0
		}
	}
	return parts
}

// TestTextFromShownChunks prints tensors of many shapes from only the chunks
// holding the elements the text shows, and checks the text is FormatText's
// of the whole array and that no other chunk was fetched.
func TestTextFromShownChunks(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	shapes := [][]int{{5}, {1000}, {1001}, {3000}, {40, 50}, {2, 3, 200}, {7, 7, 7, 7}, {1, 2000}, {2000, 1}, {0, 5}, {}}
	for _, shape := range shapes {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Int64, tensor.Bool, tensor.Float32} {
			vals := make([]float64, tensor.NumElements(shape))
			for i := range vals {
				vals[i] = float64(rng.Intn(2000)-1000) / 8
			}
			a := arrayOf(dt, shape, vals...)
			for _, size := range []int{1, 3, 7, 64, 5000} {
				chunks := splitChunks(shape, size)
				tt := &tensor.TiledTensor{Name: "x", Shape: shape, DType: dt, Chunks: chunks, Keys: make([]uint64, tensor.NumElements(tensor.GridShape(chunks)))}
				parts := cutChunks(a, chunks)
				fetched := map[int]bool{}
				shown, err := tensor.GatherIndex(tt, codec.TextIndex(shape), func(i int) (*tensor.Array, error) {
					fetched[i] = true
					return parts[i], nil
				})
				if err != nil {
					t.Fatalf("%v %s chunks %d: %v", shape, dt, size, err)
				}
				if got, want := codec.FormatTextShown(shape, shown), codec.FormatText(a); got != want {
					t.Fatalf("%v %s chunks %d: text from the shown elements\n%s\nwant\n%s", shape, dt, size, got, want)
				}
				// Exactly the chunks holding a shown element were fetched:
				// along each axis, the chunks its shown indices fall in.
				want := 1
				offs := tensor.ChunkOffsets(chunks)
				for ax, sel := range codec.TextIndex(shape) {
					hit := map[int]bool{}
					for _, i := range sel {
						c := 0
						for c+1 < len(offs[ax]) && offs[ax][c+1] <= i {
							c++
						}
						hit[c] = true
					}
					want *= len(hit)
				}
				if tensor.NumElements(shape) == 0 {
					want = 0
				}
				if len(fetched) != want {
					t.Errorf("%v chunks %d: fetched %d of %d chunks, want %d", shape, size, len(fetched), len(parts), want)
				}
			}
		}
	}
}

func TestGatherIndexErrors(t *testing.T) {
	tt := &tensor.TiledTensor{Name: "x", Shape: []int{10}, DType: tensor.Float64, Chunks: [][]int{{5, 5}}, Keys: []uint64{1, 2}}
	ok := func(i int) (*tensor.Array, error) { return tensor.NewArray(tensor.Float64, []int{5}), nil }
	if _, err := tensor.GatherIndex(tt, [][]int{{10}}, ok); err == nil {
		t.Error("index 10 of a length-10 axis gathered")
	}
	if _, err := tensor.GatherIndex(tt, [][]int{{1}, {1}}, ok); err == nil {
		t.Error("two index lists for one axis accepted")
	}
	boom := errors.New("worker gone")
	if _, err := tensor.GatherIndex(tt, [][]int{{7}}, func(int) (*tensor.Array, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("fetch error = %v, want %v", err, boom)
	}
	if _, err := tensor.GatherIndex(tt, [][]int{{7}}, func(int) (*tensor.Array, error) { return tensor.NewArray(tensor.Float64, []int{4}), nil }); err == nil {
		t.Error("a chunk of the wrong shape gathered")
	}
}
