package tensortest

import (
	"fmt"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/spec"
)

// refScan scans a along axis directly, in float64 (int64 when intOut).
func refScan(a *tensor.Array, axis int, mul, intOut bool) []float64 {
	out := make([]float64, a.Len())
	acc := map[int]float64{}
	accI := map[int]int64{}
	for k := 0; k < a.Len(); k++ {
		idx := tensor.Unravel(k, a.Shape)
		idx[axis] = 0
		line := tensor.Ravel(idx, a.Shape)
		v := a.Float64At(k)
		first := tensor.Unravel(k, a.Shape)[axis] == 0
		if intOut {
			switch {
			case first:
				accI[line] = int64(v)
			case mul:
				accI[line] *= int64(v)
			default:
				accI[line] += int64(v)
			}
			out[k] = float64(accI[line])
			continue
		}
		switch {
		case first:
			acc[line] = v
		case mul:
			acc[line] *= v
		default:
			acc[line] += v
		}
		out[k] = acc[line]
	}
	return out
}

func TestScans(t *testing.T) {
	shape := []int{5, 4, 3}
	chunkings := [][][]int{
		{{5}, {4}, {3}},
		{{2, 2, 1}, {1, 3}, {3}},
		{{1, 1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1}},
	}
	for _, op := range []string{tensor.OpCumsum, tensor.OpCumprod} {
		for _, dt := range []tensor.DType{tensor.Bool, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Float64} {
			a := testValues(dt, shape, false)
			if op == tensor.OpCumprod {
				// Small nonzero factors keep products exact in every dtype.
				v := make([]float64, a.Len())
				for i := range v {
					v[i] = float64(i%3 + 1)
					if i%5 == 0 {
						v[i] = -1
					}
					if dt == tensor.Bool {
						v[i] = b2f(i%4 != 0)
					}
				}
				a = arrayOf(dt, shape, v...)
			}
			outDT := reduceDType(tensor.OpSum, dt)
			for axis := range shape {
				want := refScan(a, axis, op == tensor.OpCumprod, outDT.IsInt())
				for _, cs := range chunkings {
					g := newGraph(t)
					got := g.compute(g.op(op, outDT, shape, spec.Attrs{Axes: []int{axis}}, g.input(a, cs)))[0]
					tol := 0.0
					if outDT == tensor.Float32 {
						tol = 1e-6
					}
					checkArray(t, fmt.Sprintf("%s %v axis %d chunks %v", op, dt, axis, cs), got, outDT, shape, want, tol)
				}
			}
		}
	}
}

// TestScanChain checks that a line of n chunks takes n-1 carry ops, each
// reading at most the previous carry and one local scan.
func TestScanChain(t *testing.T) {
	g := newGraph(t)
	a := testValues(tensor.Float64, []int{10}, false)
	cg, err := g.tile(g.op(tensor.OpCumsum, tensor.Float64, []int{10}, spec.Attrs{Axes: []int{0}}, g.input(a, [][]int{{2, 2, 2, 2, 2}})))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, op := range cg.Ops {
		count[string(op.Kind)]++
		if op.Kind == "cumsum.carry" && len(op.Inputs) > 2 {
			t.Errorf("carry reads %d inputs", len(op.Inputs))
		}
	}
	if count["cumsum.local"] != 5 || count["cumsum.carry"] != 4 || count["cumsum.offset"] != 4 {
		t.Errorf("ops %v", count)
	}
}

func TestScanEmptyChunk(t *testing.T) {
	// A zero-length axis scans to an empty result.
	g := newGraph(t)
	got := g.compute(g.op(tensor.OpCumsum, tensor.Int64, []int{0, 2}, spec.Attrs{Axes: []int{0}}, g.input(tensor.NewArray(tensor.Int64, []int{0, 2}), [][]int{{0}, {1, 1}})))[0]
	checkArray(t, "empty cumsum", got, tensor.Int64, []int{0, 2}, nil, 0)
}
