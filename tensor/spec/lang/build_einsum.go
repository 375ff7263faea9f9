package lang

import (
	"marsfs/tensor/spec"
	"slices"
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// einsum rewrites Einstein summation onto the ops that tile well. With one
// operand it is a diagonal (ii), sums over the letters the output drops,
// and a transpose. Several operands are contracted pairwise, left to
// right; each pair first sums away the letters only it has and nothing
// later needs, then:
//   - with no letter both keep (no batch letter), tensordot over the
//     letters they share: a blocked product (ij,jk->ik, ij,ij->, i,j->ij);
//   - else (bij,bjk->bik) the two broadcast against each other, multiply
//     and sum over the shared letters: elementwise and a reduction tree,
//     which holds the product's full index space, so it suits small
//     batches.
//
// An ellipsis stands for the axes an operand has beyond its letters,
// aligned from the right across operands, as letters the spec does not
// use. The result has the operands' result dtype, as NumPy's einsum, which
// accumulates in it. Repeated letters in one operand of several, and
// ellipses whose axes broadcast (a length 1 against another), are refused.

func registerEinsum(l *library) {
	l.register("einsum", []string{"subscripts", "*operands", "out", "dtype", "order", "casting", "optimize"}, einsum)
}

func einsum(c *call) (value, error) {
	subscripts, ok := c.args[0].v.(string)
	if !c.args[0].set || !ok {
		return nil, c.errorf(0, "einsum(): the first argument must be a subscripts string such as 'ij,jk->ik'")
	}
	for i := 2; i < len(c.args); i++ {
		if c.has(i) && c.f.params[i] != "optimize" {
			return nil, c.errorf(i, "einsum(): %s= is not supported", c.f.params[i])
		}
	}
	ops, _ := c.args[1].v.(seqValue)
	if len(ops.elts) == 0 {
		return nil, c.errorf(0, "No input operands")
	}
	p := c.at(0)
	subscripts = strings.ReplaceAll(subscripts, " ", "")
	in, out, explicit := strings.Cut(subscripts, "->")
	subs := strings.Split(in, ",")
	if len(subs) != len(ops.elts) {
		return nil, syntax.Errorf(p, "more operands provided to einstein sum function than specified in the subscripts string")
	}
	xs := make([]*spec.Node, len(subs))
	for i := range subs {
		var err error
		if xs[i], err = c.b.tensor(ops.elts[i], ops.pos[i]); err != nil {
			return nil, err
		}
	}
	ell, err := spec.ExpandEllipses(p, subscripts, subs, &out, explicit, xs)
	if err != nil {
		return nil, err
	}
	terms := make([]spec.Term, len(subs))
	count := map[rune]int{}
	size := map[rune]int{}
	for i, s := range subs {
		x := xs[i]
		if tensor.HasUnknown(x.Shape) {
			return nil, syntax.Errorf(ops.pos[i], "einsum() of an array of shape %s: its length depends on the data", spec.ShapeString(x.Shape))
		}
		if len(s) != len(x.Shape) {
			return nil, syntax.Errorf(ops.pos[i], "operand has more dimensions than subscripts given in einstein sum, but no '...' ellipsis provided to broadcast the extra dimensions.")
		}
		for ax, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return nil, syntax.Errorf(p, "invalid subscript '%c' in einstein sum subscripts string, subscripts must be letters", r)
			}
			count[r]++
			// A letter of length 1 broadcasts against the others', as
			// NumPy's einsum does.
			d, ok := size[r]
			switch {
			case !ok || d == 1:
				size[r] = x.Shape[ax]
			case x.Shape[ax] != d && x.Shape[ax] != 1:
				return nil, syntax.Errorf(p, "operands could not be broadcast together with remapped shapes [original->remapped]: size of '%c' is %d and %d", r, d, x.Shape[ax])
			}
		}
		terms[i] = spec.Term{X: x, Subs: s}
	}
	for i, t := range terms {
		shape := make([]int, len(t.Subs))
		for ax, r := range t.Subs {
			shape[ax] = size[r]
		}
		if !slices.Equal(shape, t.X.Shape) {
			if terms[i].X, err = c.b.BroadcastTo(p, t.X, shape); err != nil {
				return nil, err
			}
		}
	}
	if !explicit {
		// The ellipsis' axes, then the letters seen once, in
		// alphabetical order (NumPy's order: upper case first).
		var once []rune
		for r, n := range count {
			if n == 1 && !strings.ContainsRune(ell, r) {
				once = append(once, r)
			}
		}
		slices.Sort(once)
		out = ell + string(once)
	}
	for i, r := range out {
		if _, ok := size[r]; !ok {
			return nil, syntax.Errorf(p, "einstein sum subscripts string included output subscript '%c' which never appeared in an input", r)
		}
		if strings.ContainsRune(out[i+1:], r) {
			return nil, syntax.Errorf(p, "einstein sum subscripts string includes output subscript '%c' multiple times", r)
		}
	}
	dt := terms[0].X.DType
	for _, t := range terms[1:] {
		dt = tensor.Promote(dt, t.X.DType)
	}
	b := c.b
	if len(terms) == 1 {
		if terms[0], err = b.EinsumDiagonal(p, terms[0]); err != nil {
			return nil, err
		}
	}
	for _, t := range terms {
		if spec.HasRepeat(t.Subs) {
			return nil, syntax.Errorf(p, "einsum(): a letter repeated within one of several operands ('%s') is not supported", t.Subs)
		}
	}
	acc := terms[0]
	for i := 1; i <= len(terms); i++ {
		// The letters still needed: the output's and the later operands'.
		need := out
		for _, t := range terms[min(i+1, len(terms)):] {
			need += t.Subs
		}
		if i == len(terms) {
			if acc, err = b.EinsumSum(p, acc, need); err != nil {
				return nil, err
			}
			break
		}
		next := terms[i]
		if acc, err = b.EinsumSum(p, acc, need+next.Subs); err != nil {
			return nil, err
		}
		if next, err = b.EinsumSum(p, next, need+acc.Subs); err != nil {
			return nil, err
		}
		if acc, err = b.EinsumPair(p, acc, next, need); err != nil {
			return nil, err
		}
	}
	perm := make([]int, len(out))
	for i, r := range out {
		perm[i] = strings.IndexRune(acc.Subs, r)
	}
	r, err := b.Transpose(p, acc.X, perm)
	if err != nil {
		return nil, err
	}
	return b.Astype(p, r, dt)
}
