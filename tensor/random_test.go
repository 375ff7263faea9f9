package tensor

import (
	"math"
	"slices"
	"testing"
)

var randGenerators = []struct {
	op    string
	dt    DType
	attrs Attrs
}{
	{OpRand, Float64, Attrs{Seed: 1}},
	{OpRandn, Float64, Attrs{Seed: 2}},
	{OpRandint, Int64, Attrs{Seed: 3, Low: -5, High: 7}},
	{OpUniform, Float64, Attrs{Seed: 4, Start: 2, Step: 5}},
	{OpNormal, Float64, Attrs{Seed: 5, Start: 3, Step: 2}},
	{OpRand, Float32, Attrs{Seed: 6}},
}

// TestRandomChunkInvariance checks that a generator gives the same tensor
// whatever its chunking.
func TestRandomChunkInvariance(t *testing.T) {
	shape := []int{7, 5}
	chunkings := [][][]int{
		{{7}, {5}},
		{{3, 4}, {2, 3}},
		{{1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}},
		{{6, 1}, {5}},
	}
	for _, g := range randGenerators {
		var ref []float64
		for _, cs := range chunkings {
			b := newGraph(t)
			got := b.compute(b.gen(g.op, g.dt, shape, cs, g.attrs))[0]
			if got.DType != g.dt || !slices.Equal(got.Shape, shape) {
				t.Fatalf("%s: got %v%v", g.op, got.DType, got.Shape)
			}
			v := kernValues(got)
			if ref == nil {
				ref = v
				continue
			}
			for i := range v {
				if v[i] != ref[i] {
					t.Fatalf("%s chunks %v: element %d = %v, with one chunk %v", g.op, cs, i, v[i], ref[i])
				}
			}
		}
		distinct := map[float64]bool{}
		for _, v := range ref {
			distinct[v] = true
		}
		if len(distinct) < 10 {
			t.Errorf("%s: only %d distinct kernValues in 35", g.op, len(distinct))
		}
	}
}

// TestRandomSeeds checks that seeds give different streams and that a
// 1-D tensor's first elements do not depend on its length.
func TestRandomSeeds(t *testing.T) {
	b := newGraph(t)
	x := b.gen(OpRand, Float64, []int{100}, [][]int{{30, 70}}, Attrs{Seed: 1})
	y := b.gen(OpRand, Float64, []int{100}, [][]int{{100}}, Attrs{Seed: 2})
	z := b.gen(OpRand, Float64, []int{10}, [][]int{{10}}, Attrs{Seed: 1})
	out := b.compute(x, y, z)
	same := 0
	for i := 0; i < 100; i++ {
		if out[0].Float64At(i) == out[1].Float64At(i) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 1 and 2 agree on %d of 100 elements", same)
	}
	for i := 0; i < 10; i++ {
		if out[0].Float64At(i) != out[2].Float64At(i) {
			t.Fatalf("element %d differs between lengths 100 and 10", i)
		}
	}
}

// TestRandomStats checks the mean and variance of a million samples of each
// distribution, and randint's range and bucket counts.
func TestRandomStats(t *testing.T) {
	const n = 1 << 20
	cases := []struct {
		op         string
		dt         DType
		attrs      Attrs
		mean, vari float64
		lo, hi     float64 // every value in [lo, hi)
	}{
		{OpRand, Float64, Attrs{Seed: 11}, 0.5, 1.0 / 12, 0, 1},
		{OpRandn, Float64, Attrs{Seed: 12}, 0, 1, math.Inf(-1), math.Inf(1)},
		{OpUniform, Float64, Attrs{Seed: 13, Start: -2, Step: 6}, 2, 64.0 / 12, -2, 6},
		{OpNormal, Float64, Attrs{Seed: 14, Start: 3, Step: 0.5}, 3, 0.25, math.Inf(-1), math.Inf(1)},
		{OpRandint, Int64, Attrs{Seed: 15, Low: -3, High: 7}, 1.5, (100.0 - 1) / 12, -3, 7},
	}
	for _, c := range cases {
		b := newGraph(t)
		a := b.compute(b.gen(c.op, c.dt, []int{n}, [][]int{{n / 4, n / 4, n / 4, n / 4}}, c.attrs))[0]
		var sum, sq float64
		counts := map[float64]int{}
		for i := 0; i < n; i++ {
			v := a.Float64At(i)
			if !(v >= c.lo && v < c.hi) {
				t.Fatalf("%s: value %v outside [%v, %v)", c.op, v, c.lo, c.hi)
			}
			sum += v
			if c.op == OpRandint {
				counts[v]++
			}
		}
		mean := sum / n
		for i := 0; i < n; i++ {
			d := a.Float64At(i) - mean
			sq += d * d
		}
		vari := sq / n
		// Standard error of the mean is sqrt(var/n) ~ 1e-3 sigma; allow 5.
		sd := math.Sqrt(c.vari)
		if math.Abs(mean-c.mean) > 5*sd/math.Sqrt(n) {
			t.Errorf("%s: mean %v, want %v", c.op, mean, c.mean)
		}
		if math.Abs(vari-c.vari) > 0.01*c.vari {
			t.Errorf("%s: variance %v, want %v", c.op, vari, c.vari)
		}
		if c.op == OpRandint {
			if len(counts) != 10 {
				t.Errorf("randint: %d distinct kernValues, want 10", len(counts))
			}
			for v, k := range counts {
				if math.Abs(float64(k)-n/10) > 5*math.Sqrt(n*0.1*0.9) {
					t.Errorf("randint: value %v drawn %d times, want about %d", v, k, n/10)
				}
			}
		}
	}
}

// TestRandnTails checks the normal generator's tails against the normal
// distribution: P(|z| > 2) ~ 4.55%, P(|z| > 3) ~ 0.27%.
func TestRandnTails(t *testing.T) {
	const n = 1 << 20
	b := newGraph(t)
	a := b.compute(b.gen(OpRandn, Float64, []int{n}, [][]int{{n}}, Attrs{Seed: 21}))[0].Float64s()
	var over2, over3 int
	for _, v := range a {
		if math.Abs(v) > 2 {
			over2++
		}
		if math.Abs(v) > 3 {
			over3++
		}
	}
	if p := float64(over2) / n; math.Abs(p-0.0455) > 0.002 {
		t.Errorf("P(|z|>2) = %v, want 0.0455", p)
	}
	if p := float64(over3) / n; math.Abs(p-0.0027) > 0.0005 {
		t.Errorf("P(|z|>3) = %v, want 0.0027", p)
	}
}

// TestRandintWide checks the full int64 range does not overflow.
func TestRandintWide(t *testing.T) {
	b := newGraph(t)
	a := b.compute(b.gen(OpRandint, Int64, []int{1000}, [][]int{{1000}}, Attrs{Seed: 1, Low: math.MinInt64, High: math.MaxInt64}))[0].Int64s()
	neg := 0
	for _, v := range a {
		if v == math.MaxInt64 {
			t.Fatal("randint returned high")
		}
		if v < 0 {
			neg++
		}
	}
	if neg < 400 || neg > 600 {
		t.Errorf("%d of 1000 negative", neg)
	}
}
