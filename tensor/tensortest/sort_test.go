package tensortest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// sortTestArray has many duplicates, and NaNs, infinities and signed zeros
// for the float dtypes.
func sortTestArray(dt tensor.DType, shape []int, r *rand.Rand) *tensor.Array {
	a := tensor.NewArray(dt, shape)
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1)}
	for i := range a.Len() {
		v := float64(r.IntN(7) - 3)
		switch dt {
		case tensor.Bool:
			a.Data[i] = uint8(r.IntN(2))
		case tensor.Int32:
			a.Int32s()[i] = int32(v)
		case tensor.Int64:
			a.Int64s()[i] = int64(v) * 1e12
		case tensor.Float32, tensor.Float64:
			if r.IntN(5) == 0 {
				v = specials[r.IntN(len(specials))]
			} else {
				v += r.Float64()
			}
			if dt == tensor.Float32 {
				a.Float32s()[i] = float32(v)
			} else {
				a.Float64s()[i] = v
			}
		}
	}
	return a
}

// compareNumPy orders two values as NumPy's sort does: NaNs last, -0 == +0.
func compareNumPy(x, y float64) int {
	switch {
	case x != x && y != y:
		return 0
	case x != x:
		return 1
	case y != y:
		return -1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// wantSort returns the stable argsort of each row of a.
func wantArgsort(a *tensor.Array) []int64 {
	rows, cols := kernel.RowsOf(a.Shape, false)
	out := make([]int64, 0, a.Len())
	for r := range rows {
		idx := make([]int64, cols)
		for j := range idx {
			idx[j] = int64(j)
		}
		slices.SortStableFunc(idx, func(i, j int64) int {
			return compareNumPy(a.Float64At(r*cols+int(i)), a.Float64At(r*cols+int(j)))
		})
		out = append(out, idx...)
	}
	return out
}

func TestSortRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for it := range 300 {
		dt := allDTypes[it%len(allDTypes)]
		var shape [][]int
		n := r.IntN(40)
		if it%3 == 0 {
			shape = [][]int{{r.IntN(4) + 1}, {n}}
		} else {
			shape = [][]int{{n}}
		}
		sh := make([]int, len(shape))
		chunks := make([][]int, len(shape))
		for ax, s := range shape {
			sh[ax] = s[0]
			chunks[ax] = randomChunks(r, s[0])
		}
		a := sortTestArray(dt, sh, r)
		c := newShapeCase()
		x := c.input(a, chunks)
		s := c.add(&spec.Node{Op: tensor.OpSort, Inputs: []*spec.Node{x}, Shape: sh, DType: dt})
		as := c.add(&spec.Node{Op: tensor.OpArgsort, Inputs: []*spec.Node{x}, Shape: sh, DType: tensor.Int64})
		outs, _ := c.runOutputs(t, s, as)
		what := fmt.Sprintf("%v%v chunks %v", dt, sh, chunks)
		want := wantArgsort(a)
		_, cols := kernel.RowsOf(sh, false)
		for i, w := range want {
			if got := outs[1].Int64s()[i]; got != w {
				t.Fatalf("%s: argsort[%d] = %d, want %d (input %v)", what, i, got, w, a)
			}
			// The sorted value equals the value the argsort points at.
			row := i / max(cols, 1)
			g, e := outs[0].Float64At(i), a.Float64At(row*cols+int(w))
			if compareNumPy(g, e) != 0 {
				t.Fatalf("%s: sort[%d] = %v, want %v", what, i, g, e)
			}
		}
	}
}

// TestSortNumPy checks a case against NumPy 1.24:
// np.sort(x), np.argsort(x, kind='stable').
func TestSortNumPy(t *testing.T) {
	x := []float64{3, math.NaN(), -1, 2, 3, math.Inf(-1), 0, -2.5, 3, math.NaN(), 1, -1}
	wantSort := []float64{math.Inf(-1), -2.5, -1, -1, 0, 1, 2, 3, 3, 3, math.NaN(), math.NaN()}
	wantArg := []int64{5, 7, 2, 11, 6, 10, 3, 0, 4, 8, 1, 9}
	a := tensor.NewArray(tensor.Float64, []int{12})
	copy(a.Float64s(), x)
	for _, chunks := range [][]int{{12}, {5, 7}, {3, 3, 3, 3}, {1, 11}, tile.ReshapeSplit(12, 1), {7, 2, 3}} {
		c := newShapeCase()
		in := c.input(a, [][]int{chunks})
		s := c.add(&spec.Node{Op: tensor.OpSort, Inputs: []*spec.Node{in}, Shape: []int{12}, DType: tensor.Float64})
		as := c.add(&spec.Node{Op: tensor.OpArgsort, Inputs: []*spec.Node{in}, Shape: []int{12}, DType: tensor.Int64})
		outs, cg := c.runOutputs(t, s, as)
		for i := range wantSort {
			if compareNumPy(outs[0].Float64s()[i], wantSort[i]) != 0 || outs[1].Int64s()[i] != wantArg[i] {
				t.Fatalf("chunks %v: sort %v argsort %v", chunks, outs[0].Float64s(), outs[1].Int64s())
			}
		}
		// No op reads more than two blocks.
		for _, op := range cg.Ops {
			if op.Kind == chunk.KindSortMerge && len(op.Inputs) != 2 {
				t.Errorf("merge op with %d inputs", len(op.Inputs))
			}
		}
	}
}
