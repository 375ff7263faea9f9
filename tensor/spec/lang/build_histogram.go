package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// histogram and histogram_bin_edges. A number of bins over the data's
// range (or range=) without weights is the counting op (OpHistogram: one
// partial of counts a chunk, added in a tree) and its edges
// (OpHistEdges). Edges given as bins=, or weights=, lower onto
// elementwise ops and a sum: each value is compared with every bin's two
// edges (the last bin closed, as NumPy's), and the weights (or ones) where
// it falls are summed along the data, so a chunk of n values makes an
// n × bins block that fuses into its sum; a NaN falls in no bin. The
// result has NumPy's dtype: int64 counts, the weights' dtype summed in
// float64 (int64 for integers), float64 for density= (the counts over the
// bins' widths and their total).

func registerHistogram(l *library) {
	l.register("histogram", []string{"a", "bins", "range", "density", "weights"}, buildHistogram)
	l.register("histogram_bin_edges", []string{"a", "bins", "range", "weights"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if c.has(3) {
			if _, err := c.histWeights(3, x); err != nil {
				return nil, err
			}
		}
		_, edges, err := c.histEdges(x)
		return edges, err
	})
}

func buildHistogram(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	density, err := c.bool(3, false)
	if err != nil {
		return nil, err
	}
	var w *spec.Node
	if c.has(4) {
		if w, err = c.histWeights(4, x); err != nil {
			return nil, err
		}
	}
	attrs, edges, err := c.histEdges(x)
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	var h *spec.Node
	if attrs != nil && w == nil {
		h, err = b.Node(p, tensor.OpHistogram, *attrs, x)
	} else {
		h, err = c.binSums(x, w, edges)
	}
	if err != nil {
		return nil, err
	}
	if density {
		if h, err = c.histDensity(h, edges); err != nil {
			return nil, err
		}
	}
	return c.tuple(h, edges), nil
}

// histWeights returns argument i, the weights, flattened; they must have
// x's shape.
func (c *call) histWeights(i int, x *spec.Node) (*spec.Node, error) {
	w, err := c.tensor(i)
	if err != nil {
		return nil, err
	}
	for _, t := range []*spec.Node{x, w} {
		if err := c.known(t); err != nil {
			return nil, err
		}
	}
	if !equalShapes(w.Shape, x.Shape) {
		return nil, c.errorf(i, "weights should have the same shape as a.")
	}
	return c.b.Reshape(c.pos, w, []int{flatLen(w.Shape)})
}

func equalShapes(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// histEdges returns the bins' edges: for a number of bins, the attributes
// of the counting op and OpHistEdges; for edges given, the edges as given
// (NumPy keeps their dtype), 1-D, at least one.
func (c *call) histEdges(x *spec.Node) (*spec.Attrs, *spec.Node, error) {
	if c.has(1) {
		switch v := c.args[1].v.(type) {
		case string:
			return nil, nil, c.errorf(1, "%s(): the bin rule '%s' is not supported yet: give a number of bins or their edges", c.name, v)
		case seqValue, *spec.Node:
			e, err := c.tensor(1)
			if err != nil {
				return nil, nil, err
			}
			if err := c.known(e); err != nil {
				return nil, nil, err
			}
			if len(e.Shape) != 1 {
				return nil, nil, c.errorf(1, "`bins` must be 1d, when an array")
			}
			if e.Shape[0] < 1 {
				return nil, nil, c.errorf(1, "`bins` must have at least one edge")
			}
			if s, ok := v.(seqValue); ok {
				if err := increasing(s, c.at(1)); err != nil {
					return nil, nil, err
				}
			}
			return nil, e, nil
		}
	}
	bins, err := c.int(1, 10)
	if err != nil {
		return nil, nil, err
	}
	attrs := spec.Attrs{Bins: bins}
	if c.has(2) {
		s, ok := c.args[2].v.(seqValue)
		if !ok || len(s.elts) != 2 {
			return nil, nil, c.errorf(2, "%s(): range must be a pair (low, high)", c.name)
		}
		for i, v := range s.elts {
			n, ok := v.(syntax.PyNum)
			if !ok {
				return nil, nil, syntax.Errorf(s.pos[i], "%s(): range must hold numbers, not a %s", c.name, typeName(v))
			}
			attrs.Range = append(attrs.Range, n.Float())
		}
	}
	e, err := c.b.Node(c.pos, tensor.OpHistEdges, attrs, x)
	return &attrs, e, err
}

// increasing refuses edges written in the spec that decrease, as NumPy
// does (edges computed in the graph are taken as they come).
func increasing(s seqValue, p syntax.SrcPos) error {
	for i := 1; i < len(s.elts); i++ {
		a, ok1 := s.elts[i-1].(syntax.PyNum)
		b, ok2 := s.elts[i].(syntax.PyNum)
		if ok1 && ok2 && a.Float() > b.Float() {
			return syntax.Errorf(p, "`bins` must increase monotonically, when an array")
		}
	}
	return nil
}

// binSums is the histogram of the flattened x over edges: each bin's
// count, or sum of the weights w (nil for counts).
func (c *call) binSums(x, w, edges *spec.Node) (*spec.Node, error) {
	b, p := c.b, c.pos
	if err := c.known(x); err != nil {
		return nil, err
	}
	n, nb := flatLen(x.Shape), edges.Shape[0]-1
	col, err := b.Reshape(p, x, []int{n, 1})
	if err != nil {
		return nil, err
	}
	lo, err := b.SliceAxis(p, edges, 0, tensor.Slice{Start: 0, Step: 1, Len: nb})
	if err != nil {
		return nil, err
	}
	hi, err := b.SliceAxis(p, edges, 0, tensor.Slice{Start: 1, Step: 1, Len: nb})
	if err != nil {
		return nil, err
	}
	// x in [lo, hi), or in [lo, hi] for the last bin.
	in, err := b.Node(p, tensor.OpGreaterEq, spec.Attrs{}, col, lo)
	if err != nil {
		return nil, err
	}
	below, err := b.Node(p, tensor.OpLess, spec.Attrs{}, col, hi)
	if err != nil {
		return nil, err
	}
	if nb > 0 {
		ar, err := b.IndexAlong(p, []int{nb}, 0)
		if err != nil {
			return nil, err
		}
		last, err := b.Node(p, tensor.OpEqual, spec.Attrs{}, ar, b.Scalar(syntax.PyInt(int64(nb-1))))
		if err != nil {
			return nil, err
		}
		at, err := b.Node(p, tensor.OpEqual, spec.Attrs{}, col, hi)
		if err != nil {
			return nil, err
		}
		if at, err = b.Node(p, tensor.OpLogicalAnd, spec.Attrs{}, at, last); err != nil {
			return nil, err
		}
		if below, err = b.Node(p, tensor.OpLogicalOr, spec.Attrs{}, below, at); err != nil {
			return nil, err
		}
	}
	if in, err = b.Node(p, tensor.OpLogicalAnd, spec.Attrs{}, in, below); err != nil {
		return nil, err
	}
	if w == nil {
		return b.ReduceNode(p, tensor.OpCountNonzero, in, []int{0}, false, 0)
	}
	// The weights' sums in float64 (int64 for integers), then their dtype.
	acc := tensor.Float64
	if w.DType.IsInteger() || w.DType == tensor.Bool {
		acc = tensor.Int64
	}
	wc, err := b.Astype(p, w, acc)
	if err != nil {
		return nil, err
	}
	if wc, err = b.Reshape(p, wc, []int{n, 1}); err != nil {
		return nil, err
	}
	zero, err := b.Constant(p, syntax.PyInt(0), acc)
	if err != nil {
		return nil, err
	}
	sel, err := b.Node(p, tensor.OpWhere, spec.Attrs{}, in, wc, zero)
	if err != nil {
		return nil, err
	}
	s, err := b.ReduceNode(p, tensor.OpSum, sel, []int{0}, false, 0)
	if err != nil {
		return nil, err
	}
	return b.Astype(p, s, w.DType)
}

// histDensity is NumPy's density: h / diff(edges) / h.sum(), float64.
func (c *call) histDensity(h, edges *spec.Node) (*spec.Node, error) {
	b, p := c.b, c.pos
	nb := edges.Shape[0] - 1
	e, err := b.Astype(p, edges, tensor.Float64)
	if err != nil {
		return nil, err
	}
	lo, err := b.SliceAxis(p, e, 0, tensor.Slice{Start: 0, Step: 1, Len: nb})
	if err != nil {
		return nil, err
	}
	hi, err := b.SliceAxis(p, e, 0, tensor.Slice{Start: 1, Step: 1, Len: nb})
	if err != nil {
		return nil, err
	}
	width, err := b.Node(p, tensor.OpSubtract, spec.Attrs{}, hi, lo)
	if err != nil {
		return nil, err
	}
	total, err := b.ReduceNode(p, tensor.OpSum, h, nil, false, 0)
	if err != nil {
		return nil, err
	}
	r, err := b.Node(p, tensor.OpDivide, spec.Attrs{}, h, width)
	if err != nil {
		return nil, err
	}
	return b.Node(p, tensor.OpDivide, spec.Attrs{}, r, total)
}
