package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// linalg.eigh and linalg.lstsq.

func registerEighLstsq(l *library) {
	l.register("linalg.eigh", []string{"a", "UPLO"}, eigh)
	l.register("linalg.eigvalsh", []string{"a", "UPLO"}, eigh)
	l.register("linalg.lstsq", []string{"a", "b", "rcond"}, lstsq)
}

// eigh is w, v = linalg.eigh(a): OpEighW and OpEighV, which share one
// decomposition of the gathered matrix.
func eigh(c *call) (value, error) {
	a, err := c.tensor(0)
	if err != nil {
		return nil, err
	}
	uplo, err := c.str(1)
	if err != nil {
		return nil, err
	}
	k := 0
	switch uplo {
	case "", "L":
	case "U":
		k = 1
	default:
		return nil, c.errorf(1, "UPLO argument must be 'L' or 'U'")
	}
	w, err := c.b.Node(c.pos, tensor.OpEighW, spec.Attrs{K: k}, a)
	if err != nil || c.name == "linalg.eigvalsh" {
		return w, err
	}
	v, err := c.b.Node(c.pos, tensor.OpEighV, spec.Attrs{K: k}, a)
	if err != nil {
		return nil, err
	}
	return c.tuple(w, v), nil
}

// lstsq is x, residuals, rank, s = linalg.lstsq(a, b) for a of full column
// rank with at least as many rows as columns: x solves R x = Qᵀ b of the
// TSQR of a (blocked, no gather), residuals are the column sums of
// (b - a x)² (empty for a square a), rank counts the singular values
// above rcond times the largest (rcond=None: eps·max(m, n); NumPy 1.24's
// default, -1: eps), and s are those of linalg.svd. NumPy's least-norm
// answer for a rank-deficient a (and its empty residuals then), and
// underdetermined systems, are not reproduced: the first fails in solve as
// singular, the second is refused.
func lstsq(c *call) (value, error) {
	a, b0, err := c.pair()
	if err != nil {
		return nil, err
	}
	b, p := c.b, c.pos
	for i, t := range []*spec.Node{a, b0} {
		if err := c.known(t); err != nil {
			return nil, err
		}
		if len(t.Shape) == 0 || len(t.Shape) > 2 || i == 0 && len(t.Shape) != 2 {
			return nil, c.errorf(i, "%d-dimensional array given. Array must be two-dimensional", len(t.Shape))
		}
	}
	m, n := a.Shape[0], a.Shape[1]
	if b0.Shape[0] != m {
		return nil, c.errorf(1, "Incompatible dimensions")
	}
	if m < n {
		return nil, c.errorf(0, "linalg.lstsq(): an underdetermined system (%d rows < %d columns) is not supported", m, n)
	}
	eps := 2.220446049250313e-16
	rcond := eps
	if c.args[2].set {
		if !c.has(2) {
			rcond = eps * float64(max(m, n))
		} else if rcond, err = c.float(2, eps); err != nil {
			return nil, err
		} else if rcond < 0 {
			rcond = eps
		}
	}
	q, err := b.Node(p, tensor.OpQRQ, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	r, err := b.Node(p, tensor.OpQRR, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	qt, err := b.Transpose(p, q, []int{1, 0})
	if err != nil {
		return nil, err
	}
	qtb, err := b.Matmul(p, qt, b0)
	if err != nil {
		return nil, err
	}
	x, err := b.Node(p, tensor.OpSolve, spec.Attrs{}, r, qtb)
	if err != nil {
		return nil, err
	}
	var res *spec.Node
	if m > n {
		ax, err := b.Matmul(p, a, x)
		if err != nil {
			return nil, err
		}
		d, err := b.Node(p, tensor.OpSubtract, spec.Attrs{}, b0, ax)
		if err != nil {
			return nil, err
		}
		sq, err := b.Node(p, tensor.OpMultiply, spec.Attrs{}, d, d)
		if err != nil {
			return nil, err
		}
		if res, err = b.ReduceNode(p, tensor.OpSum, sq, []int{0}, false, 0); err != nil {
			return nil, err
		}
		if len(res.Shape) == 0 {
			if res, err = b.Reshape(p, res, []int{1}); err != nil {
				return nil, err
			}
		}
		if res, err = b.Astype(p, res, x.DType); err != nil {
			return nil, err
		}
	} else if res, err = b.FullOf(p, []int{0}, syntax.PyInt(0), x.DType); err != nil {
		return nil, err
	}
	s, err := b.Node(p, tensor.OpSVDS, spec.Attrs{}, a)
	if err != nil {
		return nil, err
	}
	top, err := b.ReduceNode(p, tensor.OpMax, s, nil, false, 0)
	if err != nil {
		return nil, err
	}
	tol, err := b.Node(p, tensor.OpMultiply, spec.Attrs{}, top, b.Scalar(syntax.PyFloat(rcond)))
	if err != nil {
		return nil, err
	}
	above, err := b.Node(p, tensor.OpGreater, spec.Attrs{}, s, tol)
	if err != nil {
		return nil, err
	}
	rank, err := b.ReduceNode(p, tensor.OpCountNonzero, above, nil, false, 0)
	if err != nil {
		return nil, err
	}
	// LAPACK's rank is a C int: NumPy's is int32.
	if rank, err = b.Astype(p, rank, tensor.Int32); err != nil {
		return nil, err
	}
	return c.tuple(x, res, rank, s), nil
}
