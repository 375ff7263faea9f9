package tensortest

import (
	"math"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/kernel/elem"
	"marsfs/tensor/kernel/expr"
	"marsfs/tensor/spec"
)

var randGenerators = []struct {
	op    string
	dt    tensor.DType
	attrs spec.Attrs
}{
	{tensor.OpRand, tensor.Float64, spec.Attrs{Seed: 1}},
	{tensor.OpRandn, tensor.Float64, spec.Attrs{Seed: 2}},
	{tensor.OpRandint, tensor.Int64, spec.Attrs{Seed: 3, Low: -5, High: 7}},
	{tensor.OpUniform, tensor.Float64, spec.Attrs{Seed: 4, Start: 2, Step: 5}},
	{tensor.OpNormal, tensor.Float64, spec.Attrs{Seed: 5, Start: 3, Step: 2}},
	{tensor.OpRand, tensor.Float32, spec.Attrs{Seed: 6}},
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
	x := b.gen(tensor.OpRand, tensor.Float64, []int{100}, [][]int{{30, 70}}, spec.Attrs{Seed: 1})
	y := b.gen(tensor.OpRand, tensor.Float64, []int{100}, [][]int{{100}}, spec.Attrs{Seed: 2})
	z := b.gen(tensor.OpRand, tensor.Float64, []int{10}, [][]int{{10}}, spec.Attrs{Seed: 1})
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
		dt         tensor.DType
		attrs      spec.Attrs
		mean, vari float64
		lo, hi     float64 // every value in [lo, hi)
	}{
		{tensor.OpRand, tensor.Float64, spec.Attrs{Seed: 11}, 0.5, 1.0 / 12, 0, 1},
		{tensor.OpRandn, tensor.Float64, spec.Attrs{Seed: 12}, 0, 1, math.Inf(-1), math.Inf(1)},
		{tensor.OpUniform, tensor.Float64, spec.Attrs{Seed: 13, Start: -2, Step: 6}, 2, 64.0 / 12, -2, 6},
		{tensor.OpNormal, tensor.Float64, spec.Attrs{Seed: 14, Start: 3, Step: 0.5}, 3, 0.25, math.Inf(-1), math.Inf(1)},
		{tensor.OpRandint, tensor.Int64, spec.Attrs{Seed: 15, Low: -3, High: 7}, 1.5, (100.0 - 1) / 12, -3, 7},
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
			if c.op == tensor.OpRandint {
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
		if c.op == tensor.OpRandint {
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
	a := b.compute(b.gen(tensor.OpRandn, tensor.Float64, []int{n}, [][]int{{n}}, spec.Attrs{Seed: 21}))[0].Float64s()
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
	a := b.compute(b.gen(tensor.OpRandint, tensor.Int64, []int{1000}, [][]int{{1000}}, spec.Attrs{Seed: 1, Low: math.MinInt64, High: math.MaxInt64}))[0].Int64s()
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

// TestRandomQuality runs a few statistical tests over four million values
// of the hash: the uniform's histogram and moments, the histogram of
// consecutive pairs, each bit's frequency, and the correlation of values
// at a lag, of two seeds (W1's a and b) and of two sub-streams (randint's
// redraws). The bounds are five or six standard deviations of each
// statistic, so a sound generator fails with a chance below 1e-6.
func TestRandomQuality(t *testing.T) {
	const n = 1 << 22
	fill := func(seed, sub uint64) []float64 {
		d := make([]float64, n)
		expr.UniformFill(d, elem.NewRandStream(seed, sub), 0)
		return d
	}
	u := fill(1, 0)

	// Histogram of 1024 bins: chi-square with 1023 degrees of freedom.
	chi := func(counts []int, total int) float64 {
		e := float64(total) / float64(len(counts))
		x := 0.0
		for _, c := range counts {
			d := float64(c) - e
			x += d * d / e
		}
		return x
	}
	checkChi := func(name string, x float64, df int) {
		t.Helper()
		if sd := math.Sqrt(2 * float64(df)); math.Abs(x-float64(df)) > 6*sd {
			t.Errorf("%s: chi-square %.1f with %d degrees of freedom", name, x, df)
		}
	}
	bins := make([]int, 1024)
	for _, v := range u {
		bins[int(v*1024)]++
	}
	checkChi("histogram", chi(bins, n), 1023)
	pairs := make([]int, 64*64)
	for i := 0; i+1 < n; i += 2 {
		pairs[int(u[i]*64)*64+int(u[i+1]*64)]++
	}
	checkChi("pairs", chi(pairs, n/2), 64*64-1)

	// The moments of d = u - 1/2: E d^k is 0 for odd k and 2^-k/(k+1) for
	// even k; the bound is six standard errors, sqrt((E d^2k - (E d^k)^2)/n).
	moment := func(k int) float64 {
		if k%2 == 1 {
			return 0
		}
		return math.Pow(0.5, float64(k)) / float64(k+1)
	}
	var m [5]float64
	for _, v := range u {
		d := v - 0.5
		m[1] += d
		m[2] += d * d
		m[3] += d * d * d
		m[4] += d * d * d * d
	}
	for k := 1; k <= 4; k++ {
		want := moment(k)
		se := math.Sqrt((moment(2*k) - want*want) / n)
		if got := m[k] / n; math.Abs(got-want) > 6*se {
			t.Errorf("moment %d: %v, want %v ± %v", k, got, want, 6*se)
		}
	}

	// Every one of the 64 bits of the hash is set half of the time.
	s := elem.NewRandStream(3, 0)
	var ones [64]int
	for i := range uint64(n) {
		x := s.Bits(i)
		for b := range ones {
			ones[b] += int(x >> b & 1)
		}
	}
	for b, c := range ones {
		if math.Abs(float64(c)-n/2) > 6*math.Sqrt(n)/2 {
			t.Errorf("bit %d set %d times of %d", b, c, n)
		}
	}

	// Correlations: of values 1, 2 and a block apart, of seeds 1 and 2,
	// and of sub-streams 0 and 1 of one seed.
	corr := func(x, y []float64) float64 {
		var c float64
		for i := range x {
			c += (x[i] - 0.5) * (y[i] - 0.5)
		}
		return c / float64(len(x)) * 12
	}
	other, sub := fill(2, 0), fill(1, 1)
	for _, c := range []struct {
		name string
		x, y []float64
	}{
		{"lag 1", u[1:], u[:n-1]},
		{"lag 2", u[2:], u[:n-2]},
		{"lag 4096", u[4096:], u[:n-4096]},
		{"seeds 1 and 2", u, other},
		{"sub-streams 0 and 1", u, sub},
	} {
		if r := corr(c.x, c.y); math.Abs(r) > 5/math.Sqrt(float64(len(c.x))) {
			t.Errorf("%s: correlation %v", c.name, r)
		}
	}
}
