package spec

import (
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

// A term is an operand and its letters, one an axis.
type term struct {
	x    *Node
	subs string
}

func einsum(c *call) (value, error) {
	spec, ok := c.args[0].v.(string)
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
	spec = strings.ReplaceAll(spec, " ", "")
	in, out, explicit := strings.Cut(spec, "->")
	subs := strings.Split(in, ",")
	if len(subs) != len(ops.elts) {
		return nil, syntax.Errorf(p, "more operands provided to einstein sum function than specified in the subscripts string")
	}
	xs := make([]*Node, len(subs))
	for i := range subs {
		var err error
		if xs[i], err = c.b.tensor(ops.elts[i], ops.pos[i]); err != nil {
			return nil, err
		}
	}
	ell, err := expandEllipses(p, spec, subs, &out, explicit, xs)
	if err != nil {
		return nil, err
	}
	terms := make([]term, len(subs))
	count := map[rune]int{}
	size := map[rune]int{}
	for i, s := range subs {
		x := xs[i]
		if tensor.HasUnknown(x.Shape) {
			return nil, syntax.Errorf(ops.pos[i], "einsum() of an array of shape %s: its length depends on the data", ShapeString(x.Shape))
		}
		if len(s) != len(x.Shape) {
			return nil, syntax.Errorf(ops.pos[i], "operand has more dimensions than subscripts given in einstein sum, but no '...' ellipsis provided to broadcast the extra dimensions.")
		}
		for ax, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return nil, syntax.Errorf(p, "invalid subscript '%c' in einstein sum subscripts string, subscripts must be letters", r)
			}
			count[r]++
			if d, ok := size[r]; ok && d != x.Shape[ax] {
				return nil, syntax.Errorf(p, "operands could not be broadcast together with remapped shapes [original->remapped]: size of '%c' is %d and %d", r, d, x.Shape[ax])
			}
			size[r] = x.Shape[ax]
		}
		terms[i] = term{x, s}
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
	dt := terms[0].x.DType
	for _, t := range terms[1:] {
		dt = tensor.Promote(dt, t.x.DType)
	}
	b := c.b
	if len(terms) == 1 {
		if terms[0], err = b.einsumDiagonal(p, terms[0]); err != nil {
			return nil, err
		}
	}
	for _, t := range terms {
		if hasRepeat(t.subs) {
			return nil, syntax.Errorf(p, "einsum(): a letter repeated within one of several operands ('%s') is not supported", t.subs)
		}
	}
	acc := terms[0]
	for i := 1; i <= len(terms); i++ {
		// The letters still needed: the output's and the later operands'.
		need := out
		for _, t := range terms[min(i+1, len(terms)):] {
			need += t.subs
		}
		if i == len(terms) {
			if acc, err = b.einsumSum(p, acc, need); err != nil {
				return nil, err
			}
			break
		}
		next := terms[i]
		if acc, err = b.einsumSum(p, acc, need+next.subs); err != nil {
			return nil, err
		}
		if next, err = b.einsumSum(p, next, need+acc.subs); err != nil {
			return nil, err
		}
		if acc, err = b.einsumPair(p, acc, next, need); err != nil {
			return nil, err
		}
	}
	perm := make([]int, len(out))
	for i, r := range out {
		perm[i] = strings.IndexRune(acc.subs, r)
	}
	r, err := b.transpose(p, acc.x, perm)
	if err != nil {
		return nil, err
	}
	return b.astype(p, r, dt)
}

func hasRepeat(s string) bool {
	for i, r := range s {
		if strings.ContainsRune(s[i+1:], r) {
			return true
		}
	}
	return false
}

// einsumDiagonal takes the diagonal of a 2-D operand whose two letters are
// one (ii): the only repeat einsum takes.
func (b *builder) einsumDiagonal(p syntax.SrcPos, t term) (term, error) {
	if len(t.subs) != 2 || t.subs[0] != t.subs[1] {
		return t, nil
	}
	if t.x.Shape[0] != t.x.Shape[1] {
		return t, syntax.Errorf(p, "einsum(): '%s' of a matrix that is not square", t.subs)
	}
	d, err := b.diagonal(p, t.x, 0)
	return term{d, t.subs[:1]}, err
}

// einsumSum sums t over the letters need lacks.
func (b *builder) einsumSum(p syntax.SrcPos, t term, need string) (term, error) {
	var axes []int
	var keep strings.Builder
	for ax, r := range t.subs {
		if strings.ContainsRune(need, r) {
			keep.WriteRune(r)
		} else {
			axes = append(axes, ax)
		}
	}
	if len(axes) == 0 {
		return t, nil
	}
	x, err := b.reduceNode(p, tensor.OpSum, t.x, axes, false, 0)
	return term{x, keep.String()}, err
}

// einsumPair contracts x and y, whose letters are each needed by the
// other or later (need): the shared letters not in need are summed.
func (b *builder) einsumPair(p syntax.SrcPos, x, y term, need string) (term, error) {
	var ax, ay []int
	batch := false
	for i, r := range x.subs {
		j := strings.IndexRune(y.subs, r)
		if j < 0 {
			continue
		}
		if strings.ContainsRune(need, r) {
			batch = true
			continue
		}
		ax, ay = append(ax, i), append(ay, j)
	}
	if !batch {
		r, err := b.tensordot(p, x.x, y.x, ax, ay)
		if err != nil {
			return term{}, err
		}
		var subs strings.Builder
		for i, r := range x.subs {
			if !slices.Contains(ax, i) {
				subs.WriteRune(r)
			}
		}
		for j, r := range y.subs {
			if !slices.Contains(ay, j) {
				subs.WriteRune(r)
			}
		}
		return term{r, subs.String()}, nil
	}
	// Broadcast both to the letters of x, then y's own, then multiply and
	// sum the shared ones need lacks.
	all := x.subs
	for _, r := range y.subs {
		if !strings.ContainsRune(all, r) {
			all += string(r)
		}
	}
	align := func(t term) (*Node, error) {
		var perm, shape []int
		for _, r := range all {
			if i := strings.IndexRune(t.subs, r); i >= 0 {
				perm = append(perm, i)
				shape = append(shape, t.x.Shape[i])
			} else {
				shape = append(shape, 1)
			}
		}
		v, err := b.transpose(p, t.x, perm)
		if err != nil {
			return nil, err
		}
		return b.reshape(p, v, shape)
	}
	xa, err := align(x)
	if err != nil {
		return term{}, err
	}
	ya, err := align(y)
	if err != nil {
		return term{}, err
	}
	prod, err := b.node(p, tensor.OpMultiply, Attrs{}, xa, ya)
	if err != nil {
		return term{}, err
	}
	return b.einsumSum(p, term{prod, all}, need)
}

// expandEllipses replaces each "..." of subs (and of out, or, when the
// output is implicit, returns the letters to put first) by letters the
// spec does not use, one an axis the operand has beyond its letters,
// aligned from the right.
func expandEllipses(p syntax.SrcPos, spec string, subs []string, out *string, explicit bool, xs []*Node) (string, error) {
	if !strings.Contains(spec, ".") {
		return "", nil
	}
	var free []rune
	for _, r := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" {
		if !strings.ContainsRune(spec, r) {
			free = append(free, r)
		}
	}
	extra := make([]int, len(subs))
	most := 0
	for i, s := range subs {
		if strings.Count(s, ".") == 0 {
			continue
		}
		if strings.Count(s, "...") != 1 || strings.Count(s, ".") != 3 {
			return "", syntax.Errorf(p, "einstein sum subscripts string contains a '.' that is not part of an ellipsis ('...')")
		}
		extra[i] = len(xs[i].Shape) - (len(s) - 3)
		if extra[i] < 0 {
			return "", syntax.Errorf(p, "einstein sum subscripts string contains too many subscripts for operand %d", i)
		}
		most = max(most, extra[i])
	}
	if most > len(free) {
		return "", syntax.Errorf(p, "einsum(): too many axes for the letters left")
	}
	ell := string(free[:most])
	for i, s := range subs {
		if strings.Contains(s, "...") {
			subs[i] = strings.Replace(s, "...", string(free[most-extra[i]:most]), 1)
		}
	}
	if explicit {
		if strings.Count(*out, ".") != 0 && (strings.Count(*out, "...") != 1 || strings.Count(*out, ".") != 3) {
			return "", syntax.Errorf(p, "einstein sum subscripts string contains a '.' that is not part of an ellipsis ('...')")
		}
		*out = strings.Replace(*out, "...", ell, 1)
	}
	return ell, nil
}
