package tensortest

import (
	"bytes"
	"context"
	"encoding/gob"
	"math"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// graphBuilder builds Graphs by hand, as the parser would: every node gets
// the shape and dtype NumPy infers, given here by the test.
type graphBuilder struct {
	t      testing.TB
	nodes  []*spec.Node
	env    mapEnv
	stored map[uint64]*tensor.Array
	nextID uint64
}

func newGraph(t testing.TB) *graphBuilder {
	return &graphBuilder{t: t, env: mapEnv{}, stored: map[uint64]*tensor.Array{}, nextID: 1000}
}

func (b *graphBuilder) add(n *spec.Node) *spec.Node {
	n.ID = len(b.nodes)
	b.nodes = append(b.nodes, n)
	return n
}

// op adds a node with inputs.
func (b *graphBuilder) op(op string, dt tensor.DType, shape []int, attrs spec.Attrs, inputs ...*spec.Node) *spec.Node {
	return b.add(&spec.Node{Op: op, Inputs: inputs, Shape: shape, DType: dt, Attrs: attrs})
}

// gen adds a creation node with the given chunking.
func (b *graphBuilder) gen(op string, dt tensor.DType, shape []int, chunks [][]int, attrs spec.Attrs) *spec.Node {
	return b.add(&spec.Node{Op: op, Shape: shape, DType: dt, Chunks: chunks, Attrs: attrs})
}

// scalar adds a 0-d literal; weak marks a Python scalar.
func (b *graphBuilder) scalar(dt tensor.DType, v float64, weak bool) *spec.Node {
	return b.add(&spec.Node{Op: tensor.OpScalar, Shape: []int{}, DType: dt, Chunks: [][]int{}, Weak: weak,
		Attrs: spec.Attrs{Value: v, IntValue: int64(v)}})
}

// input adds a session tensor holding a, stored in the given chunks.
func (b *graphBuilder) input(a *tensor.Array, chunks [][]int) *spec.Node {
	name := "in" + string(rune('a'+len(b.env)))
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
		c := tensor.NewArray(a.DType, shape)
		tensor.CopyStrided(c, make([]int, len(shape)), a, sel)
		b.nextID++
		b.stored[b.nextID] = c
		tt.Keys = append(tt.Keys, b.nextID)
	}
	b.env[name] = tt
	return b.add(&spec.Node{Op: tensor.OpInput, Shape: a.Shape, DType: a.DType, Chunks: chunks, Attrs: spec.Attrs{Name: name}})
}

// tile tiles the graph with outs as outputs.
func (b *graphBuilder) tile(outs ...*spec.Node) (*chunk.Graph, error) {
	g := &spec.Graph{Nodes: b.nodes}
	for i, o := range outs {
		g.Outputs = append(g.Outputs, spec.Output{Name: string(rune('x' + i)), Node: o})
	}
	return tile.Graph(g, b.env)
}

// compute tiles and runs the graph after a gob round trip of every op, and
// returns the outputs; it fails the test on error.
func (b *graphBuilder) compute(outs ...*spec.Node) []*tensor.Array {
	b.t.Helper()
	res, err := b.tryCompute(outs...)
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

func (b *graphBuilder) tryCompute(outs ...*spec.Node) ([]*tensor.Array, error) {
	cg, err := b.tile(outs...)
	if err != nil {
		return nil, err
	}
	for i, op := range cg.Ops {
		cg.Ops[i] = gobRoundTrip(b.t, op)
	}
	return Compute(context.Background(), cg, func(id uint64) (*tensor.Array, error) { return b.stored[id], nil })
}

func gobRoundTrip(t testing.TB, op *chunk.Op) *chunk.Op {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(op); err != nil {
		t.Fatalf("gob encode %s: %v", op.Kind, err)
	}
	var dec chunk.Op
	if err := gob.NewDecoder(&buf).Decode(&dec); err != nil {
		t.Fatalf("gob decode %s: %v", op.Kind, err)
	}
	// gob drops empty slices; a 0-d shape comes back nil, which is the same.
	return &dec
}

// arrayOf builds an array of dt from float64 values (ints by conversion).
func arrayOf(dt tensor.DType, shape []int, vals ...float64) *tensor.Array {
	src := &tensor.Array{DType: tensor.Float64, Shape: shape, Data: elem.Float64Bytes(vals)}
	if len(vals) != tensor.NumElements(shape) {
		panic("arrayOf: wrong elemType of values")
	}
	out := tensor.NewArray(dt, shape)
	if dt.IsInt() {
		// Exact for the test values; castInto would do the same.
		elem.CastInto(out, src)
		return out
	}
	elem.CastInto(out, src)
	return out
}

// seqValues returns start, start+1, ... (n values).
func seqValues(start float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = start + float64(i)
	}
	return s
}

// checkArray compares got with dt, shape and values want; floats within a
// relative tolerance tol, NaN equal to NaN.
func checkArray(t testing.TB, what string, got *tensor.Array, dt tensor.DType, shape []int, want []float64, tol float64) {
	t.Helper()
	if got.DType != dt || !slices.Equal(got.Shape, shape) {
		t.Fatalf("%s: got %v%v, want %v%v", what, got.DType, got.Shape, dt, shape)
	}
	if len(want) != got.Len() {
		t.Fatalf("%s: %d kernValues, want %d", what, got.Len(), len(want))
	}
	for i, w := range want {
		g := got.Float64At(i)
		if !closeTo(g, w, tol) {
			t.Fatalf("%s: element %d = %v, want %v (all: %v)", what, i, g, w, kernValues(got))
		}
	}
}

func closeTo(g, w, tol float64) bool {
	switch {
	case math.IsNaN(w):
		return math.IsNaN(g)
	case math.IsInf(w, 0) || tol == 0:
		return g == w
	}
	return math.Abs(g-w) <= tol*math.Max(1, math.Abs(w))
}

func kernValues(a *tensor.Array) []float64 {
	v := make([]float64, a.Len())
	for i := range v {
		v[i] = a.Float64At(i)
	}
	return v
}

// splitChunks cuts every axis of shape into chunks of at most size (one chunk
// of 0 for an empty axis).
func splitChunks(shape []int, size int) [][]int {
	cs := make([][]int, len(shape))
	for ax, n := range shape {
		if n == 0 {
			cs[ax] = []int{0}
			continue
		}
		for n > 0 {
			c := min(size, n)
			cs[ax] = append(cs[ax], c)
			n -= c
		}
	}
	return cs
}

func TestChunksOfHelper(t *testing.T) {
	got := splitChunks([]int{5, 0, 2}, 2)
	want := [][]int{{2, 2, 1}, {0}, {2}}
	if !tile.SameChunks(got, want) {
		t.Fatalf("chunksOf = %v, want %v", got, want)
	}
}
