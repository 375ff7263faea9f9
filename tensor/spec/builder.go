package spec

import (
	"fmt"
	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
	"math"
	"slices"
)

// IsJSON reports whether src is a spec in the JSON form: its first byte
// other than JSON's white space is '{'. The text form cannot start so.
func IsJSON[T string | []byte](src T) bool {
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return src[i] == '{'
	}
	return false
}

// A Builder makes a graph op by op: each op it adds is inferred first
// (shape, dtype, chunks; see infer), so that a graph it makes is valid as
// it grows. Its methods beyond Add and AddAt are the lowerings the spec
// language shares between its functions and its operators: each composes
// a construct NumPy has (matmul, take, a diagonal, a masked reduction)
// from the ops the tiler knows, and reports errors at the position it is
// given, the spec's.
type Builder struct {
	nodes []*Node
}

// Add infers n and appends it to the graph.
func (b *Builder) Add(n *Node) (*Node, error) {
	if err := infer(n); err != nil {
		return nil, err
	}
	n.ID = len(b.nodes)
	b.nodes = append(b.nodes, n)
	return n, nil
}

// AddAt adds n, whose caller has set what its op needs given (see infer),
// reporting errors at p.
func (b *Builder) AddAt(p syntax.SrcPos, n *Node) (*Node, error) {
	n, err := b.Add(n)
	if err != nil {
		return nil, syntax.ErrAt(p, err)
	}
	return n, nil
}

// Astype converts x to dt; a tensor of dtype dt is itself.
func (b *Builder) Astype(p syntax.SrcPos, x *Node, dt tensor.DType) (*Node, error) {
	if x.DType == dt {
		return x, nil
	}
	return b.AddAt(p, &Node{Op: tensor.OpAstype, Inputs: []*Node{x}, DType: dt})
}

// Reshape gives x the shape; a tensor of that shape is itself.
func (b *Builder) Reshape(p syntax.SrcPos, x *Node, shape []int) (*Node, error) {
	if slices.Equal(x.Shape, shape) {
		return x, nil
	}
	return b.AddAt(p, &Node{Op: tensor.OpReshape, Inputs: []*Node{x}, Shape: CloneInts(shape)})
}

// Transpose permutes x's axes; the identity permutation is x itself.
func (b *Builder) Transpose(p syntax.SrcPos, x *Node, perm []int) (*Node, error) {
	identity := len(perm) == len(x.Shape)
	for i, ax := range perm {
		identity = identity && ax == i
	}
	if identity {
		return x, nil
	}
	return b.AddAt(p, &Node{Op: tensor.OpTranspose, Inputs: []*Node{x}, Attrs: Attrs{Perm: CloneInts(perm)}})
}

// Node makes a node whose shape and dtype follow from its inputs; errors are
// reported at p.
func (b *Builder) Node(p syntax.SrcPos, op string, attrs Attrs, in ...*Node) (*Node, error) {
	n, err := b.Add(&Node{Op: op, Inputs: in, Attrs: attrs})
	if err != nil {
		return nil, syntax.ErrAt(p, err)
	}
	return n, nil
}

// Graph keeps the nodes the outputs need, renumbered in order.
func (b *Builder) Graph(outs []Output, sinks []Sink, drops []string, src string) *Graph {
	need := make([]bool, len(b.nodes))
	for _, o := range outs {
		need[o.Node.ID] = true
	}
	for _, s := range sinks {
		need[s.Node.ID] = true
	}
	for i := len(b.nodes) - 1; i >= 0; i-- {
		if need[i] {
			for _, in := range b.nodes[i].Inputs {
				need[in.ID] = true
			}
		}
	}
	g := &Graph{Outputs: outs, Sinks: sinks, Drops: drops, Source: src}
	for i, n := range b.nodes {
		if need[i] {
			n.ID = len(g.Nodes)
			g.Nodes = append(g.Nodes, n)
		}
	}
	return g
}

// CloneInts copies s; a nil s gives an empty, non-nil shape.
func CloneInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return append([]int{}, s...)
}

// CloneChunks copies a chunking axis by axis.
func CloneChunks(c [][]int) [][]int {
	out := make([][]int, len(c))
	for i, cs := range c {
		out[i] = append([]int{}, cs...)
	}
	return out
}

// Scalar makes the Weak OpScalar node of a Python number.
func (b *Builder) Scalar(v syntax.PyNum) *Node {
	n := &Node{Op: tensor.OpScalar, Shape: []int{}, DType: v.Dt, Chunks: [][]int{}, Weak: true}
	if v.IsFloat() {
		n.Attrs.Value = v.F
	} else {
		n.Attrs.IntValue = v.I
	}
	n, _ = b.Add(n) // a scalar node is always valid
	return n
}

// BoolInt is 1 for true and 0 for false.
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MaxInt bounds the integers the parser accepts where it needs an int, so
// that shape arithmetic cannot overflow.
const MaxInt = 1 << 52

// NormAxis resolves a negative axis against ndim, as NumPy does, and
// refuses one out of bounds, reporting at p.
func NormAxis(ax, ndim int, p syntax.SrcPos) (int, error) {
	if ax < -ndim || ax >= ndim {
		return 0, syntax.Errorf(p, "axis %d is out of bounds for array of dimension %d", ax, ndim)
	}
	if ax < 0 {
		ax += ndim
	}
	return ax, nil
}

// UniqueIndex is unique's return_index: the first place of each unique
// value v in the flat x, the stable argsort of x at the place where v's
// run begins in sort(x).
func (b *Builder) UniqueIndex(p syntax.SrcPos, x, v *Node) (*Node, error) {
	if tensor.HasUnknown(x.Shape) {
		return nil, syntax.Errorf(p, "unique(): return_index of an array whose length depends on the data is not supported yet")
	}
	order, err := b.Node(p, tensor.OpArgsort, Attrs{}, x)
	if err != nil {
		return nil, err
	}
	sorted, err := b.Node(p, tensor.OpSort, Attrs{}, x)
	if err != nil {
		return nil, err
	}
	first, err := b.Searchsorted(p, sorted, v, false)
	if err != nil {
		return nil, err
	}
	return b.Take(p, order, first, 0, "raise")
}

// AtLeast2D gives a 1-D or 0-d x a first axis of length 1, as
// np.array(x, ndmin=2) does.
func (b *Builder) AtLeast2D(p syntax.SrcPos, x *Node) (*Node, error) {
	switch len(x.Shape) {
	case 0:
		return b.Reshape(p, x, []int{1, 1})
	case 1:
		return b.Reshape(p, x, []int{1, x.Shape[0]})
	}
	return x, nil
}

// Squeeze drops the axes of length one.
func (b *Builder) Squeeze(p syntax.SrcPos, x *Node) (*Node, error) {
	var shape []int
	for _, d := range x.Shape {
		if d != 1 {
			shape = append(shape, d)
		}
	}
	return b.Reshape(p, x, CloneInts(shape))
}

// SetFill stores v, cast to dt, as a fill value.
func SetFill(a *Attrs, dt tensor.DType, v syntax.PyNum) error {
	switch {
	case dt.IsFloat():
		a.Value = v.Float()
		switch dt {
		case tensor.Float32:
			a.Value = float64(float32(a.Value))
		case tensor.Float16:
			a.Value = float64(tensor.HalfFromFloat64(a.Value).Float32())
		}
	case dt == tensor.Bool:
		if v.Float() != 0 {
			a.IntValue = 1
		}
	default:
		f := v.Float()
		if v.IsFloat() && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return fmt.Errorf("cannot convert float %s to integer", v)
		}
		i := v.I
		if v.IsFloat() {
			if math.Abs(f) >= 1<<63 {
				return fmt.Errorf("fill value %s is out of range for %s", v, dt)
			}
			i = int64(f)
		}
		if lo, hi := dt.IntRange(); i > hi || i < lo {
			return fmt.Errorf("fill value %s is out of bounds for %s", v, dt)
		}
		a.IntValue = i
	}
	return nil
}

// SliceIndices resolves lo:hi:step against an axis of length l; absent
// bounds are the axis' ends and an absent step is 1.
func SliceIndices(lo, hi, step int, hasLo, hasHi, hasStep bool, l int) tensor.Slice {
	if !hasStep {
		step = 1
	}
	clamp := func(i, low, high int) int { return max(low, min(i, high)) }
	var start, stop int
	if step > 0 {
		start, stop = 0, l
		if hasLo {
			if lo < 0 {
				lo += l
			}
			start = clamp(lo, 0, l)
		}
		if hasHi {
			if hi < 0 {
				hi += l
			}
			stop = clamp(hi, 0, l)
		}
	} else {
		start, stop = l-1, -1
		if hasLo {
			if lo < 0 {
				lo += l
			}
			start = clamp(lo, -1, l-1)
		}
		if hasHi {
			if hi < 0 {
				hi += l
			}
			stop = clamp(hi, -1, l-1)
		}
	}
	n := 0
	if step > 0 && stop > start {
		n = (stop - start + step - 1) / step
	} else if step < 0 && start > stop {
		n = (start - stop - step - 1) / -step
	}
	if n == 0 {
		start = 0
	}
	return tensor.Slice{Start: start, Step: step, Len: n}
}

// Constant makes a 0-d array of dtype dt holding v. Unlike a Python scalar
// it is not weak: combined with an array of dt it leaves the dtype dt.
func (b *Builder) Constant(p syntax.SrcPos, v syntax.PyNum, dt tensor.DType) (*Node, error) {
	return b.FullOf(p, []int{}, v, dt)
}

// FullOf makes an array of shape filled with v, default chunks.
func (b *Builder) FullOf(p syntax.SrcPos, shape []int, v syntax.PyNum, dt tensor.DType) (*Node, error) {
	chunks, err := DefaultChunksAt(shape, p)
	if err != nil {
		return nil, err
	}
	n := &Node{Op: tensor.OpFull, Shape: CloneInts(shape), DType: dt, Chunks: chunks}
	if err := SetFill(&n.Attrs, dt, v); err != nil {
		return nil, syntax.ErrAt(p, err)
	}
	return b.AddAt(p, n)
}

// SliceAxis slices x along ax by s, the other axes whole; the whole axis is
// x itself.
func (b *Builder) SliceAxis(p syntax.SrcPos, x *Node, ax int, s tensor.Slice) (*Node, error) {
	sl := make([]tensor.Slice, len(x.Shape))
	for i, d := range x.Shape {
		sl[i] = tensor.Slice{Start: 0, Step: 1, Len: d}
	}
	if s.Len == 0 {
		s = tensor.Slice{Start: 0, Step: 1, Len: 0}
	}
	if s == sl[ax] {
		return x, nil
	}
	sl[ax] = s
	return b.AddAt(p, &Node{Op: tensor.OpSlice, Inputs: []*Node{x}, Attrs: Attrs{Slices: sl}})
}

// ReduceNode reduces x over axes (nil: all) with keepdims, in the one form
// the tile rules take (every axis is nil).
func (b *Builder) ReduceNode(p syntax.SrcPos, op string, x *Node, axes []int, keepdims bool, ddof int) (*Node, error) {
	if len(axes) == len(x.Shape) {
		axes = nil
	}
	return b.Node(p, op, Attrs{Axes: slices.Clone(axes), Keepdims: keepdims, Ddof: ddof}, x)
}

// Concat joins xs along ax; one tensor is itself.
func (b *Builder) Concat(p syntax.SrcPos, xs []*Node, ax int) (*Node, error) {
	if len(xs) == 1 {
		return xs[0], nil
	}
	return b.Node(p, tensor.OpConcat, Attrs{Axes: []int{ax}}, xs...)
}

// BroadcastTo makes x's values at shape, as np.broadcast_to would (but
// materialized): where(True, x, x), whose tile rule broadcasts and whose
// kernel copies.
func (b *Builder) BroadcastTo(p syntax.SrcPos, x *Node, shape []int) (*Node, error) {
	if slices.Equal(x.Shape, shape) {
		return x, nil
	}
	t, err := b.FullOf(p, shape, syntax.PyBool(true), tensor.Bool)
	if err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpWhere, Attrs{}, t, x, x)
}
