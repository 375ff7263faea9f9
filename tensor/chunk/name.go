package chunk

import (
	"slices"
	"strconv"
	"strings"
)

// Name is how the op is shown in plans and operand tables: its kind, and
// for a fused op the kinds of its members, "fuse(add+sum.map)" or
// "expr(rand+rand+add+sum.map)".
func (op *Op) Name() string {
	if s, ok := exprMembers(op); ok {
		return s
	}
	if s, ok := drawnName(op); ok {
		return s
	}
	if ma, ok := op.Args.(MapsArgs); ok && op.Kind == KindMaps {
		kinds := make([]string, len(ma.Members))
		for i := range ma.Members {
			kinds[i] = string(ma.Members[i].Kind)
		}
		return "maps(" + strings.Join(kinds, "+") + ")"
	}
	fa, ok := op.Args.(FuseArgs)
	if op.Kind != KindFuse || !ok {
		return string(op.Kind)
	}
	kinds := make([]string, len(fa.Members))
	for i := range fa.Members {
		kinds[i] = fa.Members[i].Name()
	}
	return "fuse(" + strings.Join(kinds, "+") + ")"
}

// exprMembers names the kinds of an expr op's fused ops, "rand+rand+add+sum.map".
func exprMembers(op *Op) (string, bool) {
	a, ok := op.Args.(ExprArgs)
	if op.Kind != KindExpr || !ok {
		return "", false
	}
	return "expr(" + strings.Join(a.Members, "+") + ")", true
}

// drawnName returns the name of a matmul op that draws blocks, as plans
// show it: "matmul(8 rand)".
func drawnName(op *Op) (string, bool) {
	a, ok := op.Args.(MatmulArgs)
	if op.Kind != KindMatmul || !ok || !slices.ContainsFunc(a.Blocks, func(b Op) bool { return b.Kind != "" }) {
		return "", false
	}
	kinds := map[Kind]int{}
	var order []Kind
	for i := range a.Blocks {
		k := a.Blocks[i].Kind
		if k == "" {
			continue
		}
		if kinds[k] == 0 {
			order = append(order, k)
		}
		kinds[k]++
	}
	s := "matmul("
	for i, k := range order {
		if i > 0 {
			s += "+"
		}
		s += strconv.Itoa(kinds[k]) + " " + string(k)
	}
	return s + ")", true
}
