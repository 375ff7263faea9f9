package spec

import (
	"fmt"

	"marsfs/tensor"
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
	w, err := c.b.node(c.pos, tensor.OpEighW, Attrs{K: k}, a)
	if err != nil || c.name == "linalg.eigvalsh" {
		return w, err
	}
	v, err := c.b.node(c.pos, tensor.OpEighV, Attrs{K: k}, a)
	if err != nil {
		return nil, err
	}
	return c.tuple(w, v), nil
}

func inferEigh(n *Node) error {
	x := n.Inputs[0]
	if len(x.Shape) != 2 {
		return fmt.Errorf("%d-dimensional array given. Array must be at least two-dimensional", len(x.Shape))
	}
	if x.Shape[0] != x.Shape[1] {
		return fmt.Errorf("Last 2 dimensions of the array must be square")
	}
	if n.Attrs.K != 0 && n.Attrs.K != 1 {
		return fmt.Errorf("eigh: K must be 0 (lower) or 1 (upper)")
	}
	n.DType = SolveDType(x.DType)
	n.Shape = []int{x.Shape[0]}
	if n.Op == tensor.OpEighV {
		n.Shape = []int{x.Shape[0], x.Shape[0]}
	}
	return nil
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
	for i, t := range []*Node{a, b0} {
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
	q, err := b.node(p, tensor.OpQRQ, Attrs{}, a)
	if err != nil {
		return nil, err
	}
	r, err := b.node(p, tensor.OpQRR, Attrs{}, a)
	if err != nil {
		return nil, err
	}
	qt, err := b.transpose(p, q, []int{1, 0})
	if err != nil {
		return nil, err
	}
	qtb, err := b.matmul(p, qt, b0)
	if err != nil {
		return nil, err
	}
	x, err := b.node(p, tensor.OpSolve, Attrs{}, r, qtb)
	if err != nil {
		return nil, err
	}
	var res *Node
	if m > n {
		ax, err := b.matmul(p, a, x)
		if err != nil {
			return nil, err
		}
		d, err := b.node(p, tensor.OpSubtract, Attrs{}, b0, ax)
		if err != nil {
			return nil, err
		}
		sq, err := b.node(p, tensor.OpMultiply, Attrs{}, d, d)
		if err != nil {
			return nil, err
		}
		if res, err = b.reduceNode(p, tensor.OpSum, sq, []int{0}, false, 0); err != nil {
			return nil, err
		}
		if len(res.Shape) == 0 {
			if res, err = b.reshape(p, res, []int{1}); err != nil {
				return nil, err
			}
		}
		if res, err = b.astype(p, res, x.DType); err != nil {
			return nil, err
		}
	} else if res, err = b.fullOf(p, []int{0}, syntax.PyInt(0), x.DType); err != nil {
		return nil, err
	}
	s, err := b.node(p, tensor.OpSVDS, Attrs{}, a)
	if err != nil {
		return nil, err
	}
	top, err := b.reduceNode(p, tensor.OpMax, s, nil, false, 0)
	if err != nil {
		return nil, err
	}
	tol, err := b.node(p, tensor.OpMultiply, Attrs{}, top, b.scalar(syntax.PyFloat(rcond)))
	if err != nil {
		return nil, err
	}
	above, err := b.node(p, tensor.OpGreater, Attrs{}, s, tol)
	if err != nil {
		return nil, err
	}
	rank, err := b.reduceNode(p, tensor.OpCountNonzero, above, nil, false, 0)
	if err != nil {
		return nil, err
	}
	// LAPACK's rank is a C int: NumPy's is int32.
	if rank, err = b.astype(p, rank, tensor.Int32); err != nil {
		return nil, err
	}
	return c.tuple(x, res, rank, s), nil
}
