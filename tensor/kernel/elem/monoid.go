package elem

import (
	"fmt"
	"math"
	"sync"

	"marsfs/tensor"
)

// A Monoid reduction on one dtype, over raw bytes.
type Monoid struct {
	Init  func(acc []byte)                    // set every accumulator to the identity
	Inner func(acc []byte, o int, row []byte) // acc[o] = acc[o] op reduce(row)
	Outer func(acc, row []byte)               // acc[j] = acc[j] op row[j]
}

// MonoidFor returns the monoid of op (sum, prod, min, max, nanmin, nanmax,
// any, all) on dt.
func MonoidFor(op string, dt tensor.DType) (Monoid, error) {
	k := monoidKey{op, dt}
	monoids.RLock()
	m, ok := monoids.m[k]
	monoids.RUnlock()
	if ok {
		return m, nil
	}
	m, err := makeMonoid(op, dt)
	if err != nil {
		return Monoid{}, err
	}
	monoids.Lock()
	if monoids.m == nil {
		monoids.m = make(map[monoidKey]Monoid)
	}
	monoids.m[k] = m
	monoids.Unlock()
	return m, nil
}

// monoids holds the monoids made so far: their functions hold no state, and
// a graph of tiny chunks asks for one per op, where making its closures
// would cost more than the op's work.
var monoids struct {
	sync.RWMutex
	m map[monoidKey]Monoid
}

type monoidKey struct {
	op string
	dt tensor.DType
}

// makeMonoid makes the monoid of op on dt.
func makeMonoid(op string, dt tensor.DType) (Monoid, error) {
	var m *Monoid
	switch dt {
	case tensor.Bool:
		m = monoidT[uint8](op, 0, 1)
	case tensor.Int32:
		m = monoidT[int32](op, math.MinInt32, math.MaxInt32)
	case tensor.Int64:
		m = monoidT[int64](op, math.MinInt64, math.MaxInt64)
	case tensor.Uint64:
		m = monoidT[uint64](op, 0, math.MaxUint64)
	case tensor.Float32:
		m = monoidT(op, float32(math.Inf(-1)), float32(math.Inf(1)))
	case tensor.Float64:
		m = monoidT(op, math.Inf(-1), math.Inf(1))
	}
	if m == nil {
		return Monoid{}, fmt.Errorf("%s is not defined for %v", op, dt)
	}
	return *m, nil
}

func monoidT[T ElemType](op string, lowest, highest T) *Monoid {
	var (
		id    T
		inner func(acc T, row []T) T
		outer func(acc, row []T)
	)
	switch op {
	case tensor.OpSum, tensor.OpCountNonzero, tensor.OpNansum:
		inner = func(acc T, row []T) T { return acc + PairwiseSum(row) }
		outer = func(acc, row []T) { AddLoop(acc, acc, row) }
	case tensor.OpProd:
		id = 1
		inner = func(acc T, row []T) T {
			for _, v := range row {
				acc *= v
			}
			return acc
		}
		outer = func(acc, row []T) {
			row = row[:len(acc)]
			for j := range acc {
				acc[j] *= row[j]
			}
		}
	case tensor.OpMax, tensor.OpAny:
		// The builtin max propagates NaN, as NumPy's maximum does.
		id = lowest
		inner = func(acc T, row []T) T {
			acc, row = extremeRow(acc, row, false)
			return foldRow(acc, row, func(a, b T) T { return max(a, b) })
		}
		outer = func(acc, row []T) {
			row = row[:len(acc)]
			for j := extremePair(acc, row, false); j < len(acc); j++ {
				acc[j] = max(acc[j], row[j])
			}
		}
	case tensor.OpMin, tensor.OpAll:
		id = highest
		inner = func(acc T, row []T) T {
			acc, row = extremeRow(acc, row, true)
			return foldRow(acc, row, func(a, b T) T { return min(a, b) })
		}
		outer = func(acc, row []T) {
			row = row[:len(acc)]
			for j := extremePair(acc, row, true); j < len(acc); j++ {
				acc[j] = min(acc[j], row[j])
			}
		}
	case tensor.OpNanmax, tensor.OpNanmin:
		isMax := op == tensor.OpNanmax
		// Floats start at NaN ("nothing seen") and skip NaN values; for
		// integers this is plain max/min.
		id = highest
		if isMax {
			id = lowest
		}
		if isFloatT[T]() {
			id = T(math.NaN())
		}
		better := func(v, acc T) bool {
			if v != v {
				return false
			}
			if acc != acc {
				return true
			}
			if isMax {
				return v > acc
			}
			return v < acc
		}
		inner = func(acc T, row []T) T {
			for _, v := range row {
				if better(v, acc) {
					acc = v
				}
			}
			return acc
		}
		outer = func(acc, row []T) {
			row = row[:len(acc)]
			for j := range acc {
				if better(row[j], acc[j]) {
					acc[j] = row[j]
				}
			}
		}
	default:
		return nil
	}
	return &Monoid{
		Init:  func(acc []byte) { FillSlice(tensor.View[T](acc), id) },
		Inner: func(acc []byte, o int, row []byte) { a := tensor.View[T](acc); a[o] = inner(a[o], tensor.View[T](row)) },
		Outer: func(acc, row []byte) { outer(tensor.View[T](acc), tensor.View[T](row)) },
	}
}

func isFloatT[T ElemType]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

// PairwiseSum returns the sum of x by pairwise summation over blocks of 128
// elements with eight running sums each, as NumPy sums contiguous data, so
// that float error grows with log(n), not n.
func PairwiseSum[T ElemType](x []T) T {
	n := len(x)
	if n < 8 {
		var s T
		for _, v := range x {
			s += v
		}
		return s
	}
	if n <= 128 {
		r0, r1, r2, r3, r4, r5, r6, r7 := x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
		i := 8
		for ; i+8 <= n; i += 8 {
			b := x[i : i+8 : i+8]
			r0 += b[0]
			r1 += b[1]
			r2 += b[2]
			r3 += b[3]
			r4 += b[4]
			r5 += b[5]
			r6 += b[6]
			r7 += b[7]
		}
		s := ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
		for ; i < n; i++ {
			s += x[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return PairwiseSum(x[:n2]) + PairwiseSum(x[n2:])
}

// KeepShape is a's shape with the reduced axes set to 1.
func KeepShape(shape []int, reduced []bool) ([]int, int) {
	ks := make([]int, len(shape))
	extent := 1
	for ax, s := range shape {
		ks[ax] = s
		if reduced[ax] {
			ks[ax] = 1
			extent *= s
		}
	}
	return ks, extent
}

// ChanCombine merges (count, mean, M2) partials b into a by Chan et al.'s
// parallel formula.
func ChanCombine(a, b []float64) {
	b = b[:len(a)]
	for i := 0; i+2 < len(a); i += 3 {
		na, nb := a[i], b[i]
		n := na + nb
		if nb == 0 {
			continue
		}
		if na == 0 {
			copy(a[i:i+3], b[i:i+3])
			continue
		}
		delta := b[i+1] - a[i+1]
		a[i] = n
		a[i+1] += delta * nb / n
		a[i+2] += b[i+2] + delta*delta*na*nb/n
	}
}

// VarianceOf is M2 / max(n-ddof, 0), or its square root for std.
func VarianceOf(n, m2 float64, ddof int, std bool) float64 {
	d := max(n-float64(ddof), 0)
	v := m2 / d
	if std {
		return math.Sqrt(v)
	}
	return v
}

// extremeRow folds the leading elements of a float row into acc with
// the vector loops where the CPU has them (extremeWide), and returns acc
// and the rest of the row.
func extremeRow[T ElemType](acc T, row []T, isMin bool) (T, []T) {
	switch r := any(row).(type) {
	case []float64:
		a, n := extremeWide(any(acc).(float64), r, isMin)
		return any(a).(T), row[n:]
	case []float32:
		a, n := extremeWide(any(acc).(float32), r, isMin)
		return any(a).(T), row[n:]
	}
	return acc, row
}

// extremePair sets the leading elements of float acc to the max (or
// min) of themselves and row's with the vector loops where the CPU has
// them (extremePairWide), and returns how many it set.
func extremePair[T ElemType](acc, row []T, isMin bool) int {
	switch a := any(acc).(type) {
	case []float64:
		return extremePairWide(a, any(row).([]float64), isMin)
	case []float32:
		return extremePairWide(a, any(row).([]float32), isMin)
	}
	return 0
}

// foldRow folds row into acc with f, a max or min: associative and
// commutative as Go defines them on floats too (NaN wins, +0 is above -0),
// so four running values, folded together at the end, give what one gives,
// without each step waiting on the last.
func foldRow[T ElemType](acc T, row []T, f func(a, b T) T) T {
	a0, a1, a2, a3 := acc, acc, acc, acc
	i := 0
	for ; i+4 <= len(row); i += 4 {
		r := row[i : i+4 : i+4]
		a0, a1, a2, a3 = f(a0, r[0]), f(a1, r[1]), f(a2, r[2]), f(a3, r[3])
	}
	for ; i < len(row); i++ {
		a0 = f(a0, row[i])
	}
	return f(f(a0, a1), f(a2, a3))
}
