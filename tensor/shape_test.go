package tensor

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A shapeCase holds the stored chunks of the inputs of a hand-built graph.
type shapeCase struct {
	env    mapEnv
	stored map[uint64]*Array
	nodes  []*Node
}

func newShapeCase() *shapeCase {
	return &shapeCase{env: mapEnv{}, stored: map[uint64]*Array{}}
}

// input cuts a into chunks, stores them, and adds an OpInput node naming them.
func (c *shapeCase) input(a *Array, chunks [][]int) *Node {
	name := fmt.Sprintf("in%d", len(c.nodes))
	tt := &TiledTensor{Shape: a.Shape, DType: a.DType, Chunks: chunks}
	offs := ChunkOffsets(chunks)
	grid := GridShape(chunks)
	for k := 0; k < NumElements(grid); k++ {
		idx := unravel(k, grid)
		shape := chunkShape(chunks, grid, k)
		sel := make([]Slice, len(shape))
		for ax := range sel {
			sel[ax] = Slice{Start: offs[ax][idx[ax]], Step: 1, Len: shape[ax]}
		}
		part := NewArray(a.DType, shape)
		copyStrided(part, make([]int, len(shape)), a, sel)
		id := uint64(1000 + len(c.stored))
		c.stored[id] = part
		tt.Keys = append(tt.Keys, id)
	}
	c.env[name] = tt
	return c.add(&Node{Op: OpInput, Shape: a.Shape, DType: a.DType, Chunks: chunks, Attrs: Attrs{Name: name}})
}

// add appends n to the graph, giving it the next ID.
func (c *shapeCase) add(n *Node) *Node {
	n.ID = len(c.nodes)
	c.nodes = append(c.nodes, n)
	return n
}

// run tiles a graph whose output is out and computes it.
func (c *shapeCase) run(t *testing.T, out *Node) (*Array, *ChunkGraph) {
	t.Helper()
	cg, err := c.tile(out)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := Compute(context.Background(), cg, func(id uint64) (*Array, error) { return c.stored[id], nil })
	if err != nil {
		t.Fatal(err)
	}
	return outs[0], cg
}

func (c *shapeCase) tile(out *Node) (*ChunkGraph, error) {
	g := &Graph{Nodes: c.nodes, Outputs: []Output{{Name: "out", Node: out}}}
	return Tile(g, c.env)
}

// rampArray returns an array of shape whose elements are distinct where the
// dtype allows it.
func rampArray(dt DType, shape []int) *Array {
	a := NewArray(dt, shape)
	for i := range a.Len() {
		switch dt {
		case Bool:
			if i%3 == 0 {
				a.Data[i] = 1
			}
		case Int32:
			a.Int32s()[i] = int32(i*7 - 11)
		case Int64:
			a.Int64s()[i] = int64(i)*1000003 - 5
		case Float32:
			a.Float32s()[i] = float32(i)*0.25 - 3
		case Float64:
			a.Float64s()[i] = float64(i)*0.125 + 0.5
		}
	}
	return a
}

var allDTypes = []DType{Bool, Int32, Int64, Float32, Float64}

// axisChunkings lists chunkings of an axis of length n: one chunk, ragged
// chunks, and one element a chunk.
func axisChunkings(n int) [][]int {
	if n == 0 {
		return [][]int{{0}}
	}
	out := [][]int{{n}}
	if n > 2 {
		c := (n + 1) / 2
		out = append(out, []int{c, n - c}) // ragged when n is odd
		out = append(out, reshapeSplit(n, 2))
	}
	if n > 1 {
		out = append(out, reshapeSplit(n, 1))
	}
	return out
}

// chunkings is every combination of axisChunkings over shape.
func chunkings(shape []int) [][][]int {
	out := [][][]int{{}}
	for _, n := range shape {
		var next [][][]int
		for _, prefix := range out {
			for _, cs := range axisChunkings(n) {
				next = append(next, append(append([][]int(nil), prefix...), cs))
			}
		}
		out = next
	}
	return out
}

// sameArray reports how got differs from want, bit for bit.
func sameArray(got, want *Array) error {
	if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		return fmt.Errorf("got %v%v, want %v%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	if !bytes.Equal(got.Data, want.Data) {
		return fmt.Errorf("data differs:\n got %v\nwant %v", arrayValues(got), arrayValues(want))
	}
	return nil
}

func arrayValues(a *Array) []float64 {
	v := make([]float64, a.Len())
	for i := range v {
		v[i] = a.Float64At(i)
	}
	return v
}

// elementAt copies element idx of a (as bytes).
func elementAt(a *Array, idx []int) []byte {
	es := a.DType.Size()
	off := ravel(idx, a.Shape) * es
	return a.Data[off : off+es]
}

func refTranspose(a *Array, perm []int) *Array {
	shape := make([]int, len(perm))
	for ax, p := range perm {
		shape[ax] = a.Shape[p]
	}
	out := NewArray(a.DType, shape)
	es := a.DType.Size()
	src := make([]int, len(perm))
	for i := range out.Len() {
		for ax, v := range unravel(i, shape) {
			src[perm[ax]] = v
		}
		copy(out.Data[i*es:], elementAt(a, src))
	}
	return out
}

func TestTranspose(t *testing.T) {
	cases := []struct {
		shape []int
		perm  []int
	}{
		{[]int{5, 7}, []int{1, 0}},
		{[]int{2, 3, 4}, []int{0, 1, 2}},
		{[]int{2, 3, 4}, []int{0, 2, 1}},
		{[]int{2, 3, 4}, []int{1, 0, 2}},
		{[]int{2, 3, 4}, []int{1, 2, 0}},
		{[]int{2, 3, 4}, []int{2, 0, 1}},
		{[]int{2, 3, 4}, []int{2, 1, 0}},
		{[]int{4, 1, 3}, []int{2, 0, 1}},
		{[]int{}, []int{}},
		{[]int{0, 3}, []int{1, 0}},
		{[]int{70, 45}, []int{1, 0}},
		{[]int{3, 2, 33, 2}, []int{2, 3, 0, 1}},
	}
	for ci, tc := range cases {
		dt := allDTypes[ci%len(allDTypes)]
		a := rampArray(dt, tc.shape)
		want := refTranspose(a, tc.perm)
		for _, chunks := range chunkings(tc.shape) {
			if NumElements(GridShape(chunks)) > 200 {
				continue
			}
			c := newShapeCase()
			in := c.input(a, chunks)
			out := c.add(&Node{Op: OpTranspose, Inputs: []*Node{in}, Shape: want.Shape, DType: dt, Attrs: Attrs{Perm: tc.perm}})
			got, _ := c.run(t, out)
			if err := sameArray(got, want); err != nil {
				t.Errorf("%v%v chunks %v perm %v: %v", dt, tc.shape, chunks, tc.perm, err)
			}
		}
	}
}

func TestTransposeErrors(t *testing.T) {
	for _, perm := range [][]int{{0}, {0, 0}, {1, 2}, {-1, 0}} {
		c := newShapeCase()
		in := c.input(rampArray(Int64, []int{2, 3}), [][]int{{2}, {3}})
		out := c.add(&Node{Op: OpTranspose, Inputs: []*Node{in}, Shape: []int{3, 2}, DType: Int64, Attrs: Attrs{Perm: perm}})
		if _, err := c.tile(out); err == nil || !strings.Contains(err.Error(), "axes") {
			t.Errorf("perm %v: error %v, want one about axes", perm, err)
		}
	}
}

func refSlice(a *Array, sls []Slice) *Array {
	shape := make([]int, len(sls))
	for ax, s := range sls {
		shape[ax] = s.Len
	}
	out := NewArray(a.DType, shape)
	es := a.DType.Size()
	src := make([]int, len(sls))
	for i := range out.Len() {
		for ax, v := range unravel(i, shape) {
			src[ax] = sls[ax].Start + v*sls[ax].Step
		}
		copy(out.Data[i*es:], elementAt(a, src))
	}
	return out
}

func TestSlice(t *testing.T) {
	cases := []struct {
		shape []int
		sls   []Slice
	}{
		{[]int{7, 5}, []Slice{{1, 2, 3}, {4, -1, 5}}},
		{[]int{7, 5}, []Slice{{6, -2, 4}, {0, 1, 5}}},
		{[]int{7, 5}, []Slice{{6, -1, 7}, {4, -3, 2}}},
		{[]int{7, 5}, []Slice{{0, 1, 7}, {0, 1, 5}}},
		{[]int{7, 5}, []Slice{{3, 1, 0}, {1, 1, 3}}},
		{[]int{7, 5}, []Slice{{0, 3, 3}, {2, 5, 1}}},
		{[]int{7, 5}, []Slice{{5, -7, 1}, {0, 1, 0}}},
		{[]int{4, 3, 6}, []Slice{{3, -1, 4}, {1, 1, 2}, {0, 2, 3}}},
		{[]int{4, 3, 6}, []Slice{{2, 1, 1}, {2, -1, 3}, {5, -5, 2}}},
		{[]int{0, 3}, []Slice{{0, 1, 0}, {0, 1, 3}}},
		{[]int{}, []Slice{}},
	}
	for ci, tc := range cases {
		dt := allDTypes[ci%len(allDTypes)]
		a := rampArray(dt, tc.shape)
		want := refSlice(a, tc.sls)
		for _, chunks := range chunkings(tc.shape) {
			if NumElements(GridShape(chunks)) > 200 {
				continue
			}
			c := newShapeCase()
			in := c.input(a, chunks)
			out := c.add(&Node{Op: OpSlice, Inputs: []*Node{in}, Shape: want.Shape, DType: dt, Attrs: Attrs{Slices: tc.sls}})
			got, cg := c.run(t, out)
			if err := sameArray(got, want); err != nil {
				t.Errorf("%v%v chunks %v slices %v: %v", dt, tc.shape, chunks, tc.sls, err)
			}
			for _, op := range cg.Ops {
				if op.Stored == 0 && len(op.Inputs) > 1 {
					t.Errorf("%v chunks %v slices %v: op %d reads %d chunks", tc.shape, chunks, tc.sls, op.Key, len(op.Inputs))
				}
			}
		}
	}
}

// TestSliceReusesWholeChunks checks that a slice selecting whole chunks emits
// no op for them.
func TestSliceReusesWholeChunks(t *testing.T) {
	c := newShapeCase()
	in := c.input(rampArray(Float64, []int{6, 4}), [][]int{{2, 2, 2}, {4}})
	out := c.add(&Node{Op: OpSlice, Inputs: []*Node{in}, Shape: []int{4, 4}, DType: Float64,
		Attrs: Attrs{Slices: []Slice{{2, 1, 4}, {0, 1, 4}}}})
	cg, err := c.tile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(cg.Ops) != 3 {
		t.Errorf("%d ops, want only the 3 stored chunks", len(cg.Ops))
	}
}

func TestSliceErrors(t *testing.T) {
	for _, sls := range [][]Slice{
		{{0, 1, 4}},
		{{0, 1, 5}, {0, 1, 3}},
		{{3, 1, 2}, {0, 1, 3}},
		{{0, -1, 2}, {0, 1, 3}},
		{{0, 0, 2}, {0, 1, 3}},
		{{0, 1, -1}, {0, 1, 3}},
	} {
		c := newShapeCase()
		in := c.input(rampArray(Int64, []int{4, 3}), [][]int{{2, 2}, {3}})
		shape := make([]int, len(sls))
		for ax, s := range sls {
			shape[ax] = max(s.Len, 0)
		}
		out := c.add(&Node{Op: OpSlice, Inputs: []*Node{in}, Shape: shape, DType: Int64, Attrs: Attrs{Slices: sls}})
		if _, err := c.tile(out); err == nil {
			t.Errorf("slices %v: no error", sls)
		}
	}
}

func refConcat(parts []*Array, axis int, dt DType) *Array {
	shape := append([]int(nil), parts[0].Shape...)
	shape[axis] = 0
	for _, p := range parts {
		shape[axis] += p.Shape[axis]
	}
	out := NewArray(dt, shape)
	es := dt.Size()
	for i := range out.Len() {
		idx := unravel(i, shape)
		p := 0
		for idx[axis] >= parts[p].Shape[axis] {
			idx[axis] -= parts[p].Shape[axis]
			p++
		}
		conv := convertChunk(parts[p], dt)
		copy(out.Data[i*es:], elementAt(conv, idx))
	}
	return out
}

func TestConcat(t *testing.T) {
	cases := []struct {
		axis   int
		shapes [][]int
		dtypes []DType
		out    DType
	}{
		{0, [][]int{{3, 4}, {2, 4}}, []DType{Float64, Float64}, Float64},
		{1, [][]int{{3, 2}, {3, 5}}, []DType{Int32, Int32}, Int32},
		{1, [][]int{{2, 1, 3}, {2, 2, 3}, {2, 3, 3}}, []DType{Bool, Bool, Bool}, Bool},
		{0, [][]int{{3, 4}, {0, 4}, {2, 4}}, []DType{Int64, Int64, Int64}, Int64},
		{0, [][]int{{0, 2}, {0, 2}}, []DType{Float32, Float32}, Float32},
		{0, [][]int{{5}, {3}}, []DType{Int32, Float64}, Float64},
		{1, [][]int{{2, 2}, {2, 3}}, []DType{Bool, Int64}, Int64},
		{0, [][]int{{3, 2}}, []DType{Int32}, Float32},
	}
	for _, tc := range cases {
		var arrs []*Array
		for i, s := range tc.shapes {
			arrs = append(arrs, rampArray(tc.dtypes[i], s))
		}
		want := refConcat(arrs, tc.axis, tc.out)
		// Try each input chunked every way, the others chunked alike.
		for v := range 4 {
			c := newShapeCase()
			var ins []*Node
			for _, a := range arrs {
				cs := chunkings(a.Shape)
				ins = append(ins, c.input(a, cs[(v+len(ins))%len(cs)]))
			}
			out := c.add(&Node{Op: OpConcat, Inputs: ins, Shape: want.Shape, DType: tc.out, Attrs: Attrs{Axes: []int{tc.axis}}})
			got, cg := c.run(t, out)
			if err := sameArray(got, want); err != nil {
				t.Errorf("concat %v axis %d variant %d: %v", tc.shapes, tc.axis, v, err)
			}
			// Along the axis, the output chunks are the inputs' chunks.
			var wantN int
			for _, in := range ins {
				if in.Shape[tc.axis] > 0 {
					wantN += len(in.Chunks[tc.axis])
				}
			}
			if gotN := len(cg.Outputs[0].Chunks[tc.axis]); wantN > 0 && gotN != wantN {
				t.Errorf("concat %v axis %d variant %d: %d chunks along the axis, want %d", tc.shapes, tc.axis, v, gotN, wantN)
			}
		}
	}
}

func TestConcatErrors(t *testing.T) {
	for _, tc := range []struct {
		axis   int
		shapes [][]int
	}{
		{0, [][]int{{3, 4}, {3, 5}}},
		{2, [][]int{{3, 4}, {3, 4}}},
		{0, [][]int{{3, 4}, {3}}},
		{0, [][]int{{3, 4}}},
		{0, nil},
	} {
		c := newShapeCase()
		var ins []*Node
		for _, s := range tc.shapes {
			ins = append(ins, c.input(rampArray(Int64, s), [][]int{{s[0]}, {s[len(s)-1]}}[:len(s)]))
		}
		out := c.add(&Node{Op: OpConcat, Inputs: ins, Shape: []int{6, 4}, DType: Int64, Attrs: Attrs{Axes: []int{tc.axis}}})
		if _, err := c.tile(out); err == nil {
			t.Errorf("concat %v axis %d: no error", tc.shapes, tc.axis)
		}
	}
}

func TestRefineChunks(t *testing.T) {
	for _, tc := range []struct {
		in   [][]int
		want []int
	}{
		{[][]int{{3, 4}, {2, 2, 3}}, []int{2, 1, 1, 3}},
		{[][]int{{7}, {7}}, []int{7}},
		{[][]int{{0}, {0}}, []int{0}},
		{[][]int{{2, 0, 3}, {5}}, []int{2, 3}},
	} {
		if got := refineChunks(tc.in...); !slices.Equal(got, tc.want) {
			t.Errorf("refineChunks%v = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestCopyStridedNegativeSteps checks the assemble kernel's copy with
// negative steps on every axis, the innermost included.
func TestCopyStridedNegativeSteps(t *testing.T) {
	src := rampArray(Int64, []int{4, 5})
	dst := NewArray(Int64, []int{3, 4})
	copyStrided(dst, []int{1, 1}, src, []Slice{{3, -2, 2}, {4, -1, 3}})
	want := []int64{0, 0, 0, 0, 0, 19, 18, 17, 0, 9, 8, 7}
	for i, w := range want {
		if w != 0 {
			w = w*1000003 - 5
		}
		if got := dst.Int64s()[i]; got != w {
			t.Fatalf("element %d = %d, want %d (all %v)", i, got, w, dst.Int64s())
		}
	}
}

// BenchmarkTransposeKernel transposes a 1000x1000 float64 chunk.
func BenchmarkTransposeKernel(b *testing.B) {
	op := &ChunkOp{Kind: "transpose", Inputs: []int{0}, Shape: []int{1000, 1000}, DType: Float64, Args: TransposeArgs{Perm: []int{1, 0}}}
	in := []*Array{rampArray(Float64, []int{1000, 1000})}
	b.SetBytes(int64(in[0].NBytes()))
	for b.Loop() {
		if _, err := Run(b.Context(), op, in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSliceRandom slices randomly chunked tensors with random steps,
// negative and empty ones included.
func TestSliceRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		shape := make([]int, 1+r.IntN(3))
		chunks := make([][]int, len(shape))
		sls := make([]Slice, len(shape))
		for ax := range shape {
			n := r.IntN(8)
			shape[ax] = n
			chunks[ax] = randomChunks(r, n)
			if n == 0 {
				sls[ax] = Slice{Start: 0, Step: 1, Len: 0}
				continue
			}
			step := 1 + r.IntN(3)
			if r.IntN(2) == 0 {
				step = -step
			}
			start := r.IntN(n)
			most := (n-1-start)/step + 1
			if step < 0 {
				most = start/-step + 1
			}
			sls[ax] = Slice{Start: start, Step: step, Len: r.IntN(most + 1)}
		}
		dt := allDTypes[r.IntN(len(allDTypes))]
		a := rampArray(dt, shape)
		want := refSlice(a, sls)
		c := newShapeCase()
		in := c.input(a, chunks)
		out := c.add(&Node{Op: OpSlice, Inputs: []*Node{in}, Shape: want.Shape, DType: dt, Attrs: Attrs{Slices: sls}})
		got, _ := c.run(t, out)
		if err := sameArray(got, want); err != nil {
			t.Fatalf("%v%v chunks %v slices %v: %v", dt, shape, chunks, sls, err)
		}
	}
}

// TestConcatRandom concatenates 2 or 3 randomly chunked tensors of random
// dtypes along a random axis.
func TestConcatRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		nd := 1 + r.IntN(3)
		axis := r.IntN(nd)
		base := make([]int, nd)
		for ax := range base {
			base[ax] = r.IntN(5)
		}
		c := newShapeCase()
		var arrs []*Array
		var ins []*Node
		var dt DType
		for i := range 2 + r.IntN(2) {
			shape := append([]int(nil), base...)
			shape[axis] = r.IntN(6)
			chunks := make([][]int, nd)
			for ax, n := range shape {
				chunks[ax] = randomChunks(r, n)
			}
			d := allDTypes[r.IntN(len(allDTypes))]
			if i == 0 {
				dt = d
			}
			dt = Promote(dt, d)
			a := randomArray(d, shape, uint64(i))
			arrs = append(arrs, a)
			ins = append(ins, c.input(a, chunks))
		}
		want := refConcat(arrs, axis, dt)
		ax := axis
		if r.IntN(2) == 0 {
			ax -= nd // NumPy's negative axis
		}
		out := c.add(&Node{Op: OpConcat, Inputs: ins, Shape: want.Shape, DType: dt, Attrs: Attrs{Axes: []int{ax}}})
		got, _ := c.run(t, out)
		if err := sameArray(got, want); err != nil {
			t.Fatalf("concat of %d inputs along %d: %v", len(ins), ax, err)
		}
	}
}

// TestConvertChunk checks casts against NumPy's astype results.
func TestConvertChunk(t *testing.T) {
	f := NewArray(Float64, []int{4})
	copy(f.Float64s(), []float64{-1.5, 0, 2.7, 0.25})
	b := NewArray(Bool, []int{3})
	copy(b.Data, []byte{1, 0, 1})
	i := NewArray(Int64, []int{3})
	copy(i.Int64s(), []int64{-3, 0, 1 << 33})
	for _, tc := range []struct {
		a    *Array
		dt   DType
		want []float64
	}{
		{f, Int64, []float64{-1, 0, 2, 0}},
		{f, Int32, []float64{-1, 0, 2, 0}},
		{f, Bool, []float64{1, 0, 1, 1}},
		{f, Float32, []float64{-1.5, 0, 2.700000047683716, 0.25}},
		{b, Float32, []float64{1, 0, 1}},
		{b, Int64, []float64{1, 0, 1}},
		{i, Float64, []float64{-3, 0, 1 << 33}},
		{i, Bool, []float64{1, 0, 1}},
		{i, Int32, []float64{-3, 0, 0}}, // wraps, as NumPy's astype
	} {
		got := convertChunk(tc.a, tc.dt)
		if got.DType != tc.dt {
			t.Fatalf("%v to %v: got %v", tc.a.DType, tc.dt, got.DType)
		}
		for j, w := range tc.want {
			if g := got.Float64At(j); g != w {
				t.Errorf("%v to %v: element %d = %v, want %v", tc.a.DType, tc.dt, j, g, w)
			}
		}
	}
}
