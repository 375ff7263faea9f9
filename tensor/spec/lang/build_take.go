package lang

import (
	"marsfs/tensor/spec"
)

// take(a, indices, axis=, mode=), and the Take of integer-array indexing
// (build_index_adv.go). Both make one OpTake
// along the first axis of x (others transposed there and back), its
// indices int64: negative ones count from the end and any out of range
// fails the graph with NumPy's IndexError (mode 'raise', in the kernels,
// which know the length even when the spec does not: v[inverse] of
// unique's values), or are wrapped or clipped first (modes 'wrap',
// 'clip', which need the length in the spec).

func registerTake(l *library) {
	l.register("take", []string{"a", "indices", "axis", "out", "mode"}, takeFn)
	l.registerMethod("take", []string{"a", "indices", "axis", "out", "mode"}, takeFn)
}

func takeFn(c *call) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	i, err := c.tensor(1)
	if err != nil {
		return nil, err
	}
	if err := c.noOut(); err != nil {
		return nil, err
	}
	mode, err := c.str(4)
	if err != nil {
		return nil, err
	}
	switch mode {
	case "":
		mode = "raise"
	case "raise", "wrap", "clip":
	default:
		return nil, c.errorf(4, "clipmode must be one of 'clip', 'raise', or 'wrap' (got '%s')", mode)
	}
	ax := 0
	if c.has(2) {
		a, err := c.int(2, 0)
		if err != nil {
			return nil, err
		}
		if ax, err = spec.NormAxis(a, len(x.Shape), c.at(2)); err != nil {
			return nil, err
		}
	} else if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
		return nil, err
	}
	return c.b.Take(c.pos, x, i, ax, mode)
}
