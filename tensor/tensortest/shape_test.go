package tensortest

import (
	"bytes"
	"context"
	"fmt"
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

// A shapeCase holds the stored chunks of the inputs of a hand-built graph.
type shapeCase struct {
	env    mapEnv
	stored map[uint64]*tensor.Array
	nodes  []*spec.Node
}

func newShapeCase() *shapeCase {
	return &shapeCase{env: mapEnv{}, stored: map[uint64]*tensor.Array{}}
}

// input cuts a into chunks, stores them, and adds an OpInput node naming them.
func (c *shapeCase) input(a *tensor.Array, chunks [][]int) *spec.Node {
	name := fmt.Sprintf("in%d", len(c.nodes))
	tt := &tensor.TiledTensor{Shape: a.Shape, DType: a.DType, Chunks: chunks}
	offs := tensor.ChunkOffsets(chunks)
	grid := tensor.GridShape(chunks)
	for k := 0; k < tensor.NumElements(grid); k++ {
		idx := tensor.Unravel(k, grid)
		shape := tensor.ChunkShape(chunks, grid, k)
		sel := make([]tensor.Slice, len(shape))
		for ax := range sel {
			sel[ax] = tensor.Slice{Start: offs[ax][idx[ax]], Step: 1, Len: shape[ax]}
		}
		part := tensor.NewArray(a.DType, shape)
		tensor.CopyStrided(part, make([]int, len(shape)), a, sel)
		id := uint64(1000 + len(c.stored))
		c.stored[id] = part
		tt.Keys = append(tt.Keys, id)
	}
	c.env[name] = tt
	return c.add(&spec.Node{Op: tensor.OpInput, Shape: a.Shape, DType: a.DType, Chunks: chunks, Attrs: spec.Attrs{Name: name}})
}

// add appends n to the graph, giving it the next ID.
func (c *shapeCase) add(n *spec.Node) *spec.Node {
	n.ID = len(c.nodes)
	c.nodes = append(c.nodes, n)
	return n
}

// run tiles a graph whose output is out and computes it.
func (c *shapeCase) run(t *testing.T, out *spec.Node) (*tensor.Array, *chunk.Graph) {
	t.Helper()
	cg, err := c.tile(out)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := Compute(context.Background(), cg, func(id uint64) (*tensor.Array, error) { return c.stored[id], nil })
	if err != nil {
		t.Fatal(err)
	}
	return outs[0], cg
}

func (c *shapeCase) tile(out *spec.Node) (*chunk.Graph, error) {
	g := &spec.Graph{Nodes: c.nodes, Outputs: []spec.Output{{Name: "out", Node: out}}}
	return tile.Graph(g, c.env)
}

// rampArray returns an array of shape whose elements are distinct where the
// dtype allows it.
func rampArray(dt tensor.DType, shape []int) *tensor.Array {
	a := tensor.NewArray(dt, shape)
	for i := range a.Len() {
		switch dt {
		case tensor.Bool:
			if i%3 == 0 {
				a.Data[i] = 1
			}
		case tensor.Int32:
			a.Int32s()[i] = int32(i*7 - 11)
		case tensor.Int64:
			a.Int64s()[i] = int64(i)*1000003 - 5
		case tensor.Float32:
			a.Float32s()[i] = float32(i)*0.25 - 3
		case tensor.Float64:
			a.Float64s()[i] = float64(i)*0.125 + 0.5
		}
	}
	return a
}

var allDTypes = []tensor.DType{tensor.Bool, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Float64}

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
		out = append(out, tile.ReshapeSplit(n, 2))
	}
	if n > 1 {
		out = append(out, tile.ReshapeSplit(n, 1))
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
func sameArray(got, want *tensor.Array) error {
	if got.DType != want.DType || !slices.Equal(got.Shape, want.Shape) {
		return fmt.Errorf("got %v%v, want %v%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	if !bytes.Equal(got.Data, want.Data) {
		return fmt.Errorf("data differs:\n got %v\nwant %v", arrayValues(got), arrayValues(want))
	}
	return nil
}

func arrayValues(a *tensor.Array) []float64 {
	v := make([]float64, a.Len())
	for i := range v {
		v[i] = a.Float64At(i)
	}
	return v
}

// elementAt copies element idx of a (as bytes).
func elementAt(a *tensor.Array, idx []int) []byte {
	es := a.DType.Size()
	off := tensor.Ravel(idx, a.Shape) * es
	return a.Data[off : off+es]
}

func refTranspose(a *tensor.Array, perm []int) *tensor.Array {
	shape := make([]int, len(perm))
	for ax, p := range perm {
		shape[ax] = a.Shape[p]
	}
	out := tensor.NewArray(a.DType, shape)
	es := a.DType.Size()
	src := make([]int, len(perm))
	for i := range out.Len() {
		for ax, v := range tensor.Unravel(i, shape) {
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
			if tensor.NumElements(tensor.GridShape(chunks)) > 200 {
				continue
			}
			c := newShapeCase()
			in := c.input(a, chunks)
			out := c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{in}, Shape: want.Shape, DType: dt, Attrs: spec.Attrs{Perm: tc.perm}})
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
		in := c.input(rampArray(tensor.Int64, []int{2, 3}), [][]int{{2}, {3}})
		out := c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{in}, Shape: []int{3, 2}, DType: tensor.Int64, Attrs: spec.Attrs{Perm: perm}})
		if _, err := c.tile(out); err == nil || !strings.Contains(err.Error(), "axes") {
			t.Errorf("perm %v: error %v, want one about axes", perm, err)
		}
	}
}

func refSlice(a *tensor.Array, sls []tensor.Slice) *tensor.Array {
	shape := make([]int, len(sls))
	for ax, s := range sls {
		shape[ax] = s.Len
	}
	out := tensor.NewArray(a.DType, shape)
	es := a.DType.Size()
	src := make([]int, len(sls))
	for i := range out.Len() {
		for ax, v := range tensor.Unravel(i, shape) {
			src[ax] = sls[ax].Start + v*sls[ax].Step
		}
		copy(out.Data[i*es:], elementAt(a, src))
	}
	return out
}

func TestSlice(t *testing.T) {
	cases := []struct {
		shape []int
		sls   []tensor.Slice
	}{
		{[]int{7, 5}, []tensor.Slice{{Start: 1, Step: 2, Len: 3}, {Start: 4, Step: -1, Len: 5}}},
		{[]int{7, 5}, []tensor.Slice{{Start: 6, Step: -2, Len: 4}, {Start: 0, Step: 1, Len: 5}}},
		{[]int{7, 5}, []tensor.Slice{{Start: 6, Step: -1, Len: 7}, {Start: 4, Step: -3, Len: 2}}},
		{[]int{7, 5}, []tensor.Slice{{Start: 0, Step: 1, Len: 7}, {Start: 0, Step: 1, Len: 5}}},
		{[]int{7, 5}, []tensor.Slice{{Start: 3, Step: 1, Len: 0}, {Start: 1, Step: 1, Len: 3}}},
		{[]int{7, 5}, []tensor.Slice{{Start: 0, Step: 3, Len: 3}, {Start: 2, Step: 5, Len: 1}}},
		{[]int{7, 5}, []tensor.Slice{{Start: 5, Step: -7, Len: 1}, {Start: 0, Step: 1, Len: 0}}},
		{[]int{4, 3, 6}, []tensor.Slice{{Start: 3, Step: -1, Len: 4}, {Start: 1, Step: 1, Len: 2}, {Start: 0, Step: 2, Len: 3}}},
		{[]int{4, 3, 6}, []tensor.Slice{{Start: 2, Step: 1, Len: 1}, {Start: 2, Step: -1, Len: 3}, {Start: 5, Step: -5, Len: 2}}},
		{[]int{0, 3}, []tensor.Slice{{Start: 0, Step: 1, Len: 0}, {Start: 0, Step: 1, Len: 3}}},
		{[]int{}, []tensor.Slice{}},
	}
	for ci, tc := range cases {
		dt := allDTypes[ci%len(allDTypes)]
		a := rampArray(dt, tc.shape)
		want := refSlice(a, tc.sls)
		for _, chunks := range chunkings(tc.shape) {
			if tensor.NumElements(tensor.GridShape(chunks)) > 200 {
				continue
			}
			c := newShapeCase()
			in := c.input(a, chunks)
			out := c.add(&spec.Node{Op: tensor.OpSlice, Inputs: []*spec.Node{in}, Shape: want.Shape, DType: dt, Attrs: spec.Attrs{Slices: tc.sls}})
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
// no op for them: the graph is the two stored chunks it selects.
func TestSliceReusesWholeChunks(t *testing.T) {
	c := newShapeCase()
	in := c.input(rampArray(tensor.Float64, []int{6, 4}), [][]int{{2, 2, 2}, {4}})
	out := c.add(&spec.Node{Op: tensor.OpSlice, Inputs: []*spec.Node{in}, Shape: []int{4, 4}, DType: tensor.Float64,
		Attrs: spec.Attrs{Slices: []tensor.Slice{{Start: 2, Step: 1, Len: 4}, {Start: 0, Step: 1, Len: 4}}}})
	cg, err := c.tile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(cg.Ops) != 2 || cg.Ops[0].Kind != chunk.KindStored || cg.Ops[1].Kind != chunk.KindStored {
		t.Errorf("%d ops, want only the 2 stored chunks selected", len(cg.Ops))
	}
}

func TestSliceErrors(t *testing.T) {
	for _, sls := range [][]tensor.Slice{
		{{Start: 0, Step: 1, Len: 4}},
		{{Start: 0, Step: 1, Len: 5}, {Start: 0, Step: 1, Len: 3}},
		{{Start: 3, Step: 1, Len: 2}, {Start: 0, Step: 1, Len: 3}},
		{{Start: 0, Step: -1, Len: 2}, {Start: 0, Step: 1, Len: 3}},
		{{Start: 0, Step: 0, Len: 2}, {Start: 0, Step: 1, Len: 3}},
		{{Start: 0, Step: 1, Len: -1}, {Start: 0, Step: 1, Len: 3}},
	} {
		c := newShapeCase()
		in := c.input(rampArray(tensor.Int64, []int{4, 3}), [][]int{{2, 2}, {3}})
		shape := make([]int, len(sls))
		for ax, s := range sls {
			shape[ax] = max(s.Len, 0)
		}
		out := c.add(&spec.Node{Op: tensor.OpSlice, Inputs: []*spec.Node{in}, Shape: shape, DType: tensor.Int64, Attrs: spec.Attrs{Slices: sls}})
		if _, err := c.tile(out); err == nil {
			t.Errorf("slices %v: no error", sls)
		}
	}
}

func refConcat(parts []*tensor.Array, axis int, dt tensor.DType) *tensor.Array {
	shape := append([]int(nil), parts[0].Shape...)
	shape[axis] = 0
	for _, p := range parts {
		shape[axis] += p.Shape[axis]
	}
	out := tensor.NewArray(dt, shape)
	es := dt.Size()
	for i := range out.Len() {
		idx := tensor.Unravel(i, shape)
		p := 0
		for idx[axis] >= parts[p].Shape[axis] {
			idx[axis] -= parts[p].Shape[axis]
			p++
		}
		conv := kernel.ConvertChunk(parts[p], dt)
		copy(out.Data[i*es:], elementAt(conv, idx))
	}
	return out
}

func TestConcat(t *testing.T) {
	cases := []struct {
		axis   int
		shapes [][]int
		dtypes []tensor.DType
		out    tensor.DType
	}{
		{0, [][]int{{3, 4}, {2, 4}}, []tensor.DType{tensor.Float64, tensor.Float64}, tensor.Float64},
		{1, [][]int{{3, 2}, {3, 5}}, []tensor.DType{tensor.Int32, tensor.Int32}, tensor.Int32},
		{1, [][]int{{2, 1, 3}, {2, 2, 3}, {2, 3, 3}}, []tensor.DType{tensor.Bool, tensor.Bool, tensor.Bool}, tensor.Bool},
		{0, [][]int{{3, 4}, {0, 4}, {2, 4}}, []tensor.DType{tensor.Int64, tensor.Int64, tensor.Int64}, tensor.Int64},
		{0, [][]int{{0, 2}, {0, 2}}, []tensor.DType{tensor.Float32, tensor.Float32}, tensor.Float32},
		{0, [][]int{{5}, {3}}, []tensor.DType{tensor.Int32, tensor.Float64}, tensor.Float64},
		{1, [][]int{{2, 2}, {2, 3}}, []tensor.DType{tensor.Bool, tensor.Int64}, tensor.Int64},
		{0, [][]int{{3, 2}}, []tensor.DType{tensor.Int32}, tensor.Float32},
	}
	for _, tc := range cases {
		var arrs []*tensor.Array
		for i, s := range tc.shapes {
			arrs = append(arrs, rampArray(tc.dtypes[i], s))
		}
		want := refConcat(arrs, tc.axis, tc.out)
		// Try each input chunked every way, the others chunked alike.
		for v := range 4 {
			c := newShapeCase()
			var ins []*spec.Node
			for _, a := range arrs {
				cs := chunkings(a.Shape)
				ins = append(ins, c.input(a, cs[(v+len(ins))%len(cs)]))
			}
			out := c.add(&spec.Node{Op: tensor.OpConcat, Inputs: ins, Shape: want.Shape, DType: tc.out, Attrs: spec.Attrs{Axes: []int{tc.axis}}})
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
		var ins []*spec.Node
		for _, s := range tc.shapes {
			ins = append(ins, c.input(rampArray(tensor.Int64, s), [][]int{{s[0]}, {s[len(s)-1]}}[:len(s)]))
		}
		out := c.add(&spec.Node{Op: tensor.OpConcat, Inputs: ins, Shape: []int{6, 4}, DType: tensor.Int64, Attrs: spec.Attrs{Axes: []int{tc.axis}}})
		if _, err := c.tile(out); err == nil {
			t.Errorf("concat %v axis %d: no error", tc.shapes, tc.axis)
		}
	}
}

// TestCopyStridedNegativeSteps checks the assemble kernel's copy with
// negative steps on every axis, the innermost included.
func TestCopyStridedNegativeSteps(t *testing.T) {
	src := rampArray(tensor.Int64, []int{4, 5})
	dst := tensor.NewArray(tensor.Int64, []int{3, 4})
	tensor.CopyStrided(dst, []int{1, 1}, src, []tensor.Slice{{Start: 3, Step: -2, Len: 2}, {Start: 4, Step: -1, Len: 3}})
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
	op := &chunk.Op{Kind: chunk.KindTranspose, Inputs: []int{0}, Shape: []int{1000, 1000}, DType: tensor.Float64, Args: chunk.TransposeArgs{Perm: []int{1, 0}}}
	in := []*tensor.Array{rampArray(tensor.Float64, []int{1000, 1000})}
	b.SetBytes(int64(in[0].NBytes()))
	for b.Loop() {
		if _, err := kernel.Run(b.Context(), op, in); err != nil {
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
		sls := make([]tensor.Slice, len(shape))
		for ax := range shape {
			n := r.IntN(8)
			shape[ax] = n
			chunks[ax] = randomChunks(r, n)
			if n == 0 {
				sls[ax] = tensor.Slice{Start: 0, Step: 1, Len: 0}
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
			sls[ax] = tensor.Slice{Start: start, Step: step, Len: r.IntN(most + 1)}
		}
		dt := allDTypes[r.IntN(len(allDTypes))]
		a := rampArray(dt, shape)
		want := refSlice(a, sls)
		c := newShapeCase()
		in := c.input(a, chunks)
		out := c.add(&spec.Node{Op: tensor.OpSlice, Inputs: []*spec.Node{in}, Shape: want.Shape, DType: dt, Attrs: spec.Attrs{Slices: sls}})
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
		var arrs []*tensor.Array
		var ins []*spec.Node
		var dt tensor.DType
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
			dt = tensor.Promote(dt, d)
			a := randomArray(d, shape, uint64(i))
			arrs = append(arrs, a)
			ins = append(ins, c.input(a, chunks))
		}
		want := refConcat(arrs, axis, dt)
		ax := axis
		if r.IntN(2) == 0 {
			ax -= nd // NumPy's negative axis
		}
		out := c.add(&spec.Node{Op: tensor.OpConcat, Inputs: ins, Shape: want.Shape, DType: dt, Attrs: spec.Attrs{Axes: []int{ax}}})
		got, _ := c.run(t, out)
		if err := sameArray(got, want); err != nil {
			t.Fatalf("concat of %d inputs along %d: %v", len(ins), ax, err)
		}
	}
}

// TestConvertChunk checks casts against NumPy's astype results.
func TestConvertChunk(t *testing.T) {
	f := tensor.NewArray(tensor.Float64, []int{4})
	copy(f.Float64s(), []float64{-1.5, 0, 2.7, 0.25})
	b := tensor.NewArray(tensor.Bool, []int{3})
	copy(b.Data, []byte{1, 0, 1})
	i := tensor.NewArray(tensor.Int64, []int{3})
	copy(i.Int64s(), []int64{-3, 0, 1 << 33})
	for _, tc := range []struct {
		a    *tensor.Array
		dt   tensor.DType
		want []float64
	}{
		{f, tensor.Int64, []float64{-1, 0, 2, 0}},
		{f, tensor.Int32, []float64{-1, 0, 2, 0}},
		{f, tensor.Bool, []float64{1, 0, 1, 1}},
		{f, tensor.Float32, []float64{-1.5, 0, 2.700000047683716, 0.25}},
		{b, tensor.Float32, []float64{1, 0, 1}},
		{b, tensor.Int64, []float64{1, 0, 1}},
		{i, tensor.Float64, []float64{-3, 0, 1 << 33}},
		{i, tensor.Bool, []float64{1, 0, 1}},
		{i, tensor.Int32, []float64{-3, 0, 0}}, // wraps, as NumPy's astype
	} {
		got := kernel.ConvertChunk(tc.a, tc.dt)
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
