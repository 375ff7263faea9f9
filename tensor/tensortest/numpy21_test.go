package tensortest

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// numpySeeds exercise every function of issue 21 on creators alone, so
// that FuzzParseTile starts from them; TestNumpySeeds runs each, unfused
// and fused. Their values are checked against NumPy by the catalogue
// (testdata/catalogue/numpy.txt); here they must parse, tile in stages
// and compute.
var numpySeeds = []string{
	"x = arange(12, chunks=5) / 3.0\ny = cbrt(x) + log2(x + 1) + log10(x + 1) + exp2(x) + arctan(x)\n",
	"x = linspace(-1, 1, 9, chunks=4)\ny = arcsin(x) + arccos(x) + arctan2(x, 0.5) + hypot(x, x)\n",
	"x = arange(6, chunks=4) - 2.5\ny = fmax(x, 0) + fmin(x, 0) + isnan(x) + isinf(x / 0) + isfinite(x)\n",
	"x = arange(6, chunks=4) / (arange(6, chunks=4) - 2)\ny = nan_to_num(x) + isclose(x, x) + allclose(x, x + 1e-12)\n",
	"x = arange(20, chunks=3).reshape(4, 5) % 7\ny = ptp(x, axis=0) + average(x, axis=1, weights=arange(5, chunks=2) + 1).sum()\n",
	"x = (arange(30, chunks=7) * 37 % 11).reshape(3, 10)\ny = cov(x) + corrcoef(x)\n",
	"x = arange(12, chunks=5) / (arange(12, chunks=5) % 4)\ny = nanvar(x) + nanstd(x) + nanmedian(x) + nanpercentile(x, 30)\n",
	"x = (arange(12, chunks=5) * 5 % 7).reshape(3, 4)\ny = diff(x, axis=0).sum() + quantile(x, 0.5)\n",
	"x = arange(12, chunks=5).reshape(3, 4)\ny = flip(x) + roll(x, 2) + triu(x) + tril(x, -1)\n",
	"x = arange(16, chunks=5).reshape(4, 4)\ny = diag(diag(x)) + trace(x) + diag(x, 1).sum()\n",
	"x = arange(4, chunks=3)\ny = vstack((x, x)).sum() + hstack((x, x)).sum() + column_stack((x, x)).sum() + repeat(x, 2).sum() + tile(x, 3).sum()\n",
	"x = arange(10, chunks=3) * 1.5\ny = x[x > 4]\n",
	"x = arange(12, chunks=5).reshape(4, 3)\ny = x[x[:, 0] > 2]\n",
	"x = arange(12, chunks=5).reshape(4, 3) % 5\nr, c = nonzero(x)\ny = argwhere(x) \n",
	"x = arange(12, chunks=5) % 3\ny = flatnonzero(x) + compress(x > 0, x) + extract(x > 1, x).sum()\n",
	"x = arange(10, chunks=4) / 3.0\ny = x[x > 1]\nz = y[y < 2].sum()\n",
	"a = (arange(16, chunks=5) % 7).reshape(4, 4)\nw, v = linalg.eigh(a + a.T)\nx, r, k, s = linalg.lstsq((arange(24, chunks=5) * 7 % 11).reshape(8, 3) + 0.5, arange(8, chunks=3) * 1.0)\ny = w.sum() + v.sum() + x.sum() + r.sum() + k + s.sum()\n",
	"x = arange(30, chunks=7) * 1.5\ni = (arange(12, chunks=5) * 7) % 30 - 15\ny = x[i] + take(x.reshape(5, 6), i % 6, axis=1).sum(axis=0)[:12] + x[argsort(-x)][:12]\n",
	"a = arange(20, chunks=3) * 0.5\nv = arange(12, chunks=5) - 2.5\ny = searchsorted(a, v) + searchsorted(a, v, side='right') + digitize(v, a[:7]) + isin(v, a)\n",
	"a = array([[1, 2, 3], [4, 5, 6]], chunks=1)\ny = a[[1, 0]][:, [True, False, True]].sum() + take(a, [2, 0], axis=1).sum() + isin(a, [2, 5]).sum()\n",
	"a = arange(24, chunks=5).reshape(2, 3, 4) * 0.5\nb = arange(40, chunks=7).reshape(2, 4, 5)\ny = einsum('bij,bjk->bik', a, b).sum() + einsum('ij,jk', a[0], b[1]).sum() + einsum('ii', a[0, :, :3])\n",
}

func TestNumpySeeds(t *testing.T) {
	for _, src := range numpySeeds {
		for _, o := range catOptims {
			g, err := lang.ParseText(src, nil)
			if err != nil {
				t.Errorf("%q: %v", src, err)
				continue
			}
			if _, err := ComputeGraph(context.Background(), g, nil, nil, o.opt, nil); err != nil {
				t.Errorf("%q%s: %v", src, o.name, err)
			}
		}
	}
}

// TestMaskLarge is the process-level check of a mask over 10⁸ uniform
// values (800 MB) through the reference executor, fused: x[x > 0.5].sum()
// (rewritten to one pass, where(x > 0.5, x, 0).sum()), and the mask
// itself in its two stages: (x[x > 0.5] + 0).sum() and the number of
// values it keeps. The sums are checked against each other and against
// the closed form, about n * 3/8 (the mean of U(0.5, 1) is 3/4, half the
// values pass), within 6 standard deviations; the count against
// count_nonzero.
func TestMaskLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("10⁸ elements: seconds and 1.6 GB")
	}
	const n = 100_000_000
	src := "x = rand(100000000, chunks=10000000, seed=7)\ny = x[x > 0.5].sum()\nw = (x[x > 0.5] + 0).sum()\n" +
		"k = count_nonzero(x > 0.5)\nc = x[x > 0.5].astype(bool).sum()\nfetch y, k, w, c\n"
	g, err := lang.ParseText(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	y, k, w, c := got["y"].Float64s()[0], got["k"].Int64s()[0], got["w"].Float64s()[0], got["c"].Int64s()[0]
	t.Logf("x[x > 0.5].sum() of 10⁸ = %.6f (%d selected) in %v", y, k, time.Since(start))
	if math.Abs(y-w) > 1e-9*w {
		t.Errorf("rewritten sum %.9g, staged mask's sum %.9g", y, w)
	}
	if c != k {
		t.Errorf("the mask kept %d values, count_nonzero says %d", c, k)
	}
	// Var of x·[x > 0.5] for x ~ U(0, 1): E = 3/8, E[x²; x > 0.5] = 7/24.
	sd := math.Sqrt(n * (7.0/24 - 9.0/64))
	if math.Abs(y-n*3.0/8) > 6*sd {
		t.Errorf("sum %.1f, want about %.1f ± %.1f", y, n*3.0/8, 6*sd)
	}
	if math.Abs(float64(k)-n/2) > 6*math.Sqrt(n/4) {
		t.Errorf("%d selected, want about %d", k, n/2)
	}
}

// TestTakeReadsTouchedBlocks checks the rule of x[i]: a block of indices
// that fall in one block of x reads that block alone; an index out of
// range fails the graph with NumPy's message.
func TestTakeReadsTouchedBlocks(t *testing.T) {
	g, err := lang.ParseText("x = arange(100, chunks=10) * 2\ni = arange(20, chunks=5) + 30\ny = x[i]\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	takes := 0
	got, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, func(cg *chunk.Graph) {
		for _, op := range cg.Ops {
			if op.Kind != chunk.KindTake {
				continue
			}
			takes++
			if len(op.Inputs) != 2 {
				t.Errorf("take op %d reads %d blocks of x, want 1", op.Key, len(op.Inputs)-1)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if takes != 4 {
		t.Errorf("%d take ops, want 4 (one a block of indices)", takes)
	}
	for k, v := range got["y"].Int64s() {
		if want := int64(2 * (30 + k)); v != want {
			t.Fatalf("y[%d] = %d, want %d", k, v, want)
		}
	}
	g, err = lang.ParseText("x = arange(6, chunks=4)\ny = x[arange(5, chunks=2) + 3]\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "index 6 is out of bounds for axis 0 with size 6") {
		t.Errorf("an index out of range: %v", err)
	}
}

// TestTakeShuffle checks take's shuffle on indices spread over all of x
// (a permutation): a piece a touched pair of blocks, each reduce op reading
// pieces only, and the values right.
func TestTakeShuffle(t *testing.T) {
	g, err := lang.ParseText("x = arange(40, chunks=10) * 3\ni = (arange(40, chunks=10) * 7) % 40\ny = x[i]\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	got, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, func(cg *chunk.Graph) {
		for _, op := range cg.Ops {
			kinds[string(op.Kind)]++
			if op.Kind != chunk.KindTake {
				continue
			}
			for _, in := range op.Inputs[1:] {
				if k := cg.Ops[in].Kind; k != "take.piece" {
					t.Errorf("take op %d reads a %s, not a piece", op.Key, k)
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if kinds["take.piece"] != 16 || kinds["take"] != 4 {
		t.Errorf("%d pieces and %d take ops, want 16 and 4", kinds["take.piece"], kinds["take"])
	}
	for k, v := range got["y"].Int64s() {
		if want := int64(3 * (k * 7 % 40)); v != want {
			t.Fatalf("y[%d] = %d, want %d", k, v, want)
		}
	}
}

// TestSampleSort sorts and argsorts 1-D arrays of many blocks by the
// sample sort: against a stable reference sort (NaNs last), with many
// equal values (which PSRS's bound must survive: ties split by index),
// NaNs and infinities; every merge within its bound, every element moved
// once (p merges, each reading a range of every sorted block: no op a
// piece).
func TestSampleSort(t *testing.T) {
	defer func(old int) { tile.SampleSortMin = old }(tile.SampleSortMin)
	tile.SampleSortMin = 4
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		n, chunk int
		values   func(i int) float64
	}{
		{1000, 37, func(int) float64 { return r.NormFloat64() }},
		{2000, 100, func(int) float64 { return float64(r.IntN(3)) }}, // ties
		{500, 7, func(i int) float64 {
			switch i % 11 {
			case 0:
				return math.NaN()
			case 1:
				return math.Inf(-1)
			}
			return float64(r.IntN(50)) - 25
		}},
		{64, 1, func(int) float64 { return 7 }}, // one value, one element a block
	} {
		a := tensor.NewArray(tensor.Float64, []int{tc.n})
		for i := range tc.n {
			a.Float64s()[i] = tc.values(i)
		}
		c := newShapeCase()
		x := c.input(a, [][]int{spec.RegularChunks(tc.n, tc.chunk)})
		s := c.add(&spec.Node{Op: tensor.OpSort, Inputs: []*spec.Node{x}, Shape: []int{tc.n}, DType: tensor.Float64})
		as := c.add(&spec.Node{Op: tensor.OpArgsort, Inputs: []*spec.Node{x}, Shape: []int{tc.n}, DType: tensor.Int64})
		outs, cg := c.runOutputs(t, s, as)
		p := (tc.n + tc.chunk - 1) / tc.chunk
		kinds := map[string]int{}
		for _, op := range cg.Ops {
			kinds[string(op.Kind)]++
		}
		// Two sorts (values and indices), each p local sorts and at
		// most p merges (a destination that received nothing has none).
		if kinds["sort.local"] != 2*p || kinds["ssort.merge"] > 2*p || kinds["ssort.merge"] == 0 || kinds["sort.merge"] != 0 {
			t.Errorf("n %d p %d: %d local sorts, %d merges, %d network merges", tc.n, p, kinds["sort.local"], kinds["ssort.merge"], kinds["sort.merge"])
		}
		ranged := 0
		for _, op := range cg.Ops {
			if op.Kind == chunk.KindSsortMerge {
				ranged += len(op.RangeList())
			}
		}
		if ranged == 0 || ranged > 2*p*p {
			t.Errorf("n %d p %d: %d pieces read as ranges", tc.n, p, ranged)
		}
		want := wantArgsort(a)
		for i, w := range want {
			if got := outs[1].Int64s()[i]; got != w {
				t.Fatalf("n %d: argsort[%d] = %d, want %d", tc.n, i, got, w)
			}
			if compareNumPy(outs[0].Float64s()[i], a.Float64s()[w]) != 0 {
				t.Fatalf("n %d: sort[%d] = %v, want %v", tc.n, i, outs[0].Float64s()[i], a.Float64s()[w])
			}
		}
	}
}

// TestTakeNegativeFromEnd checks negative indices, counted from the end by
// the kernels, on an array whose length only the data gives.
func TestTakeNegativeFromEnd(t *testing.T) {
	g, err := lang.ParseText("x = arange(30, chunks=7)\ny = x[x % 3 == 0]\nz = y[arange(-3, 3, chunks=2)]\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{21, 24, 27, 0, 3, 6}
	for i, w := range want {
		if v := got["z"].Int64s()[i]; v != w {
			t.Fatalf("z = %v, want %v", got["z"].Int64s(), want)
		}
	}
	g, _ = lang.ParseText("x = arange(30, chunks=7)\ny = x[x % 3 == 0]\nz = y[arange(-11, 0, chunks=4)]\n", nil)
	_, err = ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, nil)
	if err == nil || !strings.Contains(err.Error(), "index -11 is out of bounds for axis 0 with size 10") {
		t.Errorf("an index out of range from the end: %v", err)
	}
}

// TestMaskReductionsStoreNoMask: max, min and mean of x[x > 0.5] over a
// drawn x take a count besides the masked reduction; each is fused into a
// pass of its own, so that no chunk of x or of the mask is made to be read
// by both (an op that draws is read by one op, its reduction's combine),
// and the results are NumPy's over the values the mask keeps.
func TestMaskReductionsStoreNoMask(t *testing.T) {
	parse := func(src string) *spec.Graph {
		g, err := lang.ParseText(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	ref, err := ComputeGraph(context.Background(), parse("x = rand(10000, chunks=1000, seed=3)\n"), nil, nil, fuse.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kept []float64
	for _, v := range ref["x"].Float64s() {
		if v > 0.5 {
			kept = append(kept, v)
		}
	}
	sum := 0.0
	for _, v := range kept {
		sum += v
	}
	want := map[string]float64{"max": slices.Max(kept), "min": slices.Min(kept), "mean": sum / float64(len(kept))}
	for _, red := range []string{"max", "min", "mean"} {
		g := parse("x = rand(10000, chunks=1000, seed=3)\nr = x[x > 0.5]." + red + "()\n")
		got, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{Fuse: true, FuseExpr: true}, func(cg *chunk.Graph) {
			readers := make([]int, len(cg.Ops))
			for _, op := range cg.Ops {
				for _, in := range op.Inputs {
					readers[in]++
				}
			}
			for _, op := range cg.Ops {
				if len(op.Inputs) == 0 && readers[op.Key] > 1 {
					t.Errorf("%s: op %d (%s) makes a chunk of x or of the mask read by %d ops", red, op.Key, op.Kind, readers[op.Key])
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if r := got["r"].Float64s()[0]; math.Abs(r-want[red]) > 1e-12*math.Abs(want[red]) {
			t.Errorf("x[x > 0.5].%s() = %v, want %v", red, r, want[red])
		}
	}
}
