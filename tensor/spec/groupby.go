package spec

import (
	"fmt"
	"slices"

	"marsfs/tensor"
)

// GroupByFuncs are the reductions of OpGroupBy (Attrs.Func).
var GroupByFuncs = []string{"sum", "mean", "count", "min", "max", "var", "std", "prod"}

// MaxGroups bounds OpGroupBy's Attrs.Groups: every chunk's partial holds
// each group's accumulators for every element around the axis.
const MaxGroups = 1 << 16

// inferGroupBy sets a group-by reduction's shape and dtype.
func inferGroupBy(n *Node) error {
	x, labels := n.Inputs[0], n.Inputs[1]
	a := n.Attrs
	if len(a.Axes) != 1 {
		return fmt.Errorf("groupby takes one axis, not %v", a.Axes)
	}
	axis := a.Axes[0]
	if err := checkAxis(axis, len(x.Shape)); err != nil {
		return err
	}
	if !slices.Contains(GroupByFuncs, a.Func) {
		return fmt.Errorf("groupby has no reduction %q: give one of %v", a.Func, GroupByFuncs)
	}
	if a.Groups < 1 || a.Groups > MaxGroups {
		return fmt.Errorf("groupby into %d groups: give 1 to %d", a.Groups, MaxGroups)
	}
	if a.Ddof < 0 || a.Ddof != 0 && a.Func != "var" && a.Func != "std" {
		return fmt.Errorf("groupby %s takes no ddof=%d", a.Func, a.Ddof)
	}
	if len(labels.Shape) != 1 || labels.Shape[0] != x.Shape[axis] || !(labels.DType.IsInt() || labels.DType == tensor.Bool) {
		return fmt.Errorf("groupby of %s along axis %d by labels of %s %s: want one integer label an element of the axis",
			ShapeString(x.Shape), axis, labels.DType, ShapeString(labels.Shape))
	}
	shape := slices.Clone(x.Shape)
	shape[axis] = a.Groups
	var dt tensor.DType
	switch a.Func {
	case "sum":
		dt = ReduceType(tensor.OpSum, x.DType)
	case "prod":
		dt = ReduceType(tensor.OpProd, x.DType)
	case "mean", "var", "std":
		dt = ReduceType(tensor.OpMean, x.DType)
	case "count":
		dt = tensor.Int64
	case "min", "max":
		dt = x.DType
		if !dt.IsFloat() {
			dt = tensor.Float64 // NaN for a group with no element
		}
	}
	n.Shape, n.DType = shape, dt
	return nil
}
