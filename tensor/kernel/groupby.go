package kernel

import (
	"context"
	"fmt"
	"math"
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel/elem"
)

// Group-by reductions (chunk.GroupByArgs): a chunk of x is cut around its
// axis into outer blocks of n rows of inner contiguous elements; row i of
// every block belongs to the group labels[i]. Rows are added (or
// multiplied, or compared) whole into their group's row of accumulators,
// so the inner loop runs over contiguous memory whatever the axis. Floats
// accumulate in float64, rounded once at the end, so a float32 mean is as
// exact as NumPy's float64 one; integer sums, products and extrema in
// int64, exact.

// groupByShape checks op against args and returns the chunk's outer, n
// and inner lengths around the axis, from x's shape.
func groupByShape(a chunk.GroupByArgs, shape []int) (outer, n, inner int, err error) {
	if a.Axis < 0 || a.Axis >= len(shape) || a.Groups < 0 {
		return 0, 0, 0, fmt.Errorf("groupby along axis %d into %d groups of a chunk of shape %v", a.Axis, a.Groups, shape)
	}
	outer, inner = 1, 1
	for _, d := range shape[:a.Axis] {
		outer *= d
	}
	for _, d := range shape[a.Axis+1:] {
		inner *= d
	}
	return outer, shape[a.Axis], inner, nil
}

func groupByArgs(op *chunk.Op) (chunk.GroupByArgs, error) {
	a, ok := op.Args.(chunk.GroupByArgs)
	if !ok {
		return a, fmt.Errorf("bad args %T", op.Args)
	}
	switch a.Func {
	case "sum", "mean", "count", "min", "max", "var", "std", "prod":
	default:
		return a, fmt.Errorf("groupby: unknown reduction %q", a.Func)
	}
	if a.Acc != chunk.GroupByAcc(a.Func, a.In) {
		return a, fmt.Errorf("groupby %s of %v: partials of %v", a.Func, a.In, a.Acc)
	}
	return a, nil
}

// groupByMapKernel makes one chunk's partial.
func groupByMapKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := groupByArgs(op)
	if err != nil {
		return nil, err
	}
	if len(in) != 2 {
		return nil, fmt.Errorf("groupby.map: %d inputs, want x and its labels", len(in))
	}
	x, lab := in[0], in[1]
	outer, n, inner, err := groupByShape(a, x.Shape)
	if err != nil {
		return nil, err
	}
	if x.DType != a.In || len(lab.Shape) != 1 || lab.Shape[0] != n || !(lab.DType.IsInt() || lab.DType == tensor.Bool) {
		return nil, fmt.Errorf("groupby.map: x of %v%v with labels of %v%v along axis %d", x.DType, x.Shape, lab.DType, lab.Shape, a.Axis)
	}
	G, ks := a.Groups, chunk.GroupByStats(a.Func)
	plen := chunk.GroupByPartialLen(a.Func, outer, G, inner)
	if op.DType != a.Acc || !slices.Equal(op.Shape, []int{plen}) {
		return nil, fmt.Errorf("groupby.map: op of %v%v for a partial of %d", op.DType, op.Shape, plen)
	}
	labels := make([]int64, n)
	loadInts(labels, lab, 0)
	for i, g := range labels {
		if g < 0 || g >= int64(G) {
			labels[i] = -1 // not among the groups: left out
		}
	}
	out := elem.NewOutputAll(ctx, op)
	block := outer * G * inner
	if a.Acc == tensor.Int64 {
		acc := out.Int64s()
		counts := acc[ks*block:]
		clear(counts)
		for _, g := range labels {
			if g >= 0 {
				counts[g]++
			}
		}
		if ks == 0 {
			return out, nil
		}
		per := outer * inner
		for g, c := range counts {
			if c > 0 {
				fillInts(acc[g*per:(g+1)*per], a.Func)
			}
		}
		row := make([]int64, inner)
		for o := range outer {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for i, g := range labels {
				if g < 0 {
					continue
				}
				loadInts(row, x, (o*n+i)*inner)
				foldInts(acc[(int(g)*outer+o)*inner:][:inner], row, a.Func)
			}
		}
		return out, nil
	}
	acc := out.Float64s()
	counts := acc[ks*block:]
	clear(counts)
	for _, g := range labels {
		if g >= 0 {
			counts[g]++
		}
	}
	if ks == 0 {
		return out, nil
	}
	first := acc[:block]
	per := outer * inner
	for g, c := range counts {
		if c > 0 {
			fillFloats(first[g*per:(g+1)*per], a.Func)
		}
	}
	var row []float64
	if x.DType != tensor.Float64 && x.DType != tensor.Float32 {
		row = make([]float64, inner)
	}
	f := a.Func
	if f == "var" || f == "std" || f == "mean" {
		f = "sum"
	}
	for o := range outer {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i, g := range labels {
			if g >= 0 {
				foldRow(first[(int(g)*outer+o)*inner:][:inner], x, (o*n+i)*inner, row, f)
			}
		}
	}
	if ks == 2 {
		// var and std: the group's mean, then the sum of squared
		// deviations from it, a second pass over the chunk, which is
		// in memory: the partial (mean, M2) combines exactly (Chan et
		// al.), where sums of squares would cancel.
		m2 := acc[block : 2*block]
		for g, c := range counts {
			if c == 0 {
				continue
			}
			clear(m2[g*per : (g+1)*per])
			for j, v := range first[g*per : (g+1)*per] {
				first[g*per+j] = v / c
			}
		}
		if row == nil {
			row = make([]float64, inner)
		}
		for o := range outer {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for i, g := range labels {
				if g < 0 {
					continue
				}
				loadFloats(row, x, (o*n+i)*inner)
				k := (int(g)*outer + o) * inner
				mean, dev := first[k:k+inner], m2[k:k+inner]
				for j, v := range row {
					d := v - mean[j]
					dev[j] += d * d
				}
			}
		}
	}
	return out, nil
}

// groupByCombineKernel merges partials of one shape.
func groupByCombineKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := groupByArgs(op)
	if err != nil {
		return nil, err
	}
	if len(in) == 0 || len(op.Shape) != 1 {
		return nil, fmt.Errorf("groupby.combine: %d partials into %v", len(in), op.Shape)
	}
	for _, p := range in {
		if p.DType != a.Acc || !slices.Equal(p.Shape, op.Shape) {
			return nil, fmt.Errorf("groupby.combine: a partial of %v%v for %v%v", p.DType, p.Shape, a.Acc, op.Shape)
		}
	}
	out := elem.NewOutputAll(ctx, op)
	G := a.Groups
	copyGroupBy(a, out, in[0], G)
	for _, p := range in[1:] {
		mergeGroupBy(a, out, p, G)
	}
	return out, nil
}

// copyGroupBy sets acc to partial p: its counts, and the accumulators of
// the groups p has elements of. The others' are left as they were: no
// kernel reads the accumulators of a group whose count is 0, so a
// partial touches only the memory of the groups its chunk has (a chunk
// of a month's days in a climatology of twelve: one or two groups of
// twelve), and its other pages are never written, read or faulted in.
func copyGroupBy(a chunk.GroupByArgs, acc, p *tensor.Array, G int) {
	ks := chunk.GroupByStats(a.Func)
	if a.Acc == tensor.Int64 {
		copyGroups(acc.Int64s(), p.Int64s(), ks, G)
		return
	}
	copyGroups(acc.Float64s(), p.Float64s(), ks, G)
}

// copyGroups is copyGroupBy over partials x and y of ks blocks and G
// counts.
func copyGroups[T int64 | float64](x, y []T, ks, G int) {
	block := (len(x) - G) / max(ks, 1)
	per := block / max(G, 1)
	cy := y[len(y)-G:]
	copy(x[len(x)-G:], cy)
	for g, c := range cy {
		if c == 0 {
			continue
		}
		for s := range ks {
			at := s*block + g*per
			copy(x[at:at+per], y[at:at+per])
		}
	}
}

// mergeGroupBy merges partial p into acc, a group at a time: a group p
// has no element of is skipped, and one acc has none of is copied (see
// copyGroupBy: an empty group's accumulators may hold anything).
func mergeGroupBy(a chunk.GroupByArgs, acc, p *tensor.Array, G int) {
	ks := chunk.GroupByStats(a.Func)
	if a.Acc == tensor.Int64 {
		x, y := acc.Int64s(), p.Int64s()
		block := (len(x) - G) / max(ks, 1)
		per := block / max(G, 1)
		cx, cy := x[len(x)-G:], y[len(y)-G:]
		for g := range cx {
			if cy[g] == 0 {
				continue
			}
			if ks > 0 {
				at := g * per
				if cx[g] == 0 {
					copy(x[at:at+per], y[at:at+per])
				} else {
					foldInts(x[at:at+per], y[at:at+per], a.Func)
				}
			}
			cx[g] += cy[g]
		}
		return
	}
	x, y := acc.Float64s(), p.Float64s()
	block := (len(x) - G) / max(ks, 1)
	per := block / max(G, 1)
	cx, cy := x[len(x)-G:], y[len(y)-G:]
	for g := range cx {
		na, nb := cx[g], cy[g]
		if nb == 0 {
			continue
		}
		cx[g] = na + nb
		if ks == 0 {
			continue
		}
		at := g * per
		if na == 0 {
			for s := range ks {
				copy(x[s*block+at:][:per], y[s*block+at:][:per])
			}
			continue
		}
		switch a.Func {
		case "var", "std":
			// Chan et al.: the means and the sums of squared deviations
			// of two parts merge exactly.
			ma, mb := x[at:at+per], y[at:at+per]
			m2a, m2b := x[block+at:][:per], y[block+at:][:per]
			n := na + nb
			for k := range ma {
				d := mb[k] - ma[k]
				ma[k] += d * nb / n
				m2a[k] += m2b[k] + d*d*na*nb/n
			}
		case "mean":
			foldFloats(x[at:at+per], y[at:at+per], "sum")
		default:
			foldFloats(x[at:at+per], y[at:at+per], a.Func)
		}
	}
}

// groupByFinalKernel makes the result's chunk: the partials merged, then
// each group's value, of shape outer x Groups x inner.
func groupByFinalKernel(ctx context.Context, op *chunk.Op, in []*tensor.Array) (*tensor.Array, error) {
	a, err := groupByArgs(op)
	if err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("groupby.final: no partial")
	}
	outer, G, inner, err := groupByShape(a, op.Shape)
	if err != nil {
		return nil, err
	}
	if G != a.Groups {
		return nil, fmt.Errorf("groupby.final: a chunk of shape %v for %d groups along axis %d", op.Shape, a.Groups, a.Axis)
	}
	plen := chunk.GroupByPartialLen(a.Func, outer, G, inner)
	for _, p := range in {
		if p.DType != a.Acc || !slices.Equal(p.Shape, []int{plen}) {
			return nil, fmt.Errorf("groupby.final: a partial of %v%v for %v[%d]", p.DType, p.Shape, a.Acc, plen)
		}
	}
	acc := in[0]
	if len(in) > 1 {
		acc = tensor.NewArray(a.Acc, []int{plen})
		copyGroupBy(a, acc, in[0], G)
		for _, p := range in[1:] {
			mergeGroupBy(a, acc, p, G)
		}
	}
	out := elem.NewOutputAll(ctx, op)
	block := outer * G * inner
	// at is the accumulator of output element k (outer, group, inner)
	// in the partial, which is group-major (see chunk.GroupByArgs).
	at := func(k int) int {
		o, g, i := k/(G*inner), (k/inner)%G, k%inner
		return (g*outer+o)*inner + i
	}
	res := make([]float64, block)
	var ires []int64
	var counts []float64
	if a.Acc == tensor.Int64 {
		v := acc.Int64s()
		counts = make([]float64, G)
		for g, c := range v[len(v)-G:] {
			counts[g] = float64(c)
		}
		switch a.Func {
		case "count":
			ires = make([]int64, block)
			for k := range ires {
				ires[k] = v[len(v)-G+(k/inner)%G]
			}
		case "min", "max":
			for k := range res {
				res[k] = float64(v[at(k)])
				if counts[(k/inner)%G] == 0 {
					res[k] = math.NaN()
				}
			}
		default: // sum, prod: exact, 0 and 1 for an empty group
			ires = make([]int64, block)
			empty := int64(0)
			if a.Func == "prod" {
				empty = 1
			}
			for k := range ires {
				ires[k] = empty
				if counts[(k/inner)%G] > 0 {
					ires[k] = v[at(k)]
				}
			}
		}
	} else {
		v := acc.Float64s()
		counts = v[len(v)-G:]
		// An empty group's accumulators are not read (copyGroupBy): it
		// is 0 (sum), 1 (prod) or NaN.
		empty := math.NaN()
		switch a.Func {
		case "sum":
			empty = 0
		case "prod":
			empty = 1
		}
		for k := range res {
			c := counts[(k/inner)%G]
			if c == 0 {
				res[k] = empty
				continue
			}
			pk := at(k)
			switch a.Func {
			case "sum", "prod", "min", "max":
				res[k] = v[pk]
			case "mean":
				res[k] = v[pk] / c
			case "var", "std":
				d := max(c-float64(a.Ddof), 0)
				r := v[block+pk] / d
				if a.Func == "std" {
					r = math.Sqrt(r)
				}
				res[k] = r
			}
		}
	}
	if ires != nil {
		for k, v := range ires {
			setInt(out, k, v)
		}
		return out, nil
	}
	switch out.DType {
	case tensor.Float64:
		copy(out.Float64s(), res)
	case tensor.Float32:
		for k, v := range res {
			out.Float32s()[k] = float32(v)
		}
	case tensor.Float16:
		for k, v := range res {
			out.Halves()[k] = tensor.HalfFromFloat64(v)
		}
	default:
		return nil, fmt.Errorf("groupby.final: %s into %v", a.Func, out.DType)
	}
	return out, nil
}

// fillInts and fillFloats set accumulators to f's identity.
func fillInts(acc []int64, f string) {
	var v int64
	switch f {
	case "prod":
		v = 1
	case "min":
		v = math.MaxInt64
	case "max":
		v = math.MinInt64
	}
	for i := range acc {
		acc[i] = v
	}
}

func fillFloats(acc []float64, f string) {
	v := 0.0
	switch f {
	case "prod":
		v = 1
	case "min":
		v = math.Inf(1)
	case "max":
		v = math.Inf(-1)
	}
	for i := range acc {
		acc[i] = v
	}
}

// foldInts folds row into acc by f.
func foldInts(acc, row []int64, f string) {
	row = row[:len(acc)]
	switch f {
	case "sum":
		for j, v := range row {
			acc[j] += v
		}
	case "prod":
		for j, v := range row {
			acc[j] *= v
		}
	case "min":
		for j, v := range row {
			acc[j] = min(acc[j], v)
		}
	case "max":
		for j, v := range row {
			acc[j] = max(acc[j], v)
		}
	}
}

// foldFloats folds row into acc by f; a NaN wins a min or a max, as in
// NumPy.
func foldFloats(acc, row []float64, f string) {
	row = row[:len(acc)]
	switch f {
	case "sum":
		for j, v := range row {
			acc[j] += v
		}
	case "prod":
		for j, v := range row {
			acc[j] *= v
		}
	case "min":
		for j, v := range row {
			if a := acc[j]; a == a && (v < a || v != v) {
				acc[j] = v
			}
		}
	case "max":
		for j, v := range row {
			if a := acc[j]; a == a && (v > a || v != v) {
				acc[j] = v
			}
		}
	}
}

// foldRow folds x's row of len(acc) elements at off into acc by f: straight
// from a float32 or float64 chunk, else through scratch.
func foldRow(acc []float64, x *tensor.Array, off int, scratch []float64, f string) {
	switch x.DType {
	case tensor.Float32:
		src := x.Float32s()[off : off+len(acc)]
		switch f {
		case "sum":
			for j, v := range src {
				acc[j] += float64(v)
			}
			return
		}
	case tensor.Float64:
		foldFloats(acc, x.Float64s()[off:off+len(acc)], f)
		return
	}
	if scratch == nil {
		scratch = make([]float64, len(acc))
	}
	loadFloats(scratch, x, off)
	foldFloats(acc, scratch, f)
}

// loadFloats reads len(dst) elements of x from off as float64.
func loadFloats(dst []float64, x *tensor.Array, off int) {
	switch x.DType {
	case tensor.Float32:
		for j, v := range x.Float32s()[off : off+len(dst)] {
			dst[j] = float64(v)
		}
	case tensor.Float64:
		copy(dst, x.Float64s()[off:off+len(dst)])
	default:
		for j := range dst {
			dst[j] = x.Float64At(off + j)
		}
	}
}

// loadInts reads len(dst) elements of an integer or bool x from off as
// int64 (uint64 wrapping, as NumPy's sums do).
func loadInts(dst []int64, x *tensor.Array, off int) {
	switch x.DType {
	case tensor.Int64:
		copy(dst, x.Int64s()[off:off+len(dst)])
	case tensor.Int32:
		for j, v := range x.Int32s()[off : off+len(dst)] {
			dst[j] = int64(v)
		}
	case tensor.Int16:
		for j, v := range x.Int16s()[off : off+len(dst)] {
			dst[j] = int64(v)
		}
	case tensor.Int8:
		for j, v := range x.Int8s()[off : off+len(dst)] {
			dst[j] = int64(v)
		}
	case tensor.Uint64:
		for j, v := range x.Uint64s()[off : off+len(dst)] {
			dst[j] = int64(v)
		}
	case tensor.Uint32:
		for j, v := range x.Uint32s()[off : off+len(dst)] {
			dst[j] = int64(v)
		}
	case tensor.Uint16:
		for j, v := range x.Uint16s()[off : off+len(dst)] {
			dst[j] = int64(v)
		}
	case tensor.Uint8, tensor.Bool:
		for j, v := range x.Data[off : off+len(dst)] {
			dst[j] = int64(v)
		}
	}
}

// setInt stores v as element k of an int64 or uint64 out.
func setInt(out *tensor.Array, k int, v int64) {
	if out.DType == tensor.Uint64 {
		out.Uint64s()[k] = uint64(v)
		return
	}
	out.Int64s()[k] = v
}
