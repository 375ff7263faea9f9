package expr

import (
	"math"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/kernel/elem"
)

// TestVecLoops checks the packed float64 loops against Go's scalar
// arithmetic bit for bit, over lengths around the unrolling and values
// that round, overflow, underflow and are not numbers.
func TestVecLoops(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 3, 1.0 / 3, 0.1, 1e308, -1e308, 5e-324, 2.2250738585072014e-308,
		math.Inf(1), math.Inf(-1), math.NaN(), 7.5e-300, 123456789.123}
	for _, v := range vecVariants() {
		t.Run(v.Name, func(t *testing.T) { testVecSet(t, v, special) })
	}
	if vecRow(tensor.OpAdd, tensor.Float32, tensor.Float32) != nil || vecRow(tensor.OpPower, tensor.Float64, tensor.Float64) != nil ||
		vecRow(tensor.OpLess, tensor.Float32, tensor.Bool) != nil || vecRow(tensor.OpAdd, tensor.Float64, tensor.Bool) != nil {
		t.Error("packed loops offered for other ops or dtypes")
	}
	testVecCmp(t, special)
}

func testVecSet(t *testing.T, v vecSet, special []float64) {
	ops := []struct {
		kind string
		loop func(d, a, b []float64)
		f    func(a, b float64) float64
	}{
		{tensor.OpAdd, v.Add, func(a, b float64) float64 { return a + b }},
		{tensor.OpSubtract, v.Sub, func(a, b float64) float64 { return a - b }},
		{tensor.OpMultiply, v.Mul, func(a, b float64) float64 { return a * b }},
		{tensor.OpDivide, v.Div, func(a, b float64) float64 { return a / b }},
	}
	s := elem.NewRandStream(3, 0)
	for _, op := range ops {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 255, 4096} {
			a, b := make([]float64, n+1), make([]float64, n+1) // longer than d, as views may be
			for i := range a {
				a[i] = special[int(s.Bits(uint64(2*i))%uint64(len(special)))]
				b[i] = special[int(s.Bits(uint64(2*i+1))%uint64(len(special)))]
				if i%3 == 0 {
					a[i] = s.Normal(uint64(i)) * 1e3
				}
			}
			d := make([]float64, n)
			op.loop(d, a, b)
			for i := range d {
				w := op.f(a[i], b[i])
				if math.Float64bits(d[i]) != math.Float64bits(w) && !(math.IsNaN(d[i]) && math.IsNaN(w)) {
					t.Fatalf("%s n=%d: %v op %v = %v, want %v", op.kind, n, a[i], b[i], d[i], w)
				}
			}
		}
	}
	x := make([]float64, 256)
	for i := range x {
		x[i] = s.Normal(uint64(i)) * math.Pow(10, float64(i%9))
	}
	for _, n := range []int{8, 16, 24, 128, 256} {
		var r [8]float64
		v.Sum8(x[:n], &r)
		for k := range r {
			w := x[k]
			for i := k + 8; i < n; i += 8 {
				w += x[i]
			}
			if r[k] != w {
				t.Fatalf("sum8 n=%d: r[%d] = %v, want %v", n, k, r[k], w)
			}
		}
	}
}

func TestPairwiseSumF64(t *testing.T) {
	s := elem.NewRandStream(5, 0)
	x := make([]float64, 5000)
	for i := range x {
		x[i] = s.Normal(uint64(i)) * math.Pow(10, float64(i%7))
	}
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 1000, 4096, 5000} {
		if g, w := pairwiseSumF64(x[:n]), elem.PairwiseSum(x[:n]); math.Float64bits(g) != math.Float64bits(w) {
			t.Errorf("n=%d: %v, want %v", n, g, w)
		}
	}
}

func TestSumCascade(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 8, 1000} {
		var c sumCascade
		for i := range n {
			c.push(float64(i + 1))
		}
		if got, want := c.total(), float64(n*(n+1)/2); got != want {
			t.Errorf("n=%d: %v, want %v", n, got, want)
		}
	}
	// Pairwise, a million tenths lose far less than one after another.
	var c sumCascade
	seq := 0.0
	for range 1 << 20 {
		c.push(0.1)
		seq += 0.1
	}
	exact := 0.1 * (1 << 20)
	if e, s := math.Abs(c.total()-exact), math.Abs(seq-exact); e > 1e-9 || e >= s {
		t.Errorf("cascade error %g, sequential %g", e, s)
	}
}

// testVecCmp checks the packed float64 comparisons against Go's operators.
func testVecCmp(t *testing.T, special []float64) {
	ops := []struct {
		kind string
		f    func(a, b float64) bool
	}{
		{tensor.OpLess, func(a, b float64) bool { return a < b }},
		{tensor.OpLessEq, func(a, b float64) bool { return a <= b }},
		{tensor.OpGreater, func(a, b float64) bool { return a > b }},
		{tensor.OpGreaterEq, func(a, b float64) bool { return a >= b }},
		{tensor.OpEqual, func(a, b float64) bool { return a == b }},
		{tensor.OpNotEqual, func(a, b float64) bool { return a != b }},
	}
	s := elem.NewRandStream(4, 0)
	for _, op := range ops {
		row := vecRow(op.kind, tensor.Float64, tensor.Bool)
		if row == nil {
			if useCmpAVX {
				t.Fatalf("no packed %s", op.kind)
			}
			continue
		}
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 255, 4096} {
			a, b := make([]float64, n+1), make([]float64, n+1)
			for i := range a {
				a[i] = special[int(s.Bits(uint64(2*i))%uint64(len(special)))]
				b[i] = special[int(s.Bits(uint64(2*i+1))%uint64(len(special)))]
				if i%4 == 0 {
					b[i] = a[i] // equal operands, NaN included
				}
			}
			d := make([]byte, n)
			for i := range d {
				d[i] = 7 // overwritten
			}
			if err := row(d, [][]byte{elem.Float64Bytes(a), elem.Float64Bytes(b)}); err != nil {
				t.Fatal(err)
			}
			for i, v := range d {
				if w := elem.B2u(op.f(a[i], b[i])); v != w {
					t.Fatalf("%s n=%d: %v, %v gives %d, want %d", op.kind, n, a[i], b[i], v, w)
				}
			}
		}
	}
}
