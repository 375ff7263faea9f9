package lang

import (
	"marsfs/tensor/spec"
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// The factorizations, sorting and statistics of the spec language. Functions
// that return several tensors give a tuple of nodes that share their input
// (q, r = linalg.qr(x)); their tile rules factor the input once.
//
// linalg.svd computes the reduced SVD, NumPy's full_matrices=False: U is
// m x k and Vᵀ k x n for k = min(m, n). Without full_matrices= it does the
// same (for a square matrix both forms agree); full_matrices=True on a
// matrix that is not square is refused, as is linalg.qr's mode='complete'
// of a tall one.

func registerCatalogue(l *library) {
	l.register("linalg.qr", []string{"a", "mode"}, buildQR)
	l.register("linalg.svd", []string{"a", "full_matrices", "compute_uv", "hermitian"}, buildSVD)
	l.register("linalg.solve", []string{"a", "b"}, func(c *call) (value, error) {
		a, b, err := c.pair()
		if err != nil {
			return nil, err
		}
		return c.b.Node(c.pos, tensor.OpSolve, spec.Attrs{}, a, b)
	})
	for name, op := range map[string]string{"linalg.inv": tensor.OpInv, "linalg.cholesky": tensor.OpCholesky} {
		l.register(name, []string{"a"}, func(c *call) (value, error) {
			a, err := c.tensor(0)
			if err != nil {
				return nil, err
			}
			return c.b.Node(c.pos, op, spec.Attrs{}, a)
		})
	}
	for name, op := range map[string]string{"sort": tensor.OpSort, "argsort": tensor.OpArgsort} {
		fn := func(c *call) (value, error) { return buildSort(c, op) }
		l.register(name, []string{"a", "axis", "kind", "order"}, fn)
		if op == tensor.OpArgsort {
			l.registerMethod(name, []string{"a", "axis", "kind", "order"}, fn)
		}
	}
	l.registerMethod("sort", []string{"a", "axis", "kind", "order"}, func(c *call) (value, error) {
		return nil, syntax.Errorf(c.pos, "a.sort() sorts in place and returns None: write sort(a)")
	})
	l.register("unique", []string{"ar", "return_index", "return_inverse", "return_counts", "axis", "equal_nan"}, buildUnique)
	l.register("bincount", []string{"x", "weights", "minlength"}, buildBincount)
	l.register("percentile", []string{"a", "q", "axis", "out", "overwrite_input", "method", "keepdims", "interpolation"}, buildPercentile)
	l.register("median", []string{"a", "axis", "out", "overwrite_input", "keepdims"}, buildPercentile)
}

// tuple makes the value of a function with several results.
func (c *call) tuple(nodes ...*spec.Node) value {
	s := seqValue{}
	for _, n := range nodes {
		s.elts = append(s.elts, n)
		s.pos = append(s.pos, c.pos)
	}
	return s
}

// unsupported refuses argument i when it is given and not None or False.
func (c *call) unsupported(i int, why string) error {
	if !c.has(i) {
		return nil
	}
	if n, ok := c.args[i].v.(syntax.PyNum); ok && !n.IsFloat() && n.I == 0 {
		return nil
	}
	return c.errorf(i, "%s(): %s= is not supported%s", c.name, c.f.params[i], why)
}

func buildQR(c *call) (value, error) {
	a, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	mode, err := c.str(1)
	if err != nil {
		return nil, err
	}
	switch mode {
	case "", "reduced", "r":
	case "complete":
		if len(a.Shape) == 2 && a.Shape[0] > a.Shape[1] {
			return nil, c.errorf(1, "linalg.qr: mode='complete' of a tall matrix is not supported (marsfs computes the reduced QR)")
		}
	case "raw":
		return nil, c.errorf(1, "linalg.qr: mode='raw' is not supported")
	default:
		return nil, c.errorf(1, "Unrecognized mode '%s'", mode)
	}
	r, err := c.b.Node(c.pos, tensor.OpQRR, spec.Attrs{}, a)
	if err != nil || mode == "r" {
		return r, err
	}
	q, err := c.b.Node(c.pos, tensor.OpQRQ, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	return c.tuple(q, r), nil
}

func buildSVD(c *call) (value, error) {
	a, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	full, err := c.bool(1, false)
	if err != nil {
		return nil, err
	}
	uv, err := c.bool(2, true)
	if err != nil {
		return nil, err
	}
	if _, err := c.bool(3, false); err != nil {
		return nil, err
	}
	s, err := c.b.Node(c.pos, tensor.OpSVDS, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	if !uv {
		return s, nil
	}
	if full && a.Shape[0] != a.Shape[1] {
		return nil, c.errorf(1, "linalg.svd: full_matrices=True of a matrix that is not square is not supported (marsfs computes the reduced SVD: pass full_matrices=False)")
	}
	u, err := c.b.Node(c.pos, tensor.OpSVDU, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	vt, err := c.b.Node(c.pos, tensor.OpSVDVT, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	return c.tuple(u, s, vt), nil
}

// buildSort sorts along one axis: the last directly, the first of a 2-D
// array between two transposes, and all of them (axis=None) after a ravel.
func buildSort(c *call, op string) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.unsupported(3, ""); err != nil {
		return nil, err
	}
	kind, err := c.str(2)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "", "quicksort", "mergesort", "heapsort", "stable":
	default:
		return nil, c.errorf(2, "sort kind must be one of 'quick', 'heap', or 'stable' (got '%s')", kind)
	}
	axis := -1
	if c.args[1].set && !c.has(1) {
		if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
			return nil, err
		}
	} else if axis, err = c.int(1, -1); err != nil {
		return nil, err
	}
	if len(x.Shape) == 0 {
		return nil, c.errorf(1, "axis %d is out of bounds for array of dimension 0", axis)
	}
	ax, err := spec.NormAxis(axis, len(x.Shape), c.at(1))
	if err != nil {
		return nil, err
	}
	if len(x.Shape) > 2 {
		return sortND(c, op, x, ax)
	}
	if ax == len(x.Shape)-1 {
		return c.b.Node(c.pos, op, spec.Attrs{}, x)
	}
	t, err := c.b.Transpose(c.pos, x, []int{1, 0})
	if err != nil {
		return nil, err
	}
	s, err := c.b.Node(c.pos, op, spec.Attrs{}, t)
	if err != nil {
		return nil, err
	}
	return c.b.Transpose(c.pos, s, []int{1, 0})
}

func buildBincount(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	m, err := c.int(2, 0)
	if err != nil {
		return nil, err
	}
	if m < 0 {
		return nil, c.errorf(2, "'minlength' must not be negative")
	}
	if c.has(1) {
		w, err := c.tensor(1) // weights: each value's sum of them, float64
		if err != nil {
			return nil, err
		}
		return c.b.Node(c.pos, tensor.OpBincount, spec.Attrs{Minlength: m}, x, w)
	}
	return c.b.Node(c.pos, tensor.OpBincount, spec.Attrs{Minlength: m}, x)
}

// buildPercentile builds percentile and median of the flattened array, or
// along either axis of a 2-D one (the first by a transpose).
func buildPercentile(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	median := c.name == "median" || c.name == "nanmedian"
	// The nan-functions come here along an axis (nanPercentile).
	attrs := spec.Attrs{SkipNaN: strings.HasPrefix(c.name, "nan")}
	scalar := true
	if !median {
		if !c.args[1].set {
			return nil, c.missing(1)
		}
		switch q := c.args[1].v.(type) {
		case syntax.PyNum:
			attrs.Q = []float64{q.Float()}
		case seqValue:
			scalar = false
			for i, v := range q.elts {
				n, ok := v.(syntax.PyNum)
				if !ok {
					return nil, syntax.Errorf(q.pos[i], "percentile(): q must hold numbers, not a %s", typeName(v))
				}
				attrs.Q = append(attrs.Q, n.Float())
			}
		default:
			return nil, c.errorf(1, "percentile(): q must be a number or a list of numbers, not a %s", typeName(q))
		}
		if err := scaleQuantiles(c, attrs.Q); err != nil {
			return nil, err
		}
		// interpolation= is NumPy's older name of method=.
		for _, i := range []int{c.param("method"), c.param("interpolation")} {
			if m, err := c.str(i); err != nil {
				return nil, err
			} else if _, ok := tensor.QuantileMethods[m]; m != "" && !ok {
				return nil, c.errorf(i, "'%s' is not a valid method. Use one of: inverted_cdf, averaged_inverted_cdf, closest_observation, interpolated_inverted_cdf, hazen, weibull, linear, median_unbiased, normal_unbiased, lower, higher, midpoint, nearest", m)
			} else if m != "" && m != "linear" {
				attrs.Func = m
			}
		}
	}
	keepdims, err := c.bool(c.param("keepdims"), false)
	if err != nil {
		return nil, err
	}
	// With keepdims the reduced axes stay, of length 1.
	kept := make([]int, len(x.Shape))
	for i := range kept {
		kept[i] = 1
	}
	var others []int // of a 3-D or larger x, the axes left, in order
	ai := c.param("axis")
	if !c.has(ai) {
		if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
			return nil, err
		}
	} else {
		ax, err := c.int(ai, 0)
		if err != nil {
			return nil, err
		}
		if ax, err = spec.NormAxis(ax, len(x.Shape), c.at(ai)); err != nil {
			return nil, err
		}
		copy(kept, x.Shape)
		kept[ax] = 1
		switch {
		case len(x.Shape) > 2:
			if x, others, err = toRows(c, x, ax); err != nil {
				return nil, err
			}
		case len(x.Shape) == 2 && ax == 0:
			if x, err = c.b.Transpose(c.pos, x, []int{1, 0}); err != nil {
				return nil, err
			}
		}
	}
	if attrs.SkipNaN && !x.DType.IsFloat() {
		attrs.SkipNaN = false // integers have no NaN
	}
	if last := x.Shape[len(x.Shape)-1]; !median && last == 0 && !attrs.SkipNaN {
		return nil, c.errorf(0, "%s() of an empty array: cannot do a non-empty take from an empty axes.", c.name)
	}
	op := tensor.OpPercentile
	if median {
		op = tensor.OpMedian
	}
	p, err := c.b.Node(c.pos, op, attrs, x)
	if err != nil {
		return nil, err
	}
	if others != nil {
		// The rows back to the other axes.
		shape := others
		if !median {
			shape = append([]int{p.Shape[0]}, others...)
		}
		if p, err = c.b.Reshape(c.pos, p, shape); err != nil {
			return nil, err
		}
	}
	switch {
	case keepdims && (median || scalar):
		return c.b.Reshape(c.pos, p, kept)
	case keepdims:
		return c.b.Reshape(c.pos, p, append([]int{p.Shape[0]}, kept...))
	case median || !scalar:
		return p, nil
	}
	// A scalar q has no axis in the result.
	return c.b.Reshape(c.pos, p, p.Shape[1:])
}

// buildUnique builds unique of the flattened array: its sorted unique
// values, and with return_counts=True how often each occurs.
func buildUnique(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	wantIndex, err := c.bool(1, false)
	if err != nil {
		return nil, err
	}
	wantInverse, err := c.bool(2, false)
	if err != nil {
		return nil, err
	}
	if c.has(4) {
		// Along the one axis of a 1-D array is the same as flattened.
		ax, err := c.int(4, 0)
		if err != nil {
			return nil, err
		}
		if len(x.Shape) != 1 || ax != 0 && ax != -1 {
			return nil, c.errorf(4, "unique(): axis= is not supported: marsfs finds the unique values of the flattened array")
		}
	}
	counts, err := c.bool(3, false)
	if err != nil {
		return nil, err
	}
	if eq, err := c.bool(5, true); err != nil {
		return nil, err
	} else if !eq {
		return nil, c.errorf(5, "unique(): equal_nan=False is not supported: all NaNs are one value")
	}
	if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
		return nil, err
	}
	v, err := c.b.Node(c.pos, tensor.OpUnique, spec.Attrs{}, x)
	if err != nil || !counts && !wantIndex && !wantInverse {
		return v, err
	}
	outs := []*spec.Node{v}
	if wantIndex {
		idx, err := c.b.UniqueIndex(c.pos, x, v)
		if err != nil {
			return nil, err
		}
		outs = append(outs, idx)
	}
	if wantInverse {
		// Where each element's value is among the unique ones.
		inv, err := c.b.Searchsorted(c.pos, v, x, false)
		if err != nil {
			return nil, err
		}
		outs = append(outs, inv)
	}
	if counts {
		n, err := c.b.Node(c.pos, tensor.OpUniqueCounts, spec.Attrs{}, x)
		if err != nil {
			return nil, err
		}
		outs = append(outs, n)
	}
	return c.tuple(outs...), nil
}

// flatLen is the length of an array of shape flattened: Unknown when an
// axis is.
func flatLen(shape []int) int {
	if tensor.HasUnknown(shape) {
		return tensor.Unknown
	}
	return tensor.NumElements(shape)
}
