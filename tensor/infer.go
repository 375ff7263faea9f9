package tensor

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// infer checks a node against its op's rules and sets what follows from its
// inputs and attributes. Both spec forms build every node through it, so a
// JSON document is held to the same rules as text.
//
// Creation ops, OpReshape (Shape), OpAstype (DType) and OpRechunk (Chunks)
// carry the part of their result that their inputs do not determine: the
// caller sets it and infer validates it. For every other op infer sets Shape
// and DType. Errors are plain; callers add the position.
func infer(n *Node) error {
	if k, ok := arity(n.Op); ok {
		if err := checkArity(n, k); err != nil {
			return err
		}
	} else {
		return fmt.Errorf("unknown op %q", n.Op)
	}
	switch {
	case catalogueOps[n.Op] > 0:
		return inferCatalogue(n)
	case creationOps[n.Op]:
		return inferCreation(n)
	case n.Op == OpWhere:
		shape, err := broadcast(n.Inputs...)
		if err != nil {
			return err
		}
		dt, err := resultType(n.Inputs[1], n.Inputs[2])
		if err != nil {
			return err
		}
		n.Shape, n.DType = shape, dt
	case len(n.Inputs) == 1 && isUnary(n.Op):
		dt, err := unaryType(n.Op, n.Inputs[0].DType)
		if err != nil {
			return err
		}
		n.Shape, n.DType = slices.Clone(n.Inputs[0].Shape), dt
	case len(n.Inputs) == 2 && isBinary(n.Op):
		shape, err := broadcast(n.Inputs...)
		if err != nil {
			return err
		}
		dt, err := binaryType(n.Op, n.Inputs[0], n.Inputs[1])
		if err != nil {
			return err
		}
		n.Shape, n.DType = shape, dt
	case reduceOps[n.Op]:
		return inferReduce(n)
	case n.Op == OpCumsum || n.Op == OpCumprod:
		x := n.Inputs[0]
		if len(n.Attrs.Axes) != 1 {
			return fmt.Errorf("%s takes one axis", n.Op)
		}
		if err := checkAxis(n.Attrs.Axes[0], len(x.Shape)); err != nil {
			return err
		}
		n.Shape, n.DType = slices.Clone(x.Shape), reduceType(n.Op, x.DType)
	default:
		return inferShapeOp(n)
	}
	return nil
}

// arity returns op's number of inputs (-1 for one or more), and whether op
// is an op at all.
func arity(op string) (int, bool) {
	if k, ok := opArity[op]; ok {
		return k, true
	}
	k, ok := catalogueOps[op]
	return k, ok
}

// opArity gives the number of inputs of each op but the catalogue's
// (catalogueOps); -1 means one or more.
var opArity = map[string]int{
	OpInput: 0, OpScalar: 0, OpFull: 0, OpArange: 0, OpLinspace: 0, OpEye: 0,
	OpRand: 0, OpRandn: 0, OpRandint: 0, OpUniform: 0, OpNormal: 0,

	OpNegative: 1, OpAbs: 1, OpSqrt: 1, OpExp: 1, OpLog: 1, OpLog1p: 1, OpSin: 1,
	OpCos: 1, OpTan: 1, OpTanh: 1, OpFloor: 1, OpCeil: 1, OpRound: 1, OpSign: 1,
	OpLogicalNot: 1, OpInvert: 1, OpAstype: 1,

	OpAdd: 2, OpSubtract: 2, OpMultiply: 2, OpDivide: 2, OpFloorDiv: 2, OpMod: 2,
	OpPower: 2, OpMaximum: 2, OpMinimum: 2, OpEqual: 2, OpNotEqual: 2, OpLess: 2,
	OpLessEq: 2, OpGreater: 2, OpGreaterEq: 2, OpLogicalAnd: 2, OpLogicalOr: 2,
	OpBitAnd: 2, OpBitOr: 2,

	OpWhere: 3,

	OpSum: 1, OpProd: 1, OpMean: 1, OpVar: 1, OpStd: 1, OpMin: 1, OpMax: 1,
	OpArgmin: 1, OpArgmax: 1, OpAny: 1, OpAll: 1, OpCountNonzero: 1, OpNansum: 1,
	OpNanmean: 1, OpNanmax: 1, OpNanmin: 1, OpCumsum: 1, OpCumprod: 1,

	OpReshape: 1, OpTranspose: 1, OpConcat: -1, OpSlice: 1, OpRechunk: 1,
	OpMatmul: 2,
}

func checkArity(n *Node, k int) error {
	switch {
	case k < 0 && len(n.Inputs) == 0:
		return fmt.Errorf("%s needs at least one input", n.Op)
	case k >= 0 && len(n.Inputs) != k:
		return fmt.Errorf("%s takes %d inputs, not %d", n.Op, k, len(n.Inputs))
	}
	return nil
}

var creationOps = map[string]bool{
	OpInput: true, OpScalar: true, OpFull: true, OpArange: true, OpLinspace: true, OpEye: true,
	OpRand: true, OpRandn: true, OpRandint: true, OpUniform: true, OpNormal: true,
}

var reduceOps = map[string]bool{
	OpSum: true, OpProd: true, OpMean: true, OpVar: true, OpStd: true, OpMin: true,
	OpMax: true, OpArgmin: true, OpArgmax: true, OpAny: true, OpAll: true,
	OpCountNonzero: true, OpNansum: true, OpNanmean: true, OpNanmax: true, OpNanmin: true,
}

func isUnary(op string) bool {
	return opArity[op] == 1 && !reduceOps[op] && op != OpAstype && op != OpCumsum && op != OpCumprod &&
		op != OpReshape && op != OpTranspose && op != OpSlice && op != OpRechunk
}

func isBinary(op string) bool { return opArity[op] == 2 && op != OpMatmul }

func inferCreation(n *Node) error {
	if !n.DType.Valid() {
		return fmt.Errorf("%s: invalid dtype", n.Op)
	}
	if err := checkShape(n.Shape); err != nil {
		return err
	}
	if n.Shape == nil {
		n.Shape = []int{}
	}
	if err := checkChunks(n.Shape, n.Chunks); err != nil {
		return err
	}
	switch n.Op {
	case OpInput:
		if n.Attrs.Name == "" {
			return fmt.Errorf("input without a name")
		}
	case OpScalar:
		if len(n.Shape) != 0 {
			return fmt.Errorf("a scalar has no axes")
		}
	case OpArange, OpLinspace:
		if len(n.Shape) != 1 {
			return fmt.Errorf("%s makes 1-D arrays", n.Op)
		}
	case OpEye:
		if len(n.Shape) != 2 {
			return fmt.Errorf("eye makes 2-D arrays")
		}
	case OpRand, OpRandn, OpUniform, OpNormal:
		if n.DType != Float64 {
			return fmt.Errorf("%s makes float64 arrays", n.Op)
		}
	}
	switch n.Op {
	case OpUniform, OpNormal:
		a, b := n.Attrs.Start, n.Attrs.Step
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			return fmt.Errorf("%s: parameters must be finite", n.Op)
		}
		if n.Op == OpNormal && b < 0 {
			return fmt.Errorf("scale < 0")
		}
	case OpRandint:
		if n.DType != Int64 {
			return fmt.Errorf("randint makes int64 arrays")
		}
		if n.Attrs.Low >= n.Attrs.High {
			return fmt.Errorf("low >= high")
		}
	}
	return nil
}

// checkChunks validates chunk sizes against a shape: one list an axis, each
// summing to the axis length, no empty chunk except the single chunk of an
// empty axis.
func checkChunks(shape []int, chunks [][]int) error {
	if len(chunks) != len(shape) {
		return fmt.Errorf("chunks have %d axes for shape %s", len(chunks), shapeString(shape))
	}
	for ax, cs := range chunks {
		sum := 0
		for _, c := range cs {
			if c < 0 || c == 0 && shape[ax] != 0 {
				return fmt.Errorf("chunk sizes must be positive, got %d on axis %d", c, ax)
			}
			sum += c
		}
		if sum != shape[ax] || len(cs) == 0 || shape[ax] == 0 && len(cs) != 1 {
			return fmt.Errorf("chunks %v do not cover axis %d of length %d", cs, ax, shape[ax])
		}
	}
	return nil
}

// broadcast returns the shape NumPy broadcasts the inputs' shapes to.
func broadcast(in ...*Node) ([]int, error) {
	nd := 0
	for _, x := range in {
		nd = max(nd, len(x.Shape))
	}
	out := make([]int, nd)
	for i := range out {
		out[i] = 1
	}
	for _, x := range in {
		off := nd - len(x.Shape)
		for i, d := range x.Shape {
			switch o := out[off+i]; {
			case o == d || d == 1:
			case o == 1:
				out[off+i] = d
			case o == Unknown || d == Unknown:
				// Checked when the length is known: one of them is 1
				// or they are equal.
				out[off+i] = Unknown
			default:
				shapes := make([]string, len(in))
				for j, y := range in {
					shapes[j] = shapeString(y.Shape)
				}
				return nil, fmt.Errorf("operands could not be broadcast together with shapes %s", strings.Join(shapes, " "))
			}
		}
	}
	return out, nil
}

// shapeString formats a shape as NumPy prints it in messages: (3,), (3,4).
func shapeString(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		if d == Unknown {
			b.WriteByte('?')
		} else {
			b.WriteString(strconv.Itoa(d))
		}
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// checkShape checks that a shape has non-negative dimensions and a size
// that shape arithmetic can hold.
func checkShape(shape []int) error {
	if len(shape) > maxDims {
		return fmt.Errorf("more than %d dimensions", maxDims)
	}
	total := 1
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("negative dimensions are not allowed")
		}
		if d > 0 && total > maxInt/d {
			return fmt.Errorf("shape %s is too large", shapeString(shape))
		}
		total *= d
	}
	return nil
}

func checkAxis(ax, ndim int) error {
	if ax < 0 || ax >= ndim {
		return fmt.Errorf("axis %d is out of bounds for array of dimension %d", ax, ndim)
	}
	return nil
}

// inferReduce checks a reduction's axes (sorted, distinct, in range; nil for
// all) and sets its shape and dtype.
func inferReduce(n *Node) error {
	x := n.Inputs[0]
	nd := len(x.Shape)
	axes := n.Attrs.Axes
	if axes != nil && len(axes) == 0 {
		return fmt.Errorf("%s over no axes: leave axes out to reduce over all", n.Op)
	}
	for i, ax := range axes {
		if err := checkAxis(ax, nd); err != nil {
			return err
		}
		if i > 0 && axes[i-1] >= ax {
			return fmt.Errorf("%s axes %v are not sorted and distinct", n.Op, axes)
		}
	}
	if (n.Op == OpArgmin || n.Op == OpArgmax) && len(axes) > 1 {
		return fmt.Errorf("%s takes one axis or none", n.Op)
	}
	if n.Attrs.Ddof != 0 && n.Op != OpVar && n.Op != OpStd {
		return fmt.Errorf("ddof applies to var and std only")
	}
	if n.Attrs.Ddof < 0 {
		return fmt.Errorf("ddof must not be negative")
	}
	reduced := func(ax int) bool { return axes == nil || slices.Contains(axes, ax) }
	shape := []int{}
	for ax, d := range x.Shape {
		if !reduced(ax) {
			shape = append(shape, d)
			continue
		}
		if d == 0 {
			switch n.Op {
			case OpMin, OpMax, OpArgmin, OpArgmax, OpNanmin, OpNanmax:
				return fmt.Errorf("zero-size array to reduction operation %s which has no identity", n.Op)
			}
		}
		if n.Attrs.Keepdims {
			shape = append(shape, 1)
		}
	}
	if axes == nil && nd == 0 && (n.Op == OpArgmin || n.Op == OpArgmax) {
		shape = []int{}
	}
	n.Shape, n.DType = shape, reduceType(n.Op, x.DType)
	return nil
}

// inferShapeOp handles the shape and linear-algebra ops and astype.
func inferShapeOp(n *Node) error {
	x := n.Inputs[0]
	switch n.Op {
	case OpAstype:
		if !n.DType.Valid() {
			return fmt.Errorf("astype: invalid dtype")
		}
		n.Shape = slices.Clone(x.Shape)
	case OpReshape:
		if HasUnknown(x.Shape) || HasUnknown(n.Shape) {
			// Checked when the lengths are known (see reinfer).
			if !HasUnknown(n.Shape) || !HasUnknown(x.Shape) || unknowns(n.Shape) > 1 {
				return fmt.Errorf("cannot reshape array of shape %s into shape %s", shapeString(x.Shape), shapeString(n.Shape))
			}
			n.DType = x.DType
			return nil
		}
		if err := checkShape(n.Shape); err != nil {
			return err
		}
		if n.Shape == nil {
			n.Shape = []int{}
		}
		if NumElements(n.Shape) != NumElements(x.Shape) {
			return fmt.Errorf("cannot reshape array of size %d into shape %s", NumElements(x.Shape), shapeString(n.Shape))
		}
		n.DType = x.DType
	case OpTranspose:
		p := n.Attrs.Perm
		if len(p) != len(x.Shape) {
			return fmt.Errorf("axes don't match array")
		}
		seen := make([]bool, len(p))
		shape := make([]int, len(p))
		for i, ax := range p {
			if err := checkAxis(ax, len(p)); err != nil {
				return err
			}
			if seen[ax] {
				return fmt.Errorf("repeated axis in transpose")
			}
			seen[ax] = true
			shape[i] = x.Shape[ax]
		}
		n.Shape, n.DType = shape, x.DType
	case OpConcat:
		return inferConcat(n)
	case OpSlice:
		if len(n.Attrs.Slices) != len(x.Shape) {
			return fmt.Errorf("slice has %d axes for an array of dimension %d", len(n.Attrs.Slices), len(x.Shape))
		}
		if n.Attrs.Pending != nil {
			if len(n.Attrs.Pending) != len(x.Shape) {
				return fmt.Errorf("slice has %d pending axes for an array of dimension %d", len(n.Attrs.Pending), len(x.Shape))
			}
			if !HasUnknown(x.Shape) {
				// The lengths are known now: resolve the index.
				return reinfer(n)
			}
			shape := make([]int, len(x.Shape))
			for ax, p := range n.Attrs.Pending {
				switch {
				case p.Int:
					shape[ax] = 1
				case x.Shape[ax] == Unknown:
					shape[ax] = Unknown
				default:
					s, _ := p.resolve(x.Shape[ax], ax)
					shape[ax] = s.Len
				}
			}
			n.Shape, n.DType = shape, x.DType
			return nil
		}
		shape := make([]int, len(x.Shape))
		for ax, s := range n.Attrs.Slices {
			l := x.Shape[ax]
			bad := s.Step == 0 || s.Len < 0 || s.Len > l || s.Len > 1 && (s.Step > l || s.Step < -l)
			if !bad {
				last := s.Start + (s.Len-1)*s.Step
				bad = s.Start < 0 || s.Len > 0 && (s.Start >= l || last < 0 || last >= l)
			}
			if bad {
				return fmt.Errorf("slice %d:%d:%d is out of bounds for axis %d with size %d", s.Start, s.Step, s.Len, ax, l)
			}
			shape[ax] = s.Len
		}
		n.Shape, n.DType = shape, x.DType
	case OpRechunk:
		if err := checkChunks(x.Shape, n.Chunks); err != nil {
			return err
		}
		n.Shape, n.DType = slices.Clone(x.Shape), x.DType
	case OpMatmul:
		y := n.Inputs[1]
		if len(x.Shape) != 2 || len(y.Shape) != 2 {
			return fmt.Errorf("matmul takes 2-D operands, not %s and %s", shapeString(x.Shape), shapeString(y.Shape))
		}
		if x.Shape[1] != y.Shape[0] && x.Shape[1] != Unknown && y.Shape[0] != Unknown {
			return notAligned(x.Shape, y.Shape)
		}
		n.Shape, n.DType = []int{x.Shape[0], y.Shape[1]}, Promote(x.DType, y.DType)
	default:
		return fmt.Errorf("unknown op %q", n.Op)
	}
	return nil
}

// unknowns counts the axes of shape whose length is Unknown.
func unknowns(shape []int) int {
	k := 0
	for _, d := range shape {
		if d == Unknown {
			k++
		}
	}
	return k
}

func notAligned(a, b []int) error {
	return fmt.Errorf("shapes %s and %s are not aligned", shapeString(a), shapeString(b))
}

func inferConcat(n *Node) error {
	if len(n.Attrs.Axes) != 1 {
		return fmt.Errorf("concatenate takes one axis")
	}
	ax := n.Attrs.Axes[0]
	first := n.Inputs[0]
	nd := len(first.Shape)
	if nd == 0 {
		return fmt.Errorf("zero-dimensional arrays cannot be concatenated")
	}
	if err := checkAxis(ax, nd); err != nil {
		return err
	}
	shape := slices.Clone(first.Shape)
	dt := first.DType
	for i, x := range n.Inputs[1:] {
		if len(x.Shape) != nd {
			return fmt.Errorf("all the input array dimensions except for the concatenation axis must match exactly, but the array at index 0 has %d dimension(s) and the array at index %d has %d dimension(s)", nd, i+1, len(x.Shape))
		}
		for d := range nd {
			if d == ax {
				continue
			}
			if x.Shape[d] != first.Shape[d] && x.Shape[d] != Unknown && first.Shape[d] != Unknown {
				return fmt.Errorf("all the input array dimensions except for the concatenation axis must match exactly, but along dimension %d, the array at index 0 has size %d and the array at index %d has size %d", d, first.Shape[d], i+1, x.Shape[d])
			}
		}
		if shape[ax] == Unknown || x.Shape[ax] == Unknown {
			shape[ax] = Unknown
		} else {
			shape[ax] += x.Shape[ax]
		}
		dt = Promote(dt, x.DType)
	}
	n.Shape, n.DType = shape, dt
	return nil
}
