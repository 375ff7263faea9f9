package kernel

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// poisoned is an allocator whose arrays, unless asked zeroed, hold bytes
// no kernel should read: NaN for floats, 0x5a5a... for integers.
func poisoned(dt tensor.DType, shape []int, zero bool) *tensor.Array {
	a := tensor.NewArray(dt, shape)
	if !zero {
		for i := range a.Data {
			a.Data[i] = 0xff
		}
		if !dt.IsFloat() {
			for i := range a.Data {
				a.Data[i] = 0x5a
			}
		}
	}
	return a
}

// TestGroupByEmptyGroupsUnread runs each group-by reduction through its
// map, combine and final kernels over chunks that each hold a few of the
// groups (as a climatology's chunks of days hold one or two months of
// twelve), into outputs whose memory holds garbage, and checks every
// group against a direct computation: the accumulators of a group a
// partial has no element of are never read, and an empty group is 0, 1
// or NaN.
func TestGroupByEmptyGroupsUnread(t *testing.T) {
	ctx := tensor.WithAlloc(context.Background(), poisoned)
	const G, rows, outer, inner = 7, 30, 2, 3
	r := rand.New(rand.NewPCG(1, 2))
	labels := make([]int64, rows)
	for i := range labels {
		labels[i] = int64(i / 6) // groups 0-4 in runs of 6; 5 and 6 empty
	}
	labels[7] = -1 // left out
	cuts := []int{0, 4, 13, 14, 25, 30}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32, tensor.Int64} {
		x := tensor.NewArray(dt, []int{outer, rows, inner})
		for i := range tensor.NumElements(x.Shape) {
			v := float64(r.IntN(19) - 9)
			if dt.IsFloat() {
				v += r.Float64()
			}
			setAt(x, i, v)
		}
		for _, f := range []string{"sum", "mean", "count", "min", "max", "var", "std", "prod"} {
			args := chunk.GroupByArgs{Func: f, Axis: 1, Groups: G, Ddof: 0, In: dt, Acc: chunk.GroupByAcc(f, dt)}
			plen := chunk.GroupByPartialLen(f, outer, G, inner)
			var parts []*tensor.Array
			for c := 0; c+1 < len(cuts); c++ {
				lo, hi := cuts[c], cuts[c+1]
				xc := tensor.NewArray(dt, []int{outer, hi - lo, inner})
				for o := range outer {
					for i := lo; i < hi; i++ {
						for j := range inner {
							setAt(xc, (o*(hi-lo)+i-lo)*inner+j, x.Float64At((o*rows+i)*inner+j))
						}
					}
				}
				lab := tensor.NewArray(tensor.Int64, []int{hi - lo})
				copy(lab.Int64s(), labels[lo:hi])
				p, err := Run(ctx, &chunk.Op{Kind: chunk.KindGroupByMap, Inputs: []int{0, 1}, Shape: []int{plen}, DType: args.Acc, Args: args}, []*tensor.Array{xc, lab})
				if err != nil {
					t.Fatalf("%v %s map: %v", dt, f, err)
				}
				parts = append(parts, p)
			}
			comb, err := Run(ctx, &chunk.Op{Kind: chunk.KindGroupByCombine, Inputs: []int{0, 1, 2}, Shape: []int{plen}, DType: args.Acc, Args: args}, parts[1:4])
			if err != nil {
				t.Fatalf("%v %s combine: %v", dt, f, err)
			}
			odt := dt
			switch {
			case f == "count":
				odt = tensor.Int64
			case (f == "mean" || f == "var" || f == "std" || f == "min" || f == "max") && !dt.IsFloat():
				odt = tensor.Float64
			}
			got, err := Run(ctx, &chunk.Op{Kind: chunk.KindGroupByFinal, Inputs: []int{0, 1, 2}, Shape: []int{outer, G, inner}, DType: odt, Args: args}, []*tensor.Array{parts[0], comb, parts[4]})
			if err != nil {
				t.Fatalf("%v %s final: %v", dt, f, err)
			}
			for o := range outer {
				for g := range G {
					for j := range inner {
						var vals []float64
						for i, l := range labels {
							if l == int64(g) {
								vals = append(vals, x.Float64At((o*rows+i)*inner+j))
							}
						}
						want := groupRef(f, vals)
						if dt == tensor.Float32 && f != "count" {
							want = float64(float32(want))
						}
						v := got.Float64At((o*G+g)*inner + j)
						if !(v == want || math.IsNaN(v) && math.IsNaN(want) || math.Abs(v-want) <= 1e-6*math.Abs(want)) {
							t.Errorf("%v %s: group %d at (%d, %d) is %v, want %v", dt, f, g, o, j, v, want)
						}
					}
				}
			}
		}
	}
}

// groupRef is reduction f of one group's values (NaN, 0 or 1 for none).
func groupRef(f string, vals []float64) float64 {
	n := float64(len(vals))
	switch f {
	case "count":
		return n
	case "sum":
		s := 0.0
		for _, v := range vals {
			s += v
		}
		return s
	case "prod":
		p := 1.0
		for _, v := range vals {
			p *= v
		}
		return p
	}
	if len(vals) == 0 {
		return math.NaN()
	}
	switch f {
	case "min", "max":
		m := vals[0]
		for _, v := range vals {
			if f == "min" {
				m = min(m, v)
			} else {
				m = max(m, v)
			}
		}
		return m
	}
	mean := groupRef("sum", vals) / n
	if f == "mean" {
		return mean
	}
	ss := 0.0
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	if f == "var" {
		return ss / n
	}
	return math.Sqrt(ss / n)
}

// setAt stores v as element i of a float64, float32 or int64 a.
func setAt(a *tensor.Array, i int, v float64) {
	switch a.DType {
	case tensor.Float64:
		a.Float64s()[i] = v
	case tensor.Float32:
		a.Float32s()[i] = float32(v)
	case tensor.Int64:
		a.Int64s()[i] = int64(v)
	}
}
