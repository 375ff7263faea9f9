package spec

import (
	"fmt"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/spec/syntax"
)

// Group-by reductions, in the manner of flox (what xarray uses with Dask):
// groupby(x, labels, axis=0, groups=12) names the groups of x's elements
// along axis by an integer tensor of labels, one an element of that axis,
// and its methods reduce each group: sum, mean, count, min, max, var,
// std and prod. The result has the axis groups long. A label outside
// 0 .. groups-1 leaves its element out (flox leaves out labels not among
// the expected groups); a group with no element gives 0 (sum, count), 1
// (prod) or NaN (the others, whose dtype is then float: min and max of
// integers give float64).

// groupbyValue is groupby(...)'s result: what its methods reduce.
type groupbyValue struct {
	x, labels *Node
	axis      int
	groups    int
}

// groupbyFuncs are the reductions a groupbyValue has as methods.
var groupbyFuncs = []string{"sum", "mean", "count", "min", "max", "var", "std", "prod"}

// groupbyMethods are those methods, by name.
var groupbyMethods = map[string]*builtin{}

// maxGroups bounds groups=: every chunk's partial holds each group's
// accumulators for every element around the axis.
const maxGroups = 1 << 16

func registerGroupBy() {
	register("groupby", []string{"x", "labels", "axis", "groups"}, func(c *call) (value, error) {
		x, err := c.tensor(0)
		if err != nil {
			return nil, err
		}
		if !c.has(1) {
			return nil, c.missing(1)
		}
		labels, err := c.tensor(1)
		if err != nil {
			return nil, err
		}
		axis, err := c.int(2, 0)
		if err != nil {
			return nil, err
		}
		if axis < -len(x.Shape) || axis >= len(x.Shape) {
			return nil, c.errorf(2, "axis %d is out of bounds for array of dimension %d", axis, len(x.Shape))
		}
		if axis < 0 {
			axis += len(x.Shape)
		}
		if !c.has(3) {
			return nil, c.errorf(0, "groupby(): give groups=, the number of groups (the labels are 0 .. groups-1)")
		}
		groups, err := c.int(3, 0)
		if err != nil {
			return nil, err
		}
		if groups < 1 || groups > maxGroups {
			return nil, c.errorf(3, "groupby(): groups=%d: give 1 to %d", groups, maxGroups)
		}
		if len(labels.Shape) != 1 || !(labels.DType.IsInt() || labels.DType == tensor.Bool) {
			return nil, c.errorf(1, "groupby(): labels must be a 1-D integer tensor, not %s of shape %s", labels.DType, ShapeString(labels.Shape))
		}
		if tensor.HasUnknown(x.Shape) || tensor.HasUnknown(labels.Shape) {
			return nil, c.errorf(0, "groupby(): the lengths of x and labels must be known when the spec is written")
		}
		if labels.Shape[0] != x.Shape[axis] {
			return nil, c.errorf(1, "groupby(): %d labels for an axis %d of length %d", labels.Shape[0], axis, x.Shape[axis])
		}
		return groupbyValue{x: x, labels: labels, axis: axis, groups: groups}, nil
	})
	for _, f := range groupbyFuncs {
		params := []string{"self"}
		if f == "var" || f == "std" {
			params = append(params, "ddof")
		}
		groupbyMethods[f] = &builtin{params: params, fn: func(c *call) (value, error) {
			g := c.args[0].v.(groupbyValue)
			ddof := 0
			if len(params) > 1 {
				var err error
				if ddof, err = c.int(1, 0); err != nil {
					return nil, err
				}
				if ddof < 0 {
					return nil, c.errorf(1, "ddof must not be negative")
				}
			}
			return c.b.node(c.pos, tensor.OpGroupBy, Attrs{Axes: []int{g.axis}, Groups: g.groups, Func: f, Ddof: ddof}, g.x, g.labels)
		}}
	}
}

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
	if !slices.Contains(groupbyFuncs, a.Func) {
		return fmt.Errorf("groupby has no reduction %q: give one of %v", a.Func, groupbyFuncs)
	}
	if a.Groups < 1 || a.Groups > maxGroups {
		return fmt.Errorf("groupby into %d groups: give 1 to %d", a.Groups, maxGroups)
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
		dt = reduceType(tensor.OpSum, x.DType)
	case "prod":
		dt = reduceType(tensor.OpProd, x.DType)
	case "mean", "var", "std":
		dt = reduceType(tensor.OpMean, x.DType)
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

// groupbyMethod returns the method name of a groupbyValue.
func groupbyMethod(p syntax.SrcPos, name string) (*builtin, error) {
	if f, ok := groupbyMethods[name]; ok {
		return f, nil
	}
	return nil, syntax.Errorf(p, "a groupby has no method %s: give one of %v", name, groupbyFuncs)
}
