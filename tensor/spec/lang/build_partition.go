package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
)

// partition and argpartition. NumPy promises only that the kth element
// is where a sort would put it, the smaller ones before and the larger
// after, each side in no given order: a sort keeps that promise, so both
// are the sort (argsort) along the axis, and every kth is checked as
// NumPy checks it.

func registerPartition(l *library) {
	params := []string{"a", "kth", "axis", "kind", "order"}
	for name, op := range map[string]string{"partition": tensor.OpSort, "argpartition": tensor.OpArgsort} {
		fn := func(c *call) (value, error) { return partition(c, op) }
		l.register(name, params, fn)
		if op == tensor.OpArgsort {
			l.registerMethod(name, params, fn)
		}
	}
	l.register("topk", []string{"a", "k", "axis"}, func(c *call) (value, error) { return topk(c, tensor.OpSort) })
	l.register("argtopk", []string{"a", "k", "axis"}, func(c *call) (value, error) { return topk(c, tensor.OpArgsort) })
	l.registerMethod("partition", params, func(c *call) (value, error) {
		return nil, c.errorf(0, "a.partition() partitions in place and returns None: write partition(a, kth)")
	})
}

func partition(c *call, op string) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	if err := c.unsupported(4, ""); err != nil {
		return nil, err
	}
	if kind, err := c.str(3); err != nil {
		return nil, err
	} else if kind != "" && kind != "introselect" {
		return nil, c.errorf(3, "%s(): kind must be 'introselect' (got '%s')", c.name, kind)
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	kth, err := ints(c.args[1].v, c.args[1].pos)
	if err != nil {
		return nil, err
	}
	axis := -1
	if c.args[2].set && !c.has(2) {
		if x, err = c.b.Reshape(c.pos, x, []int{flatLen(x.Shape)}); err != nil {
			return nil, err
		}
	} else if axis, err = c.int(2, -1); err != nil {
		return nil, err
	}
	if len(x.Shape) == 0 {
		return nil, c.errorf(2, "axis %d is out of bounds for array of dimension 0", axis)
	}
	ax, err := spec.NormAxis(axis, len(x.Shape), c.at(2))
	if err != nil {
		return nil, err
	}
	n := x.Shape[ax]
	for _, k := range kth {
		if k < 0 {
			k += n
		}
		if k < 0 || k >= n {
			return nil, c.errorf(1, "kth(=%d) out of bounds (%d)", k, n)
		}
	}
	return sortAxis(c, op, x, ax)
}

// sortAxis sorts (argsorts) x along ax.
func sortAxis(c *call, op string, x *spec.Node, ax int) (value, error) {
	nd := len(x.Shape)
	switch {
	case nd > 2:
		return sortND(c, op, x, ax)
	case ax == nd-1:
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

// topk is Dask's and Mars' topk(a, k, axis=-1): the k largest elements
// along axis, largest first, or for a negative k the -k smallest,
// smallest first; argtopk their indices. Both are slices of the sort
// (NaNs sort last, so they count as the largest, as in Dask).
func topk(c *call, op string) (value, error) {
	x, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	if err := c.known(x); err != nil {
		return nil, err
	}
	if !c.has(1) {
		return nil, c.missing(1)
	}
	k, err := c.int(1, 0)
	if err != nil {
		return nil, err
	}
	a, err := c.int(2, -1)
	if err != nil {
		return nil, err
	}
	if len(x.Shape) == 0 {
		return nil, c.errorf(0, "%s() of a 0-d array: it needs an axis", c.name)
	}
	ax, err := spec.NormAxis(a, len(x.Shape), c.at(2))
	if err != nil {
		return nil, err
	}
	n := x.Shape[ax]
	if k > n || -k > n {
		return nil, c.errorf(1, "%s(): k=%d is more than the axis' %d elements", c.name, k, n)
	}
	s, err := sortAxis(c, op, x, ax)
	if err != nil {
		return nil, err
	}
	sorted := s.(*spec.Node)
	if k < 0 {
		return c.b.SliceAxis(c.pos, sorted, ax, tensor.Slice{Start: 0, Step: 1, Len: -k})
	}
	if k == 0 {
		return c.b.SliceAxis(c.pos, sorted, ax, tensor.Slice{Start: 0, Step: 1, Len: 0})
	}
	// The last k, largest first.
	return c.b.SliceAxis(c.pos, sorted, ax, tensor.Slice{Start: n - 1, Step: -1, Len: k})
}
