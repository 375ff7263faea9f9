package kernel

import (
	"context"

	"marsfs/tensor"
	"marsfs/tensor/kernel/elem"
)

// The float sums of mean, var and std read a float32 chunk in place and
// widen each value to float64 as it is added, rather than casting the
// chunk into a float64 copy first: the copy was twice the chunk in fresh
// memory, written and read back, for every chunk (a 6 MB chunk of a
// climate store made 12 MB of pages to fault in, more time than the sums).
// The additions are those of the cast chunk, in the same order, so the
// partials are the same to the bit, and as accurate (float64 sums of
// float32 values, closer to the float64 truth than NumPy's float32
// pairwise sums).

// wideSums returns the float64 sums of a float32 or float64 chunk over
// the reduced axes.
func wideSums(ctx context.Context, a *tensor.Array, reduced []bool) ([]float64, error) {
	ks, _ := elem.KeepShape(a.Shape, reduced)
	acc := takeF64(tensor.NumElements(ks))
	clear(acc)
	var err error
	if a.DType == tensor.Float32 {
		err = wideSumsT(ctx, acc, a.Float32s(), a.Shape, reduced)
	} else {
		err = wideSumsT(ctx, acc, elem.CastArray(a, tensor.Float64).Float64s(), a.Shape, reduced)
	}
	return acc, err
}

func wideSumsT[T float32 | float64](ctx context.Context, acc []float64, v []T, shape []int, reduced []bool) error {
	var g wideGroup
	f32, _ := any(v).([]float32)
	err := newRedLayout(shape, reduced, true).rows(ctx, func(in, o, n int, inner bool) {
		row := v[in : in+n]
		switch {
		case inner:
			acc[o] += pairwiseWide(row)
		case f32 != nil:
			if !g.add(o, n, f32[in:in+n]) {
				elem.AddWideRows(acc[g.o:g.o+g.n], g.rows[:g.k])
				g.start(o, n, f32[in:in+n])
			}
		default:
			addWide(acc[o:o+n], row)
		}
	})
	if g.k > 0 {
		elem.AddWideRows(acc[g.o:g.o+g.n], g.rows[:g.k])
	}
	return err
}

// A wideGroup gathers the float32 rows that reduce into the same
// accumulators one after another (a chunk's rows along its leading axes,
// in order), for elem.AddWideRows and elem.AddSqDevWideRows to add them
// all at once: the same additions, with the accumulators loaded and
// stored once a group rather than once a row.
type wideGroup struct {
	o, n, k int
	rows    [elem.MaxWideRows][]float32
}

// add adds row to the group, or reports false when it is full or the row
// reduces into other accumulators (the caller flushes it and starts
// again).
func (g *wideGroup) add(o, n int, row []float32) bool {
	if g.k == 0 {
		g.start(o, n, row)
		return true
	}
	if g.k == len(g.rows) || o != g.o || n != g.n {
		return false
	}
	g.rows[g.k] = row
	g.k++
	return true
}

func (g *wideGroup) start(o, n int, row []float32) {
	g.o, g.n, g.k = o, n, 1
	g.rows[0] = row
}

// addWide adds row, widened, into acc element by element.
func addWide[T float32 | float64](acc []float64, row []T) {
	if r, ok := any(row).([]float64); ok {
		elem.AddLoop(acc, acc, r)
		return
	}
	row = row[:len(acc)]
	j := 0
	for ; j+4 <= len(acc); j += 4 {
		a, r := acc[j:j+4:j+4], row[j:j+4:j+4]
		a[0] += float64(r[0])
		a[1] += float64(r[1])
		a[2] += float64(r[2])
		a[3] += float64(r[3])
	}
	for ; j < len(acc); j++ {
		acc[j] += float64(row[j])
	}
}

// pairwiseWide is elem.PairwiseSum of x widened to float64: the same
// additions in the same order.
func pairwiseWide[T float32 | float64](x []T) float64 {
	n := len(x)
	if n < 8 {
		var s float64
		for _, v := range x {
			s += float64(v)
		}
		return s
	}
	if n <= 128 {
		r0, r1, r2, r3 := float64(x[0]), float64(x[1]), float64(x[2]), float64(x[3])
		r4, r5, r6, r7 := float64(x[4]), float64(x[5]), float64(x[6]), float64(x[7])
		i := 8
		for ; i+8 <= n; i += 8 {
			b := x[i : i+8 : i+8]
			r0 += float64(b[0])
			r1 += float64(b[1])
			r2 += float64(b[2])
			r3 += float64(b[3])
			r4 += float64(b[4])
			r5 += float64(b[5])
			r6 += float64(b[6])
			r7 += float64(b[7])
		}
		s := ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
		for ; i < n; i++ {
			s += float64(x[i])
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseWide(x[:n2]) + pairwiseWide(x[n2:])
}

// wideM2 adds to m2 the squared deviations of a float32 or float64
// chunk's values from mean, over the reduced axes: the second pass of
// varMap.
func wideM2(ctx context.Context, m2, mean []float64, a *tensor.Array, reduced []bool) error {
	if a.DType == tensor.Float32 {
		return wideM2T(ctx, m2, mean, a.Float32s(), a.Shape, reduced)
	}
	return wideM2T(ctx, m2, mean, elem.CastArray(a, tensor.Float64).Float64s(), a.Shape, reduced)
}

func wideM2T[T float32 | float64](ctx context.Context, m2, mean []float64, v []T, shape []int, reduced []bool) error {
	var g wideGroup
	f32, _ := any(v).([]float32)
	err := newRedLayout(shape, reduced, true).rows(ctx, func(in, o, n int, inner bool) {
		row := v[in : in+n]
		if !inner && f32 != nil {
			if !g.add(o, n, f32[in:in+n]) {
				elem.AddSqDevWideRows(m2[g.o:g.o+g.n], mean[g.o:g.o+g.n], g.rows[:g.k])
				g.start(o, n, f32[in:in+n])
			}
			return
		}
		if inner {
			mu, s := mean[o], 0.0
			for _, x := range row {
				d := float64(x) - mu
				s += d * d
			}
			m2[o] += s
			return
		}
		mu, acc := mean[o:o+n:o+n], m2[o:o+n:o+n]
		row = row[:n]
		j := 0
		for ; j+4 <= n; j += 4 {
			d0 := float64(row[j]) - mu[j]
			d1 := float64(row[j+1]) - mu[j+1]
			d2 := float64(row[j+2]) - mu[j+2]
			d3 := float64(row[j+3]) - mu[j+3]
			acc[j] += d0 * d0
			acc[j+1] += d1 * d1
			acc[j+2] += d2 * d2
			acc[j+3] += d3 * d3
		}
		for ; j < n; j++ {
			d := float64(row[j]) - mu[j]
			acc[j] += d * d
		}
	})
	if g.k > 0 {
		elem.AddSqDevWideRows(m2[g.o:g.o+g.n], mean[g.o:g.o+g.n], g.rows[:g.k])
	}
	return err
}

// widens reports whether the float sums read dt in place.
func widens(dt tensor.DType) bool { return dt == tensor.Float32 || dt == tensor.Float64 }

// f64Kept keeps the float64 sums, means and M2s of the map kernels (half
// a megabyte each for a climate chunk's time mean) from chunk to chunk:
// made afresh, each was pages to fault in and clear for every chunk. A
// var map holds two at once in each of a worker's slots.
var f64Kept = &keptList[[]float64]{max: 8}

// takeF64 returns a buffer of n float64s whose contents are undefined.
func takeF64(n int) []float64 {
	if b, ok := f64Kept.get(); ok && cap(b) >= n {
		return b[:n]
	}
	return make([]float64, n)
}

// putF64 gives b back for takeF64; the caller keeps no reference to it.
func putF64(b []float64) {
	if cap(b) >= 1024 {
		f64Kept.put(b)
	}
}
