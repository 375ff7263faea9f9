package tensortest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// randomArray fills an array of shape with small random values of mixed sign.
func randomArray(dt tensor.DType, shape []int, seed uint64) *tensor.Array {
	r := rand.New(rand.NewPCG(seed, 7))
	a := tensor.NewArray(dt, shape)
	for i := range a.Len() {
		switch dt {
		case tensor.Bool:
			if r.IntN(2) == 1 {
				a.Data[i] = 1
			}
		case tensor.Int32:
			a.Int32s()[i] = int32(r.IntN(201) - 100)
		case tensor.Int64:
			a.Int64s()[i] = int64(r.IntN(2000001) - 1000000)
		case tensor.Float32:
			a.Float32s()[i] = float32(r.NormFloat64())
		case tensor.Float64:
			a.Float64s()[i] = r.NormFloat64() * math.Exp(r.Float64()*4-2)
		}
	}
	return a
}

// checkMatmul compares got with a @ b computed element by element in dtype
// dt: integers and bools exactly, floats to a relative error of tol of the
// sum of the magnitudes of the products (the scale of rounding errors).
func checkMatmul(t *testing.T, what string, got, a, b *tensor.Array, dt tensor.DType, tol float64) {
	t.Helper()
	m, k, n := a.Shape[0], a.Shape[1], b.Shape[1]
	if got.DType != dt || !slices.Equal(got.Shape, []int{m, n}) {
		t.Fatalf("%s: got %v%v, want %v%v", what, got.DType, got.Shape, dt, []int{m, n})
	}
	a, b = kernel.ConvertChunk(a, dt), kernel.ConvertChunk(b, dt)
	for i := range m {
		for j := range n {
			var want, scale float64
			var wantInt int64
			var wantBool bool
			for l := range k {
				x, y := a.Float64At(i*k+l), b.Float64At(l*n+j)
				want += x * y
				scale += math.Abs(x * y)
				switch dt {
				case tensor.Int32:
					wantInt = int64(int32(wantInt) + a.Int32s()[i*k+l]*b.Int32s()[l*n+j])
				case tensor.Int64:
					wantInt += a.Int64s()[i*k+l] * b.Int64s()[l*n+j]
				case tensor.Bool:
					wantBool = wantBool || (x != 0 && y != 0)
				}
			}
			g := got.Float64At(i*n + j)
			var ok bool
			switch dt {
			case tensor.Int32, tensor.Int64:
				ok = g == float64(wantInt)
				want = float64(wantInt)
			case tensor.Bool:
				ok = (g != 0) == wantBool
				want = map[bool]float64{true: 1}[wantBool]
			default:
				ok = math.Abs(g-want) <= tol*scale
			}
			if !ok {
				t.Fatalf("%s: element (%d, %d) = %v, want %v", what, i, j, g, want)
			}
		}
	}
}

func TestMatmul(t *testing.T) {
	cases := []struct {
		m, k, n int
		da, db  tensor.DType
		out     tensor.DType
		tol     float64
		all     bool // every pair of chunkings, not a sample
	}{
		{5, 7, 3, tensor.Float64, tensor.Float64, tensor.Float64, 1e-12, true},
		{4, 5, 6, tensor.Float32, tensor.Float32, tensor.Float32, 1e-5, false},
		{4, 5, 6, tensor.Int32, tensor.Int32, tensor.Int32, 0, false},
		{4, 5, 6, tensor.Int64, tensor.Int64, tensor.Int64, 0, false},
		{4, 5, 6, tensor.Bool, tensor.Bool, tensor.Bool, 0, false},
		{3, 4, 5, tensor.Int32, tensor.Float64, tensor.Float64, 1e-12, false},
		{3, 4, 5, tensor.Bool, tensor.Int64, tensor.Int64, 0, false},
		{3, 4, 5, tensor.Float32, tensor.Int64, tensor.Float64, 1e-12, false},
		{3, 0, 4, tensor.Float64, tensor.Float64, tensor.Float64, 0, false},
		{3, 0, 4, tensor.Int64, tensor.Int64, tensor.Int64, 0, false},
		{0, 3, 2, tensor.Float64, tensor.Float64, tensor.Float64, 0, false},
		{2, 3, 0, tensor.Bool, tensor.Bool, tensor.Bool, 0, false},
		{1, 1, 1, tensor.Float64, tensor.Float64, tensor.Float64, 1e-12, false},
	}
	for ci, tc := range cases {
		a := randomArray(tc.da, []int{tc.m, tc.k}, uint64(2*ci))
		b := randomArray(tc.db, []int{tc.k, tc.n}, uint64(2*ci+1))
		ac, bc := chunkings(a.Shape), chunkings(b.Shape)
		for v := range len(ac) * len(bc) {
			i, j := v/len(bc), v%len(bc)
			if !tc.all && i != j%len(ac) && j != i%len(bc) {
				continue
			}
			c := newShapeCase()
			na, nb := c.input(a, ac[i]), c.input(b, bc[j])
			out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{na, nb}, Shape: []int{tc.m, tc.n}, DType: tc.out})
			got, _ := c.run(t, out)
			checkMatmul(t, "", got, a, b, tc.out, tc.tol)
		}
	}
}

// TestMatmulLarge multiplies blocks larger than the kernel's cache blocks,
// for every dtype.
func TestMatmulLarge(t *testing.T) {
	for _, dt := range allDTypes {
		a := randomArray(dt, []int{70, 300}, 1)
		b := randomArray(dt, []int{300, 260}, 2)
		c := newShapeCase()
		na := c.input(a, [][]int{{40, 30}, {150, 150}})
		nb := c.input(b, [][]int{{100, 200}, {260}})
		out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{na, nb}, Shape: []int{70, 260}, DType: dt})
		got, _ := c.run(t, out)
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		checkMatmul(t, dt.String(), got, a, b, dt, tol)
	}
}

// TestMatmulTree checks the ops of a product whose contracted axis has nine
// chunks as wide as the output blocks are tall: three "matmul" ops of three
// block products an output block, their sums added by one "matmul.sum".
func TestMatmulTree(t *testing.T) {
	a := randomArray(tensor.Float64, []int{4, 9}, 3)
	b := randomArray(tensor.Float64, []int{9, 2}, 4)
	c := newShapeCase()
	na := c.input(a, [][]int{{1, 1, 1, 1}, tile.ReshapeSplit(9, 1)})
	nb := c.input(b, [][]int{{4, 5}, {2}})
	out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{na, nb}, Shape: []int{4, 2}, DType: tensor.Float64})
	got, cg := c.run(t, out)
	checkMatmul(t, "tree", got, a, b, tensor.Float64, 1e-12)
	kinds := map[string]int{}
	for _, op := range cg.Ops {
		kinds[string(op.Kind)]++
		if op.Kind == chunk.KindMatmulSum && len(op.Inputs) > tile.MatmulCombine {
			t.Errorf("sum op %d adds %d chunks", op.Key, len(op.Inputs))
		}
		if op.Kind == chunk.KindMatmul && len(op.Inputs) != 6 {
			t.Errorf("matmul op %d has %d inputs, want 3 pairs", op.Key, len(op.Inputs))
		}
	}
	// B's k chunks {4, 5} are read as views of nine blocks along k, no
	// copy made.
	want := map[string]int{"stored": 36 + 2, "assemble": 0, "matmul": 12, "matmul.sum": 4}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %q ops, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
}

// TestMatmulOpCount counts the ops of a 4000x4000 @ 4000x4000 product in
// chunks of 1000: 16 + 16 stored chunks and one op for each of the 16
// output blocks, which accumulates its four block products.
func TestMatmulOpCount(t *testing.T) {
	c := newShapeCase()
	var ins []*spec.Node
	for _, name := range []string{"a", "b"} {
		chunks := [][]int{tile.ReshapeSplit(4000, 1000), tile.ReshapeSplit(4000, 1000)}
		tt := &tensor.TiledTensor{Shape: []int{4000, 4000}, DType: tensor.Float64, Chunks: chunks}
		for k := range 16 {
			tt.Keys = append(tt.Keys, uint64(len(c.env)*100+k+1))
		}
		c.env[name] = tt
		ins = append(ins, c.add(&spec.Node{Op: tensor.OpInput, Shape: tt.Shape, DType: tensor.Float64, Chunks: chunks, Attrs: spec.Attrs{Name: name}}))
	}
	out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: ins, Shape: []int{4000, 4000}, DType: tensor.Float64})
	cg, err := c.tile(out)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, op := range cg.Ops {
		kinds[string(op.Kind)]++
	}
	if len(cg.Ops) != 48 || kinds["stored"] != 32 || kinds["matmul"] != 16 {
		t.Errorf("%d ops %v, want 48: 32 stored, 16 matmul", len(cg.Ops), kinds)
	}
}

// TestMatmulKernelPairs runs one "matmul" op on pairs of blocks of mixed
// dtypes and contracted lengths, an empty one included, against the
// product of the blocks laid side by side.
func TestMatmulKernelPairs(t *testing.T) {
	ks := []int{3, 0, 5, 2}
	for _, dt := range allDTypes {
		var in []*tensor.Array
		var whole [2]*tensor.Array // A's blocks side by side, B's stacked, in dt
		for p, k := range ks {
			// The first block of each pair is in the output dtype, the
			// second in another one, which the kernel converts.
			a := randomArray(dt, []int{4, k}, uint64(10*p))
			b := randomArray(allDTypes[(p+1)%len(allDTypes)], []int{k, 6}, uint64(10*p+1))
			in = append(in, a, b)
			whole[0] = concatArrays(t, whole[0], kernel.ConvertChunk(a, dt), 1)
			whole[1] = concatArrays(t, whole[1], kernel.ConvertChunk(b, dt), 0)
		}
		op := &chunk.Op{Kind: chunk.KindMatmul, Inputs: make([]int, len(in)), Shape: []int{4, 6}, DType: dt}
		got, err := kernel.Run(t.Context(), op, in)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		checkMatmul(t, dt.String(), got, whole[0], whole[1], dt, tol)
	}
	// Under an allocator that hands out uncleared memory when the kernel
	// says it sets every element, the products must still be exact: a
	// float product of only empty pairs is zero, and an empty first pair
	// does not make the second one add to garbage.
	dirty := tensor.WithAlloc(t.Context(), func(dt tensor.DType, shape []int, zero bool) *tensor.Array {
		a := tensor.NewArray(dt, shape)
		if !zero {
			for i := range a.Data {
				a.Data[i] = 0x7f
			}
		}
		return a
	})
	for _, ks := range [][]int{{0, 0}, {0, 3}, {2, 0, 3}} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32, tensor.Int64} {
			var in []*tensor.Array
			var whole [2]*tensor.Array
			for p, k := range ks {
				a, b := randomArray(dt, []int{2, k}, uint64(p)), randomArray(dt, []int{k, 3}, uint64(p+5))
				in = append(in, a, b)
				whole[0], whole[1] = concatArrays(t, whole[0], a, 1), concatArrays(t, whole[1], b, 0)
			}
			op := &chunk.Op{Kind: chunk.KindMatmul, Inputs: make([]int, len(in)), Shape: []int{2, 3}, DType: dt}
			got, err := kernel.Run(dirty, op, in)
			if err != nil {
				t.Fatal(err)
			}
			checkMatmul(t, fmt.Sprintf("%v k %v, dirty output", dt, ks), got, whole[0], whole[1], dt, 1e-5)
		}
	}
	for _, tc := range []struct {
		name string
		in   []*tensor.Array
	}{
		{"odd inputs", []*tensor.Array{tensor.NewArray(tensor.Float64, []int{4, 3})}},
		{"misaligned", []*tensor.Array{tensor.NewArray(tensor.Float64, []int{4, 3}), tensor.NewArray(tensor.Float64, []int{2, 6})}},
		{"wrong rows", []*tensor.Array{tensor.NewArray(tensor.Float64, []int{4, 3}), tensor.NewArray(tensor.Float64, []int{3, 6}), tensor.NewArray(tensor.Float64, []int{5, 3}), tensor.NewArray(tensor.Float64, []int{3, 6})}},
	} {
		op := &chunk.Op{Kind: chunk.KindMatmul, Inputs: make([]int, len(tc.in)), Shape: []int{4, 6}, DType: tensor.Float64}
		if _, err := kernel.Run(t.Context(), op, tc.in); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// concatArrays joins 2-D arrays x (nil: none yet) and y along axis.
func concatArrays(t *testing.T, x, y *tensor.Array, axis int) *tensor.Array {
	t.Helper()
	if x == nil {
		return y
	}
	shape := slices.Clone(x.Shape)
	shape[axis] += y.Shape[axis]
	out := tensor.NewArray(x.DType, shape)
	for i := range shape[0] {
		for j := range shape[1] {
			src, si, sj := x, i, j
			if axis == 0 && i >= x.Shape[0] {
				src, si = y, i-x.Shape[0]
			} else if axis == 1 && j >= x.Shape[1] {
				src, sj = y, j-x.Shape[1]
			}
			copy(out.Data[(i*shape[1]+j)*x.DType.Size():], src.Data[(si*src.Shape[1]+sj)*x.DType.Size():][:x.DType.Size()])
		}
	}
	return out
}

func TestMatmulErrors(t *testing.T) {
	for _, tc := range []struct{ a, b, out []int }{
		{[]int{2, 3}, []int{4, 2}, []int{2, 2}},
		{[]int{2, 3}, []int{3}, []int{2}},
		{[]int{2, 3, 1}, []int{3, 2}, []int{2, 2}},
		{[]int{2, 3}, []int{3, 2}, []int{2, 3}},
	} {
		c := newShapeCase()
		whole := func(s []int) [][]int {
			cs := make([][]int, len(s))
			for ax, n := range s {
				cs[ax] = []int{n}
			}
			return cs
		}
		na := c.input(rampArray(tensor.Float64, tc.a), whole(tc.a))
		nb := c.input(rampArray(tensor.Float64, tc.b), whole(tc.b))
		out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{na, nb}, Shape: tc.out, DType: tensor.Float64})
		if _, err := c.tile(out); err == nil {
			t.Errorf("%v @ %v -> %v: no error", tc.a, tc.b, tc.out)
		}
	}
}

// TestMatmulRandom multiplies randomly chunked operands of random sizes
// (zero included) and dtypes, the output dtype promoted as NumPy does.
func TestMatmulRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		m, k, n := r.IntN(10), r.IntN(10), r.IntN(10)
		da, db := allDTypes[r.IntN(len(allDTypes))], allDTypes[r.IntN(len(allDTypes))]
		dt := tensor.Promote(da, db)
		a := randomArray(da, []int{m, k}, uint64(2*i))
		b := randomArray(db, []int{k, n}, uint64(2*i+1))
		c := newShapeCase()
		na := c.input(a, [][]int{randomChunks(r, m), randomChunks(r, k)})
		nb := c.input(b, [][]int{randomChunks(r, k), randomChunks(r, n)})
		out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{na, nb}, Shape: []int{m, n}, DType: dt})
		got, _ := c.run(t, out)
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		checkMatmul(t, fmt.Sprintf("%v%v @ %v%v chunks %v, %v", da, a.Shape, db, b.Shape, na.Chunks, nb.Chunks), got, a, b, dt, tol)
	}
}

// transposed returns the transpose of the 2-D array a.
func transposed(a *tensor.Array) *tensor.Array {
	r, c := a.Shape[0], a.Shape[1]
	out := tensor.NewArray(a.DType, []int{c, r})
	size := a.DType.Size()
	for i := range r {
		for j := range c {
			copy(out.Data[(j*r+i)*size:][:size], a.Data[(i*c+j)*size:][:size])
		}
	}
	return out
}

// TestMatmulViews multiplies transposed operands and operands whose chunks
// do not align, for every dtype and several chunkings: the products read
// views of the stored chunks (no transpose nor assemble op is left) and
// equal the products of the arrays.
func TestMatmulViews(t *testing.T) {
	for _, dt := range allDTypes {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		for _, tc := range []struct {
			name                 string
			x, y                 [][]int // chunks of x (9 x 7) and y (7 x 9 or 9 x 7)
			transX, transY, same bool
		}{
			{name: "x.T @ x", x: [][]int{{2, 3, 4}, {7}}, transX: true, same: true},
			{name: "x.T @ x rows of one", x: [][]int{slices.Repeat([]int{1}, 9), {3, 4}}, transX: true, same: true},
			{name: "x @ x.T", x: [][]int{{4, 5}, {2, 5}}, transY: true, same: true},
			{name: "x @ y.T", x: [][]int{{9}, {2, 5}}, y: [][]int{{4, 5}, {3, 4}}, transY: true},
			{name: "x.T @ y.T", x: [][]int{{5, 4}, {7}}, y: [][]int{{3, 3, 1}, {9}}, transX: true, transY: true},
			{name: "misaligned k", x: [][]int{{9}, {2, 5}}, y: [][]int{{3, 4}, {9}}},
		} {
			c := newShapeCase()
			stored := func(shape []int, chunks [][]int, seed uint64) (*tensor.Array, *spec.Node) {
				a := randomArray(dt, shape, seed)
				return a, c.input(a, chunks)
			}
			var a, b *tensor.Array
			var na, nb *spec.Node
			xShape := []int{chunkSum(tc.x[0]), chunkSum(tc.x[1])}
			xs, nx := stored(xShape, tc.x, 11)
			a, na = xs, nx
			if tc.transX {
				a = transposed(xs)
				na = c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{nx}, Shape: []int{xShape[1], xShape[0]}, DType: dt, Attrs: spec.Attrs{Perm: []int{1, 0}}})
			}
			switch {
			case tc.same && tc.transY:
				b = transposed(xs)
				nb = c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{nx}, Shape: []int{xShape[1], xShape[0]}, DType: dt, Attrs: spec.Attrs{Perm: []int{1, 0}}})
			case tc.same:
				b, nb = xs, nx
			default:
				yShape := []int{chunkSum(tc.y[0]), chunkSum(tc.y[1])}
				ys, ny := stored(yShape, tc.y, 12)
				b, nb = ys, ny
				if tc.transY {
					b = transposed(ys)
					nb = c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{ny}, Shape: []int{yShape[1], yShape[0]}, DType: dt, Attrs: spec.Attrs{Perm: []int{1, 0}}})
				}
			}
			out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{na, nb}, Shape: []int{a.Shape[0], b.Shape[1]}, DType: dt})
			got, cg := c.run(t, out)
			what := fmt.Sprintf("%v %s", dt, tc.name)
			checkMatmul(t, what, got, a, b, dt, tol)
			for _, op := range cg.Ops {
				// x.T @ x's blocks below the diagonal are transposes of
				// those above; no other transpose, nor any copy, is made.
				if op.Kind == chunk.KindTranspose && tc.same && len(op.Inputs) == 1 && strings.HasPrefix(string(cg.Ops[op.Inputs[0]].Kind), "matmul") {
					continue
				}
				if op.Kind == chunk.KindTranspose || op.Kind == chunk.KindAssemble {
					t.Errorf("%s: a %s op is left", what, op.Kind)
				}
			}
		}
	}
}

// TestMatmulSymmetricTiling checks that x.T @ x and x @ x.T compute only
// the blocks on and above the diagonal, and take the others as their
// transposes.
func TestMatmulSymmetricTiling(t *testing.T) {
	for _, transX := range []bool{true, false} {
		c := newShapeCase()
		xs := randomArray(tensor.Float64, []int{12, 12}, 3)
		nx := c.input(xs, [][]int{{4, 4, 4}, {4, 4, 4}})
		xt := c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{nx}, Shape: []int{12, 12}, DType: tensor.Float64, Attrs: spec.Attrs{Perm: []int{1, 0}}})
		a, b, na, nb := transposed(xs), xs, xt, nx
		if !transX {
			a, b, na, nb = xs, transposed(xs), nx, xt
		}
		out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{na, nb}, Shape: []int{12, 12}, DType: tensor.Float64})
		got, cg := c.run(t, out)
		checkMatmul(t, fmt.Sprintf("transX=%v", transX), got, a, b, tensor.Float64, 1e-12)
		kinds := map[string]int{}
		for _, op := range cg.Ops {
			kinds[string(op.Kind)]++
		}
		if kinds["matmul"] != 6 || kinds["transpose"] != 3 {
			t.Errorf("transX=%v: ops %v, want 6 matmul (the upper triangle of 3 x 3 blocks) and 3 transpose", transX, kinds)
		}
	}
}

func chunkSum(cs []int) int {
	s := 0
	for _, c := range cs {
		s += c
	}
	return s
}

// TestGramOfRowBands: x.T @ x of x in bands of rows whose output is too
// large for one block (2100² > the 4 Mi elements a block may hold) is cut
// alike along both axes, so that it is tiled as symmetric: before, its
// rows and columns were cut apart (blocks of 1050 x 2100) and every
// block was a product, twice the flops NumPy's syrk makes. The result is
// x.T @ x.
func TestGramOfRowBands(t *testing.T) {
	c := newShapeCase()
	xs := randomArray(tensor.Float64, []int{30, 2100}, 5)
	nx := c.input(xs, [][]int{{10, 10, 10}, {2100}})
	xt := c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{nx}, Shape: []int{2100, 30}, DType: tensor.Float64, Attrs: spec.Attrs{Perm: []int{1, 0}}})
	out := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{xt, nx}, Shape: []int{2100, 2100}, DType: tensor.Float64})
	got, cg := c.run(t, out)
	checkMatmul(t, "x.T @ x", got, transposed(xs), xs, tensor.Float64, 1e-12)
	kinds := map[string]int{}
	for _, op := range cg.Ops {
		kinds[string(op.Kind)]++
	}
	if kinds["matmul"] != 3 || kinds["transpose"] != 1 {
		t.Errorf("ops %v, want 3 matmul (the upper triangle of 2 x 2 blocks) and 1 transpose", kinds)
	}
}
