package lang

import (
	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/syntax"
)

// Group-by reductions, in the manner of flox (what xarray uses with Dask):
// groupby(x, labels, axis=0, groups=12) names the groups of x's elements
// along axis by an integer tensor of labels, one an element of that axis,
// and its methods reduce each group: sum, mean, count, min, max, var,
// std and prod (spec.OpGroupBy's inference says the rest).

// groupbyValue is groupby(...)'s result: what its methods reduce.
type groupbyValue struct {
	x, labels *spec.Node
	axis      int
	groups    int
}

// groupbyMethods are those methods, by name.
var groupbyMethods = map[string]*builtin{}

func registerGroupBy(l *library) {
	l.register("groupby", []string{"x", "labels", "axis", "groups"}, func(c *call) (value, error) {
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
		if groups < 1 || groups > spec.MaxGroups {
			return nil, c.errorf(3, "groupby(): groups=%d: give 1 to %d", groups, spec.MaxGroups)
		}
		if len(labels.Shape) != 1 || !(labels.DType.IsInt() || labels.DType == tensor.Bool) {
			return nil, c.errorf(1, "groupby(): labels must be a 1-D integer tensor, not %s of shape %s", labels.DType, spec.ShapeString(labels.Shape))
		}
		if tensor.HasUnknown(x.Shape) || tensor.HasUnknown(labels.Shape) {
			return nil, c.errorf(0, "groupby(): the lengths of x and labels must be known when the spec is written")
		}
		if labels.Shape[0] != x.Shape[axis] {
			return nil, c.errorf(1, "groupby(): %d labels for an axis %d of length %d", labels.Shape[0], axis, x.Shape[axis])
		}
		return groupbyValue{x: x, labels: labels, axis: axis, groups: groups}, nil
	})
	for _, f := range spec.GroupByFuncs {
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
			return c.b.Node(c.pos, tensor.OpGroupBy, spec.Attrs{Axes: []int{g.axis}, Groups: g.groups, Func: f, Ddof: ddof}, g.x, g.labels)
		}}
	}
}

// groupbyMethod returns the method name of a groupbyValue.
func groupbyMethod(p syntax.SrcPos, name string) (*builtin, error) {
	if f, ok := groupbyMethods[name]; ok {
		return f, nil
	}
	return nil, syntax.Errorf(p, "a groupby has no method %s: give one of %v", name, spec.GroupByFuncs)
}
