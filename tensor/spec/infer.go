package spec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"marsfs/tensor"
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
	case catalogueOps[n.Op] != 0:
		return inferCatalogue(n)
	case creationOps[n.Op]:
		return inferCreation(n)
	case n.Op == tensor.OpDiagonal:
		return inferDiagonal(n)
	case n.Op == tensor.OpMask:
		return inferMask(n)
	case n.Op == tensor.OpEighW || n.Op == tensor.OpEighV:
		return inferEigh(n)
	case n.Op == tensor.OpTake:
		return inferTake(n)
	case n.Op == tensor.OpGroupBy:
		return inferGroupBy(n)
	case n.Op == tensor.OpSearchsorted || n.Op == tensor.OpIsin:
		return inferLookup(n)
	case n.Op == tensor.OpNonEmpty:
		v, cnt := n.Inputs[0], n.Inputs[1]
		if len(cnt.Shape) != 0 || cnt.DType != tensor.Int64 {
			return fmt.Errorf("nonempty takes a value and a 0-d int64 count")
		}
		n.Shape, n.DType = CloneInts(v.Shape), v.DType
	case n.Op == tensor.OpWhere:
		shape, err := broadcast(n.Inputs...)
		if err != nil {
			return err
		}
		dt, err := ResultType(n.Inputs[1], n.Inputs[2])
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
	case n.Op == tensor.OpCumsum || n.Op == tensor.OpCumprod:
		x := n.Inputs[0]
		if len(n.Attrs.Axes) != 1 {
			return fmt.Errorf("%s takes one axis", n.Op)
		}
		if err := checkAxis(n.Attrs.Axes[0], len(x.Shape)); err != nil {
			return err
		}
		n.Shape, n.DType = slices.Clone(x.Shape), ReduceType(n.Op, x.DType)
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
	tensor.OpArray: 0, tensor.OpInput: 0, tensor.OpFromNPY: 0, tensor.OpFromZarr: 0, tensor.OpScalar: 0, tensor.OpFull: 0, tensor.OpArange: 0, tensor.OpLinspace: 0, tensor.OpEye: 0,
	tensor.OpRand: 0, tensor.OpRandn: 0, tensor.OpRandint: 0, tensor.OpUniform: 0, tensor.OpNormal: 0,

	tensor.OpNegative: 1, tensor.OpAbs: 1, tensor.OpSqrt: 1, tensor.OpExp: 1, tensor.OpLog: 1, tensor.OpLog1p: 1, tensor.OpSin: 1,
	tensor.OpCos: 1, tensor.OpTan: 1, tensor.OpTanh: 1, tensor.OpFloor: 1, tensor.OpCeil: 1, tensor.OpRound: 1, tensor.OpSign: 1,
	tensor.OpLogicalNot: 1, tensor.OpInvert: 1, tensor.OpAstype: 1,
	tensor.OpCbrt: 1, tensor.OpLog2: 1, tensor.OpLog10: 1, tensor.OpExp2: 1, tensor.OpArcsin: 1, tensor.OpArccos: 1,
	tensor.OpArctan: 1, tensor.OpIsnan: 1, tensor.OpIsinf: 1, tensor.OpIsfinite: 1,
	tensor.OpExpm1: 1, tensor.OpSinh: 1, tensor.OpCosh: 1, tensor.OpArcsinh: 1, tensor.OpArccosh: 1, tensor.OpArctanh: 1,
	tensor.OpDeg2rad: 1, tensor.OpRad2deg: 1, tensor.OpSignbit: 1,

	tensor.OpAdd: 2, tensor.OpSubtract: 2, tensor.OpMultiply: 2, tensor.OpDivide: 2, tensor.OpFloorDiv: 2, tensor.OpMod: 2,
	tensor.OpPower: 2, tensor.OpMaximum: 2, tensor.OpMinimum: 2, tensor.OpEqual: 2, tensor.OpNotEqual: 2, tensor.OpLess: 2,
	tensor.OpLessEq: 2, tensor.OpGreater: 2, tensor.OpGreaterEq: 2, tensor.OpLogicalAnd: 2, tensor.OpLogicalOr: 2,
	tensor.OpBitAnd: 2, tensor.OpBitOr: 2, tensor.OpArctan2: 2, tensor.OpHypot: 2, tensor.OpFmax: 2, tensor.OpFmin: 2, tensor.OpNormalize: 2,
	tensor.OpLogaddexp: 2, tensor.OpLogaddexp2: 2, tensor.OpCopysign: 2, tensor.OpFmod: 2, tensor.OpLdexp: 2, tensor.OpBitXor: 2,

	tensor.OpWhere: 3,

	tensor.OpSum: 1, tensor.OpProd: 1, tensor.OpMean: 1, tensor.OpVar: 1, tensor.OpStd: 1, tensor.OpMin: 1, tensor.OpMax: 1,
	tensor.OpArgmin: 1, tensor.OpArgmax: 1, tensor.OpAny: 1, tensor.OpAll: 1, tensor.OpCountNonzero: 1, tensor.OpNansum: 1,
	tensor.OpNanmean: 1, tensor.OpNanmax: 1, tensor.OpNanmin: 1, tensor.OpCumsum: 1, tensor.OpCumprod: 1,

	tensor.OpReshape: 1, tensor.OpTranspose: 1, tensor.OpConcat: -1, tensor.OpSlice: 1, tensor.OpRechunk: 1,
	tensor.OpMatmul: 2, tensor.OpDiagonal: 1, tensor.OpMask: 2, tensor.OpEighW: 1, tensor.OpEighV: 1, tensor.OpTake: 2, tensor.OpSearchsorted: 2, tensor.OpIsin: 2, tensor.OpNonEmpty: 2,
	tensor.OpGroupBy: 2,
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
	tensor.OpArray: true,
	tensor.OpInput: true, tensor.OpFromNPY: true, tensor.OpFromZarr: true, tensor.OpScalar: true, tensor.OpFull: true, tensor.OpArange: true, tensor.OpLinspace: true, tensor.OpEye: true,
	tensor.OpRand: true, tensor.OpRandn: true, tensor.OpRandint: true, tensor.OpUniform: true, tensor.OpNormal: true,
}

var reduceOps = map[string]bool{
	tensor.OpSum: true, tensor.OpProd: true, tensor.OpMean: true, tensor.OpVar: true, tensor.OpStd: true, tensor.OpMin: true,
	tensor.OpMax: true, tensor.OpArgmin: true, tensor.OpArgmax: true, tensor.OpAny: true, tensor.OpAll: true,
	tensor.OpCountNonzero: true, tensor.OpNansum: true, tensor.OpNanmean: true, tensor.OpNanmax: true, tensor.OpNanmin: true,
}

func isUnary(op string) bool {
	return opArity[op] == 1 && !reduceOps[op] && op != tensor.OpAstype && op != tensor.OpCumsum && op != tensor.OpCumprod &&
		op != tensor.OpReshape && op != tensor.OpTranspose && op != tensor.OpSlice && op != tensor.OpRechunk
}

func isBinary(op string) bool { return opArity[op] == 2 && op != tensor.OpMatmul }

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
	case tensor.OpInput:
		if n.Attrs.Name == "" {
			return fmt.Errorf("input without a name")
		}
	case tensor.OpFromNPY:
		if n.Attrs.Path == "" || n.Attrs.FileOffset <= 0 {
			return fmt.Errorf("from_npy without a file")
		}
	case tensor.OpFromZarr:
		if n.Attrs.Path == "" || n.Attrs.Zarr == nil {
			return fmt.Errorf("from_zarr without an array")
		}
	case tensor.OpScalar:
		if len(n.Shape) != 0 {
			return fmt.Errorf("a scalar has no axes")
		}
	case tensor.OpArray:
		if len(n.Attrs.Data) != tensor.NumElements(n.Shape)*n.DType.Size() {
			return fmt.Errorf("array: %d bytes for %v%v", len(n.Attrs.Data), n.DType, n.Shape)
		}
	case tensor.OpArange, tensor.OpLinspace:
		if len(n.Shape) != 1 {
			return fmt.Errorf("%s makes 1-D arrays", n.Op)
		}
	case tensor.OpEye:
		if len(n.Shape) != 2 {
			return fmt.Errorf("eye makes 2-D arrays")
		}
	case tensor.OpRand, tensor.OpRandn, tensor.OpUniform, tensor.OpNormal:
		if n.DType != tensor.Float64 {
			return fmt.Errorf("%s makes float64 arrays", n.Op)
		}
	}
	switch n.Op {
	case tensor.OpUniform, tensor.OpNormal:
		a, b := n.Attrs.Start, n.Attrs.Step
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			return fmt.Errorf("%s: parameters must be finite", n.Op)
		}
		if n.Op == tensor.OpNormal && b < 0 {
			return fmt.Errorf("scale < 0")
		}
	case tensor.OpRandint:
		if n.DType != tensor.Int64 {
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
		return fmt.Errorf("chunks have %d axes for shape %s", len(chunks), ShapeString(shape))
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
			case o == tensor.Unknown || d == tensor.Unknown:
				// Checked when the length is known: one of them is 1
				// or they are equal.
				out[off+i] = tensor.Unknown
			default:
				shapes := make([]string, len(in))
				for j, y := range in {
					shapes[j] = ShapeString(y.Shape)
				}
				return nil, fmt.Errorf("operands could not be broadcast together with shapes %s", strings.Join(shapes, " "))
			}
		}
	}
	return out, nil
}

// ShapeString formats a shape as NumPy prints it in messages: (3,), (3,4).
func ShapeString(shape []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		if d == tensor.Unknown {
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
		if d > 0 && total > MaxInt/d {
			return fmt.Errorf("shape %s is too large", ShapeString(shape))
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
	if (n.Op == tensor.OpArgmin || n.Op == tensor.OpArgmax) && len(axes) > 1 {
		return fmt.Errorf("%s takes one axis or none", n.Op)
	}
	if n.Attrs.Ddof != 0 && n.Op != tensor.OpVar && n.Op != tensor.OpStd {
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
			case tensor.OpMin, tensor.OpMax, tensor.OpArgmin, tensor.OpArgmax, tensor.OpNanmin, tensor.OpNanmax:
				return fmt.Errorf("zero-size array to reduction operation %s which has no identity", n.Op)
			}
		}
		if n.Attrs.Keepdims {
			shape = append(shape, 1)
		}
	}
	if axes == nil && nd == 0 && (n.Op == tensor.OpArgmin || n.Op == tensor.OpArgmax) {
		shape = []int{}
	}
	n.Shape, n.DType = shape, ReduceType(n.Op, x.DType)
	return nil
}

// inferShapeOp handles the shape and linear-algebra ops and astype.
func inferShapeOp(n *Node) error {
	x := n.Inputs[0]
	switch n.Op {
	case tensor.OpAstype:
		if !n.DType.Valid() {
			return fmt.Errorf("astype: invalid dtype")
		}
		n.Shape = slices.Clone(x.Shape)
	case tensor.OpReshape:
		if tensor.HasUnknown(x.Shape) || tensor.HasUnknown(n.Shape) {
			// Checked when the lengths are known (see reinfer).
			if !tensor.HasUnknown(n.Shape) || !tensor.HasUnknown(x.Shape) || unknowns(n.Shape) > 1 {
				return fmt.Errorf("cannot reshape array of shape %s into shape %s", ShapeString(x.Shape), ShapeString(n.Shape))
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
		if tensor.NumElements(n.Shape) != tensor.NumElements(x.Shape) {
			return fmt.Errorf("cannot reshape array of size %d into shape %s", tensor.NumElements(x.Shape), ShapeString(n.Shape))
		}
		n.DType = x.DType
	case tensor.OpTranspose:
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
	case tensor.OpConcat:
		return inferConcat(n)
	case tensor.OpSlice:
		if len(n.Attrs.Slices) != len(x.Shape) {
			return fmt.Errorf("slice has %d axes for an array of dimension %d", len(n.Attrs.Slices), len(x.Shape))
		}
		if n.Attrs.Pending != nil {
			if len(n.Attrs.Pending) != len(x.Shape) {
				return fmt.Errorf("slice has %d pending axes for an array of dimension %d", len(n.Attrs.Pending), len(x.Shape))
			}
			if !tensor.HasUnknown(x.Shape) {
				// The lengths are known now: resolve the index.
				return Reinfer(n)
			}
			shape := make([]int, len(x.Shape))
			for ax, p := range n.Attrs.Pending {
				switch {
				case p.Int:
					shape[ax] = 1
				case x.Shape[ax] == tensor.Unknown:
					shape[ax] = tensor.Unknown
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
	case tensor.OpRechunk:
		if err := checkChunks(x.Shape, n.Chunks); err != nil {
			return err
		}
		n.Shape, n.DType = slices.Clone(x.Shape), x.DType
	case tensor.OpMatmul:
		y := n.Inputs[1]
		if len(x.Shape) != 2 || len(y.Shape) != 2 {
			return fmt.Errorf("matmul takes 2-D operands, not %s and %s", ShapeString(x.Shape), ShapeString(y.Shape))
		}
		if x.Shape[1] != y.Shape[0] && x.Shape[1] != tensor.Unknown && y.Shape[0] != tensor.Unknown {
			return notAligned(x.Shape, y.Shape)
		}
		n.Shape, n.DType = []int{x.Shape[0], y.Shape[1]}, tensor.Promote(x.DType, y.DType)
	default:
		return fmt.Errorf("unknown op %q", n.Op)
	}
	return nil
}

// unknowns counts the axes of shape whose length is Unknown.
func unknowns(shape []int) int {
	k := 0
	for _, d := range shape {
		if d == tensor.Unknown {
			k++
		}
	}
	return k
}

func notAligned(a, b []int) error {
	return fmt.Errorf("shapes %s and %s are not aligned", ShapeString(a), ShapeString(b))
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
			if x.Shape[d] != first.Shape[d] && x.Shape[d] != tensor.Unknown && first.Shape[d] != tensor.Unknown {
				return fmt.Errorf("all the input array dimensions except for the concatenation axis must match exactly, but along dimension %d, the array at index 0 has size %d and the array at index %d has size %d", d, first.Shape[d], i+1, x.Shape[d])
			}
		}
		if shape[ax] == tensor.Unknown || x.Shape[ax] == tensor.Unknown {
			shape[ax] = tensor.Unknown
		} else {
			shape[ax] += x.Shape[ax]
		}
		dt = tensor.Promote(dt, x.DType)
	}
	n.Shape, n.DType = shape, dt
	return nil
}

// Reinfer infers n again once its inputs' shapes are known: a reshape's
// Unknown length becomes what the size leaves for it, and an index's
// pending slices are resolved.
func Reinfer(n *Node) error {
	if creationOps[n.Op] {
		return nil
	}
	switch {
	case n.Op == tensor.OpReshape && tensor.HasUnknown(n.Shape):
		size, known := tensor.NumElements(n.Inputs[0].Shape), 1
		for _, d := range n.Shape {
			if d != tensor.Unknown {
				known *= d
			}
		}
		if known == 0 || size%known != 0 {
			return fmt.Errorf("cannot reshape array of size %d into shape %s", size, tensor.FormatShape(n.Shape))
		}
		n.Shape = slices.Clone(n.Shape)
		for i, d := range n.Shape {
			if d == tensor.Unknown {
				n.Shape[i] = size / known
				break
			}
		}
	case n.Op == tensor.OpSlice && n.Attrs.Pending != nil:
		x := n.Inputs[0]
		sl := make([]tensor.Slice, len(n.Attrs.Pending))
		for ax, p := range n.Attrs.Pending {
			s, err := p.resolve(x.Shape[ax], ax)
			if err != nil {
				return err
			}
			sl[ax] = s
		}
		n.Attrs.Slices, n.Attrs.Pending = sl, nil
	}
	return infer(n)
}
