package spec

import (
	"slices"
	"strings"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// A Term is an operand and its letters, one an axis.
type Term struct {
	X    *Node
	Subs string
}

// HasRepeat reports whether a letter appears twice in einsum's
// subscripts s.
func HasRepeat(s string) bool {
	for i, r := range s {
		if strings.ContainsRune(s[i+1:], r) {
			return true
		}
	}
	return false
}

// EinsumDiagonal takes the diagonal of a 2-D operand whose two letters are
// one (ii): the only repeat einsum takes.
func (b *Builder) EinsumDiagonal(p syntax.SrcPos, t Term) (Term, error) {
	if len(t.Subs) != 2 || t.Subs[0] != t.Subs[1] {
		return t, nil
	}
	if t.X.Shape[0] != t.X.Shape[1] {
		return t, syntax.Errorf(p, "einsum(): '%s' of a matrix that is not square", t.Subs)
	}
	d, err := b.Diagonal(p, t.X, 0)
	return Term{d, t.Subs[:1]}, err
}

// EinsumSum sums t over the letters need lacks.
func (b *Builder) EinsumSum(p syntax.SrcPos, t Term, need string) (Term, error) {
	var axes []int
	var keep strings.Builder
	for ax, r := range t.Subs {
		if strings.ContainsRune(need, r) {
			keep.WriteRune(r)
		} else {
			axes = append(axes, ax)
		}
	}
	if len(axes) == 0 {
		return t, nil
	}
	x, err := b.ReduceNode(p, tensor.OpSum, t.X, axes, false, 0)
	return Term{x, keep.String()}, err
}

// EinsumPair contracts x and y, whose letters are each needed by the
// other or later (need): the shared letters not in need are summed.
func (b *Builder) EinsumPair(p syntax.SrcPos, x, y Term, need string) (Term, error) {
	var ax, ay []int
	batch := false
	for i, r := range x.Subs {
		j := strings.IndexRune(y.Subs, r)
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
		r, err := b.Tensordot(p, x.X, y.X, ax, ay)
		if err != nil {
			return Term{}, err
		}
		var subs strings.Builder
		for i, r := range x.Subs {
			if !slices.Contains(ax, i) {
				subs.WriteRune(r)
			}
		}
		for j, r := range y.Subs {
			if !slices.Contains(ay, j) {
				subs.WriteRune(r)
			}
		}
		return Term{r, subs.String()}, nil
	}
	// Broadcast both to the letters of x, then y's own, then multiply and
	// sum the shared ones need lacks.
	all := x.Subs
	for _, r := range y.Subs {
		if !strings.ContainsRune(all, r) {
			all += string(r)
		}
	}
	align := func(t Term) (*Node, error) {
		var perm, shape []int
		for _, r := range all {
			if i := strings.IndexRune(t.Subs, r); i >= 0 {
				perm = append(perm, i)
				shape = append(shape, t.X.Shape[i])
			} else {
				shape = append(shape, 1)
			}
		}
		v, err := b.Transpose(p, t.X, perm)
		if err != nil {
			return nil, err
		}
		return b.Reshape(p, v, shape)
	}
	xa, err := align(x)
	if err != nil {
		return Term{}, err
	}
	ya, err := align(y)
	if err != nil {
		return Term{}, err
	}
	prod, err := b.Node(p, tensor.OpMultiply, Attrs{}, xa, ya)
	if err != nil {
		return Term{}, err
	}
	return b.EinsumSum(p, Term{prod, all}, need)
}

// ExpandEllipses replaces each "..." of subs (and of out, or, when the
// output is implicit, returns the letters to put first) by letters the
// spec does not use, one an axis the operand has beyond its letters,
// aligned from the right.
func ExpandEllipses(p syntax.SrcPos, subscripts string, subs []string, out *string, explicit bool, xs []*Node) (string, error) {
	if !strings.Contains(subscripts, ".") {
		return "", nil
	}
	var free []rune
	for _, r := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" {
		if !strings.ContainsRune(subscripts, r) {
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
