package tensor

// The functions of factorizations, solvers and sorting (see
// infer_linalg.go). The factorizations return one node per result, as a
// tuple: q, r = linalg.qr(a).

func init() {
	register("linalg.qr", []string{"a", "mode"}, func(c *call) (value, error) {
		a, err := c.factorInput(0, opQRQ, opQRR)
		if err != nil {
			return nil, err
		}
		mode, err := c.str(1)
		if err != nil {
			return nil, err
		}
		switch mode {
		case "", "reduced":
			return c.results(a, opQRQ, opQRR)
		case "r":
			return c.b.node(c.pos, opQRR, Attrs{}, a)
		}
		return nil, c.errorf(1, "linalg.qr mode %q is not supported (reduced and r are)", mode)
	})
	register("linalg.svd", []string{"a", "full_matrices", "compute_uv"}, func(c *call) (value, error) {
		a, err := c.factorInput(0, opSVDU, opSVDS, opSVDVT)
		if err != nil {
			return nil, err
		}
		full, err := c.bool(1, true)
		if err != nil {
			return nil, err
		}
		uv, err := c.bool(2, true)
		if err != nil {
			return nil, err
		}
		if !uv {
			return c.b.node(c.pos, opSVDS, Attrs{}, a)
		}
		if full && len(a.Shape) == 2 && a.Shape[0] != a.Shape[1] {
			return nil, errorf(c.pos, "linalg.svd with full_matrices=True of a non-square matrix is not supported; pass full_matrices=False")
		}
		return c.results(a, opSVDU, opSVDS, opSVDVT)
	})
	for name, op := range map[string]string{"linalg.inv": opInv, "linalg.cholesky": opCholesky} {
		register(name, []string{"a"}, func(c *call) (value, error) {
			a, err := c.factorInput(0, op)
			if err != nil {
				return nil, err
			}
			return c.b.node(c.pos, op, Attrs{}, a)
		})
	}
	register("linalg.solve", []string{"a", "b"}, func(c *call) (value, error) {
		a, err := c.factorInput(0, opSolve)
		if err != nil {
			return nil, err
		}
		b, err := c.tensor(1)
		if err != nil {
			return nil, err
		}
		return c.b.node(c.pos, opSolve, Attrs{}, a, b)
	})
	for name, op := range map[string]string{"sort": opSort, "argsort": opArgsort} {
		fn := func(c *call) (value, error) { return sortAlong(c, op) }
		register(name, []string{"a", "axis", "kind"}, fn)
		if op == opArgsort {
			registerMethod(name, []string{"a", "axis", "kind"}, fn)
		}
	}
	registerMethod("sort", []string{"a", "axis", "kind"}, func(c *call) (value, error) {
		return nil, errorf(c.pos, "a.sort() sorts in place and returns None; use sort(a)")
	})
}

// factorInput returns argument i, checking that ops can be tiled.
func (c *call) factorInput(i int, ops ...string) (*Node, error) {
	for _, op := range ops {
		if !available(op) {
			return nil, errorf(c.pos, "%s is not supported yet", c.name)
		}
	}
	return c.tensor(i)
}

// results makes one node a result of a factorization of a.
func (c *call) results(a *Node, ops ...string) (value, error) {
	var out seqValue
	for _, op := range ops {
		n, err := c.b.node(c.pos, op, Attrs{}, a)
		if err != nil {
			return nil, err
		}
		out.elts = append(out.elts, n)
		out.pos = append(out.pos, c.pos)
	}
	return out, nil
}

// sortAlong sorts (or argsorts) along an axis: the last as it is, another
// axis of a 2-D tensor by transposing around the sort, and axis=None the
// flattened tensor.
func sortAlong(c *call, op string) (value, error) {
	x, err := c.factorInput(0, op)
	if err != nil {
		return nil, err
	}
	if c.args[1].set && !c.has(1) {
		if x, err = c.b.reshape(c.pos, x, []int{NumElements(x.Shape)}); err != nil {
			return nil, err
		}
		return c.b.node(c.pos, op, Attrs{}, x)
	}
	a, err := c.int(1, -1)
	if err != nil {
		return nil, err
	}
	ax, err := normAxis(a, len(x.Shape), c.at(1))
	if err != nil {
		return nil, err
	}
	if ax == len(x.Shape)-1 {
		return c.b.node(c.pos, op, Attrs{}, x)
	}
	if len(x.Shape) != 2 {
		return nil, errorf(c.pos, "%s of a %d-D tensor is not supported (1-D and 2-D only)", c.name, len(x.Shape))
	}
	if x, err = c.b.transpose(c.pos, x, []int{1, 0}); err != nil {
		return nil, err
	}
	if x, err = c.b.node(c.pos, op, Attrs{}, x); err != nil {
		return nil, err
	}
	return c.b.transpose(c.pos, x, []int{1, 0})
}
