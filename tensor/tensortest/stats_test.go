package tensortest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// statsFloat and statsInt are the test data; the expected values below are
// NumPy 1.24's for them.
func statsFloat(n int) *tensor.Array {
	a := tensor.NewArray(tensor.Float64, []int{n})
	for i := range n {
		a.Float64s()[i] = float64((i*37)%101)/7.0 - 5
	}
	return a
}

func statsInt(n int) *tensor.Array {
	a := tensor.NewArray(tensor.Int64, []int{n})
	for i := range n {
		a.Int64s()[i] = int64((i*13)%17 - 3)
	}
	return a
}

// statsChunkings are chunkings of an axis of n: whole, ragged, and small.
func statsChunkings(n int) [][]int {
	return [][]int{{n}, tile.ReshapeSplit(n, 10), {n - 1, 1}, tile.ReshapeSplit(n, 3)}
}

func TestHistogram(t *testing.T) {
	for _, tc := range []struct {
		a          *tensor.Array
		bins       int
		rng        []float64
		hist       []int64
		edges      []float64
		edgesDType tensor.DType
	}{
		{statsFloat(53), 7, nil, []int64{9, 6, 8, 8, 7, 7, 8},
			[]float64{-5.0, -2.9591836734693877, -0.9183673469387754, 1.1224489795918373, 3.163265306122449, 5.204081632653061, 7.244897959183675, 9.285714285714286}, tensor.Float64},
		{statsFloat(53), 5, []float64{-1, 2}, []int64{3, 2, 3, 1, 3},
			[]float64{-1.0, -0.4, 0.19999999999999996, 0.7999999999999998, 1.4, 2.0}, tensor.Float64},
		{statsInt(41), 4, nil, []int64{10, 9, 10, 12}, []float64{-3, 1, 5, 9, 13}, tensor.Float64},
		{kernel.ConvertChunk(statsInt(41), tensor.Float32), 4, nil, []int64{10, 9, 10, 12}, []float64{-3, 1, 5, 9, 13}, tensor.Float32},
		{kernel.ConvertChunk(statsFloat(6), tensor.Float64), 3, nil, nil, nil, tensor.Float64},
	} {
		n := tc.a.Shape[0]
		if tc.hist == nil {
			// A constant array: the range widens by 0.5 each way.
			for i := range tc.a.Float64s() {
				tc.a.Float64s()[i] = 2.5
			}
			tc.hist = []int64{0, 6, 0}
			tc.edges = []float64{2.0, 2.3333333333333335, 2.6666666666666665, 3.0}
		}
		for _, chunks := range statsChunkings(n) {
			what := fmt.Sprintf("%v[%d] bins %d range %v chunks %v", tc.a.DType, n, tc.bins, tc.rng, chunks)
			c := newShapeCase()
			x := c.input(tc.a, [][]int{chunks})
			attrs := spec.Attrs{Bins: tc.bins, Range: tc.rng}
			h := c.add(&spec.Node{Op: tensor.OpHistogram, Inputs: []*spec.Node{x}, Shape: []int{tc.bins}, DType: tensor.Int64, Attrs: attrs})
			e := c.add(&spec.Node{Op: tensor.OpHistEdges, Inputs: []*spec.Node{x}, Shape: []int{tc.bins + 1}, DType: tc.edgesDType, Attrs: attrs})
			outs, cg := c.runOutputs(t, h, e)
			for i, w := range tc.hist {
				if outs[0].Int64s()[i] != w {
					t.Fatalf("%s: histogram %v, want %v", what, outs[0].Int64s(), tc.hist)
				}
			}
			if outs[1].DType != tc.edgesDType {
				t.Fatalf("%s: edges of %v", what, outs[1].DType)
			}
			checkClose(t, what+" edges", outs[1], tc.edges, 0)
			ranges := 0
			for _, op := range cg.Ops {
				if op.Kind == chunk.KindHist {
					ranges++
				}
			}
			if want := map[bool]int{true: 0, false: 1}[tc.rng != nil]; ranges != want {
				t.Errorf("%s: %d range ops, want %d", what, ranges, want)
			}
		}
	}
}

func TestHistogramNaN(t *testing.T) {
	a := statsFloat(10)
	a.Float64s()[7] = math.NaN()
	c := newShapeCase()
	x := c.input(a, [][]int{{4, 6}})
	h := c.add(&spec.Node{Op: tensor.OpHistogram, Inputs: []*spec.Node{x}, Shape: []int{3}, DType: tensor.Int64, Attrs: spec.Attrs{Bins: 3}})
	err := c.computeErr(t, h)
	if err == nil || !strings.Contains(err.Error(), "histogram: autodetected range of [nan, nan] is not finite") {
		t.Errorf("error %v", err)
	}
	// With a range, NaNs are not counted.
	c = newShapeCase()
	x = c.input(a, [][]int{{4, 6}})
	h = c.add(&spec.Node{Op: tensor.OpHistogram, Inputs: []*spec.Node{x}, Shape: []int{2}, DType: tensor.Int64, Attrs: spec.Attrs{Bins: 2, Range: []float64{-10, 10}}})
	outs, _ := c.runOutputs(t, h)
	if got := outs[0].Int64s(); got[0]+got[1] != 9 {
		t.Errorf("histogram %v counts %d values, want 9", got, got[0]+got[1])
	}
}

func TestBincount(t *testing.T) {
	want := []int64{3, 3, 2, 2, 2, 3, 2, 2, 2, 3, 3, 2, 2, 3, 3, 2, 2, 0, 0, 0}
	a := statsInt(41)
	for i := range a.Int64s() {
		a.Int64s()[i] += 3
	}
	for _, dt := range []tensor.DType{tensor.Int64, tensor.Int32} {
		for _, chunks := range statsChunkings(41) {
			c := newShapeCase()
			x := c.input(kernel.ConvertChunk(a, dt), [][]int{chunks})
			b := c.add(&spec.Node{Op: tensor.OpBincount, Inputs: []*spec.Node{x}, Shape: []int{tensor.Unknown}, DType: tensor.Int64, Attrs: spec.Attrs{Minlength: 20}})
			outs, err := c.computeStaged(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(outs[0].Shape) != 1 || outs[0].Shape[0] != len(want) {
				t.Fatalf("%v chunks %v: shape %v, want (%d,)", dt, chunks, outs[0].Shape, len(want))
			}
			for i, w := range want {
				if outs[0].Int64s()[i] != w {
					t.Fatalf("%v chunks %v: %v, want %v", dt, chunks, outs[0].Int64s(), want)
				}
			}
		}
	}
	for _, tc := range []struct {
		minlength int
		shift     int64
		want      string
	}{
		{20, -1, "bincount.len: the input has a negative value (-1)"},
	} {
		c := newShapeCase()
		b := tensor.NewArray(tensor.Int64, []int{41})
		for i, v := range a.Int64s() {
			b.Int64s()[i] = v + tc.shift
		}
		x := c.input(b, [][]int{{20, 21}})
		_, err := c.computeStaged(c.add(&spec.Node{Op: tensor.OpBincount, Inputs: []*spec.Node{x}, Shape: []int{tensor.Unknown}, DType: tensor.Int64, Attrs: spec.Attrs{Minlength: tc.minlength}}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	qs := []float64{0, 10, 33.3, 50, 99, 100}
	for _, tc := range []struct {
		a    *tensor.Array
		want []float64
	}{
		{statsFloat(53), []float64{-5.0, -3.685714285714286, -0.38342857142857173, 2.0, 9.062857142857142, 9.285714285714286}},
		{statsInt(41), []float64{-3.0, -2.0, 2.0, 5.0, 13.0, 13.0}},
	} {
		for _, chunks := range statsChunkings(tc.a.Shape[0]) {
			c := newShapeCase()
			x := c.input(tc.a, [][]int{chunks})
			p := c.add(&spec.Node{Op: tensor.OpPercentile, Inputs: []*spec.Node{x}, Shape: []int{len(qs)}, DType: tensor.Float64, Attrs: spec.Attrs{Q: qs}})
			one := c.add(&spec.Node{Op: tensor.OpPercentile, Inputs: []*spec.Node{x}, Shape: []int{1}, DType: tensor.Float64, Attrs: spec.Attrs{Q: qs[2:3]}})
			outs, _ := c.runOutputs(t, p, one)
			what := fmt.Sprintf("%v chunks %v", tc.a.DType, chunks)
			checkClose(t, what, outs[0], tc.want, 1e-15)
			checkClose(t, what+" one", outs[1], tc.want[2:3], 1e-15)
		}
	}
	// float32 data: float64 percentiles of the float32 values.
	c := newShapeCase()
	x := c.input(kernel.ConvertChunk(statsFloat(53), tensor.Float32), [][]int{{20, 20, 13}})
	p := c.add(&spec.Node{Op: tensor.OpPercentile, Inputs: []*spec.Node{x}, Shape: []int{1}, DType: tensor.Float64, Attrs: spec.Attrs{Q: []float64{33.3}}})
	outs, _ := c.runOutputs(t, p)
	checkClose(t, "float32", outs[0], []float64{-0.3834285783767702}, 1e-15)
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		a    *tensor.Array
		want float64
		dt   tensor.DType
	}{
		{statsFloat(53), 2.0, tensor.Float64},
		{statsFloat(52), 2.0714285714285716, tensor.Float64},
		{statsInt(41), 5, tensor.Float64},
		{statsInt(40), 5, tensor.Float64},
		{kernel.ConvertChunk(statsFloat(52), tensor.Float32), 2.0714285373687744, tensor.Float32},
	} {
		for _, chunks := range statsChunkings(tc.a.Shape[0]) {
			c := newShapeCase()
			x := c.input(tc.a, [][]int{chunks})
			m := c.add(&spec.Node{Op: tensor.OpMedian, Inputs: []*spec.Node{x}, DType: tc.dt})
			outs, _ := c.runOutputs(t, m)
			if outs[0].DType != tc.dt {
				t.Fatalf("median of %v is %v", tc.a.DType, outs[0].DType)
			}
			checkClose(t, fmt.Sprintf("median %v[%d] chunks %v", tc.a.DType, tc.a.Shape[0], chunks), outs[0], []float64{tc.want}, 0)
		}
	}
	a := statsFloat(9)
	a.Float64s()[2] = math.NaN()
	c := newShapeCase()
	x := c.input(a, [][]int{{4, 5}})
	outs, _ := c.runOutputs(t, c.add(&spec.Node{Op: tensor.OpMedian, Inputs: []*spec.Node{x}, DType: tensor.Float64}))
	if !math.IsNaN(outs[0].Float64s()[0]) {
		t.Errorf("median with a NaN = %v, want nan", outs[0].Float64s()[0])
	}
}

// TestSortShared checks that sort, percentile and median of one tensor sort
// it once.
func TestSortShared(t *testing.T) {
	a := statsFloat(53)
	c := newShapeCase()
	x := c.input(a, [][]int{tile.ReshapeSplit(53, 10)})
	s := c.add(&spec.Node{Op: tensor.OpSort, Inputs: []*spec.Node{x}, Shape: []int{53}, DType: tensor.Float64})
	p := c.add(&spec.Node{Op: tensor.OpPercentile, Inputs: []*spec.Node{x}, Shape: []int{2}, DType: tensor.Float64, Attrs: spec.Attrs{Q: []float64{10, 90}}})
	m := c.add(&spec.Node{Op: tensor.OpMedian, Inputs: []*spec.Node{x}, DType: tensor.Float64})
	outs, cg := c.runOutputs(t, s, p, m)
	local := 0
	for _, op := range cg.Ops {
		if op.Kind == chunk.KindSortLocal {
			local++
		}
	}
	if local != 6 {
		t.Errorf("%d local sorts of 6 blocks", local)
	}
	checkClose(t, "median", outs[2], []float64{2.0}, 0)
}

// TestHistogramFloat32 checks float32 data, whose edges are float32 as in
// NumPy, against NumPy 1.24's counts.
func TestHistogramFloat32(t *testing.T) {
	a := kernel.ConvertChunk(statsFloat(53), tensor.Float32)
	for _, tc := range []struct {
		bins  int
		rng   []float64
		want  []int64
		edges []float64 // the first few
	}{
		{7, nil, []int64{9, 6, 8, 8, 7, 7, 8}, []float64{-5.0, -2.959183692932129, -0.9183673858642578, 1.1224489212036133}},
		{13, nil, []int64{5, 4, 5, 3, 4, 4, 4, 4, 4, 4, 4, 3, 5}, []float64{-5.0, -3.9010989665985107, -2.8021979331970215, -1.7032967805862427}},
		{30, nil, []int64{3, 2, 1, 3, 1, 1, 3, 1, 1, 3, 1, 2, 2, 1, 2, 2, 1, 2, 2, 1, 2, 2, 2, 1, 2, 2, 1, 2, 2, 2}, []float64{-5.0, -4.523809432983398, -4.047618865966797, -3.5714285373687744}},
		{9, []float64{-2, 3}, []int64{2, 1, 3, 2, 3, 1, 2, 2, 2}, nil},
	} {
		c := newShapeCase()
		x := c.input(a, [][]int{{20, 20, 13}})
		attrs := spec.Attrs{Bins: tc.bins, Range: tc.rng}
		h := c.add(&spec.Node{Op: tensor.OpHistogram, Inputs: []*spec.Node{x}, Shape: []int{tc.bins}, DType: tensor.Int64, Attrs: attrs})
		e := c.add(&spec.Node{Op: tensor.OpHistEdges, Inputs: []*spec.Node{x}, Shape: []int{tc.bins + 1}, DType: tensor.Float32, Attrs: attrs})
		outs, _ := c.runOutputs(t, h, e)
		if fmt.Sprint(outs[0].Int64s()) != fmt.Sprint(tc.want) {
			t.Errorf("bins %d range %v: %v, want %v", tc.bins, tc.rng, outs[0].Int64s(), tc.want)
		}
		for i, w := range tc.edges {
			if g := outs[1].Float64At(i); g != w {
				t.Errorf("bins %d: edge %d = %v, want %v", tc.bins, i, g, w)
			}
		}
	}
}
