package tensortest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// reduceDType is the result dtype NumPy 1.24 gives op on in.
func reduceDType(op string, in tensor.DType) tensor.DType {
	switch op {
	case tensor.OpSum, tensor.OpProd, tensor.OpNansum:
		if in == tensor.Bool || in.IsInt() {
			return tensor.Int64
		}
		return in
	case tensor.OpMean, tensor.OpVar, tensor.OpStd, tensor.OpNanmean:
		if in == tensor.Float32 {
			return tensor.Float32
		}
		return tensor.Float64
	case tensor.OpArgmin, tensor.OpArgmax, tensor.OpCountNonzero:
		return tensor.Int64
	case tensor.OpAny, tensor.OpAll:
		return tensor.Bool
	}
	return in
}

// refReduce reduces a directly: for each output element, the values of the
// reduced slice in C order, folded by the textbook definition.
func refReduce(op string, a *tensor.Array, axes []int, ddof int, outDT tensor.DType) []float64 {
	nd := len(a.Shape)
	reduced := make([]bool, nd)
	if axes == nil {
		for ax := range reduced {
			reduced[ax] = true
		}
	}
	for _, ax := range axes {
		reduced[ax] = true
	}
	ks, _ := elem.KeepShape(a.Shape, reduced)
	var outs []float64
	for o := 0; o < tensor.NumElements(ks); o++ {
		oi := tensor.Unravel(o, ks)
		var vals []float64
		var pos []int // index reported by argmin/argmax
		for k := 0; k < a.Len(); k++ {
			idx := tensor.Unravel(k, a.Shape)
			match := true
			for ax := range idx {
				if !reduced[ax] && idx[ax] != oi[ax] {
					match = false
				}
			}
			if !match {
				continue
			}
			vals = append(vals, a.Float64At(k))
			switch {
			case axes == nil:
				pos = append(pos, k)
			case len(axes) > 0:
				pos = append(pos, idx[axes[0]])
			}
		}
		outs = append(outs, refFold(op, vals, pos, ddof, outDT))
	}
	return outs
}

func refFold(op string, v []float64, pos []int, ddof int, outDT tensor.DType) float64 {
	var nonNaN []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			nonNaN = append(nonNaN, x)
		}
	}
	sum := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s
	}
	switch op {
	case tensor.OpSum, tensor.OpNansum:
		if op == tensor.OpNansum {
			v = nonNaN
		}
		if outDT.IsInt() {
			var s int64
			for _, x := range v {
				s += int64(x)
			}
			return float64(s)
		}
		return sum(v)
	case tensor.OpProd:
		if outDT.IsInt() {
			p := int64(1)
			for _, x := range v {
				p *= int64(x)
			}
			return float64(p)
		}
		p := 1.0
		for _, x := range v {
			p *= x
		}
		return p
	case tensor.OpMean:
		return sum(v) / float64(len(v))
	case tensor.OpNanmean:
		return sum(nonNaN) / float64(len(nonNaN))
	case tensor.OpVar, tensor.OpStd:
		m := sum(v) / float64(len(v))
		s := 0.0
		for _, x := range v {
			s += (x - m) * (x - m)
		}
		r := s / math.Max(float64(len(v)-ddof), 0)
		if op == tensor.OpStd {
			r = math.Sqrt(r)
		}
		return r
	case tensor.OpMin, tensor.OpMax, tensor.OpNanmin, tensor.OpNanmax:
		if op == tensor.OpNanmin || op == tensor.OpNanmax {
			if len(nonNaN) == 0 {
				return math.NaN()
			}
			v = nonNaN
		}
		r := v[0]
		for _, x := range v {
			if math.IsNaN(x) || math.IsNaN(r) {
				r = math.NaN()
			} else if (op == tensor.OpMin || op == tensor.OpNanmin) && x < r || (op == tensor.OpMax || op == tensor.OpNanmax) && x > r {
				r = x
			}
		}
		return r
	case tensor.OpArgmin, tensor.OpArgmax:
		best := 0
		for i, x := range v {
			if math.IsNaN(v[best]) {
				break
			}
			if math.IsNaN(x) || op == tensor.OpArgmin && x < v[best] || op == tensor.OpArgmax && x > v[best] {
				best = i
			}
		}
		return float64(pos[best])
	case tensor.OpAny, tensor.OpAll:
		for _, x := range v {
			if (x != 0) == (op == tensor.OpAny) {
				return b2f(op == tensor.OpAny)
			}
		}
		return b2f(op == tensor.OpAll)
	case tensor.OpCountNonzero:
		n := 0
		for _, x := range v {
			if x != 0 {
				n++
			}
		}
		return float64(n)
	}
	panic("refFold: " + op)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// testValues are small integers with repeats (ties for argmin/argmax) and
// zeros, cast to dt; with nans, every seventh float is NaN.
func testValues(dt tensor.DType, shape []int, nans bool) *tensor.Array {
	n := tensor.NumElements(shape)
	v := make([]float64, n)
	for i := range v {
		v[i] = float64((i*7919)%23 - 11)
		if dt == tensor.Bool {
			v[i] = b2f(i%3 == 0)
		}
		if nans && dt.IsFloat() && i%7 == 3 {
			v[i] = math.NaN()
		}
	}
	return arrayOf(dt, shape, v...)
}

// TestReductions checks every reduction on every dtype, over several axis
// sets, with and without keepdims, under several chunkings (including one
// deep enough for two levels of combine ops), against refReduce.
func TestReductions(t *testing.T) {
	shape := []int{5, 4, 3}
	chunkings := [][][]int{
		{{5}, {4}, {3}},
		{{1, 1, 1, 1, 1}, {3, 1}, {2, 1}},
		{{2, 3}, {1, 1, 1, 1}, {1, 1, 1}},
	}
	axesSets := [][]int{nil, {0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}}
	for _, op := range tensor.Reductions {
		for _, dt := range []tensor.DType{tensor.Bool, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Float64} {
			if dt == tensor.Bool && (op == tensor.OpVar || op == tensor.OpStd) {
				continue // NumPy cannot subtract bools
			}
			a := testValues(dt, shape, op == tensor.OpNansum || op == tensor.OpNanmean || op == tensor.OpNanmax || op == tensor.OpNanmin)
			outDT := reduceDType(op, dt)
			for _, axes := range axesSets {
				if (op == tensor.OpArgmin || op == tensor.OpArgmax) && len(axes) > 1 {
					continue
				}
				want := refReduce(op, a, axes, 1, outDT)
				for _, keep := range []bool{false, true} {
					oshape := reducedShape(shape, axes, keep)
					for _, cs := range chunkings {
						g := newGraph(t)
						in := g.input(a, cs)
						n := g.op(op, outDT, oshape, spec.Attrs{Axes: axes, Keepdims: keep, Ddof: 1}, in)
						got := g.compute(n)[0]
						tol := 1e-12
						if outDT == tensor.Float32 {
							tol = 1e-6
						}
						checkArray(t, fmt.Sprintf("%s %v axes=%v keep=%v chunks=%v", op, dt, axes, keep, cs), got, outDT, oshape, want, tol)
					}
				}
			}
		}
	}
}

func reducedShape(shape, axes []int, keep bool) []int {
	out := []int{}
	for ax, s := range shape {
		red := axes == nil
		for _, a := range axes {
			red = red || a == ax
		}
		switch {
		case !red:
			out = append(out, s)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

// TestReduceNumPy pins values NumPy 1.24 computes on
// x = [[1, nan, 3], [nan, nan, 2], [4, 4, -1], [0, 5, 5]] (float64).
func TestReduceNumPy(t *testing.T) {
	x := arrayOf(tensor.Float64, []int{4, 3}, 1, nanV, 3, nanV, nanV, 2, 4, 4, -1, 0, 5, 5)
	y := arrayOf(tensor.Float64, []int{4, 3}, 1, 7, 3, 2, 7, 2, 4, 4, -1, 0, 5, 5)
	// z has all-NaN columns 0 and 2.
	z := arrayOf(tensor.Float64, []int{4, 3}, nanV, 1, nanV, nanV, 2, nanV, nanV, 1, nanV, nanV, 2, nanV)
	cases := []struct {
		x    *tensor.Array
		op   string
		axes []int
		want []float64
	}{
		{x, tensor.OpSum, []int{0}, []float64{nanV, nanV, 9}},
		{x, tensor.OpNansum, []int{0}, []float64{5, 9, 9}},
		{x, tensor.OpNanmean, []int{1}, []float64{2, 2, 7.0 / 3, 10.0 / 3}},
		{x, tensor.OpNanmax, []int{0}, []float64{4, 5, 5}},
		{x, tensor.OpNanmin, nil, []float64{-1}},
		{x, tensor.OpMax, []int{1}, []float64{nanV, nanV, 4, 5}},
		{x, tensor.OpArgmax, nil, []float64{1}},
		{x, tensor.OpArgmin, []int{0}, []float64{1, 0, 2}},
		{x, tensor.OpArgmax, []int{1}, []float64{1, 0, 0, 1}},
		{y, tensor.OpArgmax, nil, []float64{1}},
		{y, tensor.OpArgmax, []int{0}, []float64{2, 0, 3}},
		{y, tensor.OpArgmin, []int{1}, []float64{0, 0, 2, 0}},
		{y, tensor.OpVar, nil, []float64{6.020833333333333}},
		{y, tensor.OpStd, []int{0}, []float64{1.479019945774904, 1.299038105676658, 2.165063509461097}},
		{y, tensor.OpMean, []int{1}, []float64{11.0 / 3, 11.0 / 3, 7.0 / 3, 10.0 / 3}},
		{x, tensor.OpCountNonzero, nil, []float64{11}},
		{x, tensor.OpAll, []int{1}, []float64{1, 1, 1, 0}},
		{z, tensor.OpNanmean, []int{0}, []float64{nanV, 1.5, nanV}},
		{z, tensor.OpNanmax, []int{0}, []float64{nanV, 2, nanV}},
		{z, tensor.OpNanmin, []int{0}, []float64{nanV, 1, nanV}},
		{z, tensor.OpNansum, []int{0}, []float64{0, 6, 0}},
		{z, tensor.OpArgmin, []int{0}, []float64{0, 0, 0}},
		{z, tensor.OpMin, []int{0}, []float64{nanV, 1, nanV}},
	}
	for _, c := range cases {
		outDT := reduceDType(c.op, tensor.Float64)
		oshape := reducedShape([]int{4, 3}, c.axes, false)
		for _, cs := range [][][]int{{{4}, {3}}, {{1, 1, 1, 1}, {1, 1, 1}}, {{3, 1}, {2, 1}}} {
			g := newGraph(t)
			got := g.compute(g.op(c.op, outDT, oshape, spec.Attrs{Axes: c.axes}, g.input(c.x, cs)))[0]
			checkArray(t, fmt.Sprintf("%s axes=%v chunks %v", c.op, c.axes, cs), got, outDT, oshape, c.want, 1e-13)
		}
	}
}

// TestReduceEmpty checks NumPy's identities for empty reductions and the
// error for reductions that have none.
func TestReduceEmpty(t *testing.T) {
	a := tensor.NewArray(tensor.Float64, []int{0, 3})
	for _, c := range []struct {
		op   string
		want []float64
	}{
		{tensor.OpSum, []float64{0, 0, 0}},
		{tensor.OpProd, []float64{1, 1, 1}},
		{tensor.OpAny, []float64{0, 0, 0}},
		{tensor.OpAll, []float64{1, 1, 1}},
		{tensor.OpCountNonzero, []float64{0, 0, 0}},
		{tensor.OpMean, []float64{nanV, nanV, nanV}},
	} {
		g := newGraph(t)
		dt := reduceDType(c.op, tensor.Float64)
		got := g.compute(g.op(c.op, dt, []int{3}, spec.Attrs{Axes: []int{0}}, g.input(a, [][]int{{0}, {2, 1}})))[0]
		checkArray(t, c.op, got, dt, []int{3}, c.want, 0)
	}
	for _, op := range []string{tensor.OpMin, tensor.OpMax, tensor.OpArgmax, tensor.OpNanmin} {
		g := newGraph(t)
		dt := reduceDType(op, tensor.Float64)
		if _, err := g.tryCompute(g.op(op, dt, []int{3}, spec.Attrs{Axes: []int{0}}, g.input(a, [][]int{{0}, {3}}))); err == nil {
			t.Errorf("%s of an empty axis: no error", op)
		}
	}
	// Reducing the non-empty axis gives an empty result, no error.
	g := newGraph(t)
	got := g.compute(g.op(tensor.OpMax, tensor.Float64, []int{0}, spec.Attrs{Axes: []int{1}}, g.input(a, [][]int{{0}, {3}})))[0]
	checkArray(t, "max of (0,3) over axis 1", got, tensor.Float64, []int{0}, nil, 0)
}

// TestReduceTree checks the shape of the tree: ceil(n/4) combine ops at the
// first level for n chunks along the reduced axis.
func TestReduceTree(t *testing.T) {
	g := newGraph(t)
	a := testValues(tensor.Float64, []int{17}, false)
	n := g.op(tensor.OpSum, tensor.Float64, []int{}, spec.Attrs{}, g.input(a, [][]int{splitChunks([]int{17}, 1)[0]}))
	cg, err := g.tile(n)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, op := range cg.Ops {
		count[string(op.Kind)]++
		if op.Kind == "sum.combine" && len(op.Inputs) > tile.ReduceCombine {
			t.Errorf("combine of %d inputs", len(op.Inputs))
		}
	}
	// 17 maps -> 5 combines (4,4,4,4,1 passes through) -> 2 -> 1.
	if count["sum.map"] != 17 || count["sum.combine"] != 4+1+1 || count["sum.final"] != 1 {
		t.Errorf("ops %v", count)
	}
}

// TestSumAccuracy checks that a float64 sum of many values is close to the
// exact sum (pairwise summation).
func TestSumAccuracy(t *testing.T) {
	const n = 1 << 20
	a := tensor.NewArray(tensor.Float64, []int{n})
	v := a.Float64s()
	for i := range v {
		v[i] = 0.1
	}
	g := newGraph(t)
	got := g.compute(g.op(tensor.OpSum, tensor.Float64, []int{}, spec.Attrs{}, g.input(a, [][]int{{n / 2, n / 2}})))[0].Float64s()[0]
	if math.Abs(got-0.1*n) > 1e-9 {
		t.Errorf("sum of 2^20 x 0.1 = %.17g, want %.17g", got, 0.1*n)
	}
}

func TestReduceErrors(t *testing.T) {
	ctx := context.Background()
	f := arrayOf(tensor.Float64, []int{2, 2}, 1, 2, 3, 4)
	cases := []*chunk.Op{
		{Kind: "sum.map", Inputs: []int{0}, Shape: []int{1, 2}, DType: tensor.Float64, Args: chunk.ElemArgs{}},
		{Kind: "sum.map", Inputs: []int{0}, Shape: []int{1, 2}, DType: tensor.Float64, Args: chunk.ReduceArgs{Op: tensor.OpSum, In: tensor.Float64, Axes: []int{5}}},
		{Kind: "sum.map", Inputs: []int{0}, Shape: []int{2, 2}, DType: tensor.Float64, Args: chunk.ReduceArgs{Op: tensor.OpSum, In: tensor.Float64, Axes: []int{0}}},
		{Kind: "argmax.map", Inputs: []int{0}, Shape: []int{1, 2, 2}, DType: tensor.Float64, Args: chunk.ReduceArgs{Op: tensor.OpArgmax, In: tensor.Float64, Axes: []int{0}}},
		{Kind: "sum.final", Inputs: []int{0}, Shape: []int{3}, DType: tensor.Float64, Args: chunk.ReduceArgs{Op: tensor.OpSum, In: tensor.Float64}},
		{Kind: "var.combine", Inputs: []int{0}, Shape: []int{3}, DType: tensor.Float64, Args: chunk.ReduceArgs{Op: tensor.OpVar, In: tensor.Float64}},
	}
	for _, op := range cases {
		if _, err := kernel.Run(ctx, op, []*tensor.Array{f}); err == nil {
			t.Errorf("%s %+v: no error", op.Kind, op.Args)
		}
	}
}

// TestReductionsRandom draws shapes, chunkings and axis sets at random and
// checks each reduction against refReduce.
func TestReductionsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		nd := r.IntN(4)
		shape := make([]int, nd)
		chunks := make([][]int, nd)
		for ax := range shape {
			shape[ax] = 1 + r.IntN(6)
			for left := shape[ax]; left > 0; {
				c := 1 + r.IntN(left)
				chunks[ax] = append(chunks[ax], c)
				left -= c
			}
		}
		op := tensor.Reductions[r.IntN(len(tensor.Reductions))]
		dt := []tensor.DType{tensor.Bool, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Float64}[r.IntN(5)]
		if dt == tensor.Bool && (op == tensor.OpVar || op == tensor.OpStd) {
			dt = tensor.Int32
		}
		var axes []int
		if r.IntN(3) > 0 {
			for ax := range shape {
				if r.IntN(2) == 0 {
					axes = append(axes, ax)
				}
			}
			if axes == nil {
				axes = []int{}
			}
		}
		if op == tensor.OpArgmin || op == tensor.OpArgmax {
			axes = nil
			if nd > 0 && r.IntN(2) == 0 {
				axes = []int{r.IntN(nd)}
			}
		}
		keep := r.IntN(2) == 0
		a := testValues(dt, shape, r.IntN(2) == 0)
		outDT := reduceDType(op, dt)
		want := refReduce(op, a, axes, 0, outDT)
		oshape := reducedShape(shape, axes, keep)
		g := newGraph(t)
		got := g.compute(g.op(op, outDT, oshape, spec.Attrs{Axes: axes, Keepdims: keep}, g.input(a, chunks)))[0]
		tol := 1e-12
		if outDT == tensor.Float32 {
			tol = 1e-6
		}
		checkArray(t, fmt.Sprintf("trial %d: %s %v%v axes=%v keep=%v chunks=%v", trial, op, dt, shape, axes, keep, chunks), got, outDT, oshape, want, tol)
	}
}
