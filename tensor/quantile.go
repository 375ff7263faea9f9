package tensor

import "math"

// QuantileMethods are the method= values of NumPy 1.24's percentile and
// quantile, each true when the method picks one of the sorted values
// (no interpolation: the result keeps the data's dtype).
var QuantileMethods = map[string]bool{
	"inverted_cdf": true, "averaged_inverted_cdf": false, "closest_observation": true,
	"interpolated_inverted_cdf": false, "hazen": false, "weibull": false, "linear": false,
	"median_unbiased": false, "normal_unbiased": false, "lower": true, "higher": true,
	"midpoint": false, "nearest": true,
}

// QuantileIndexes returns the ranks method interpolates between for
// percentile q (in [0, 100]) of n sorted values, and the weight of the
// upper, as NumPy 1.24's _quantile computes them ("" is linear). A method
// that picks a value returns it as lo (hi equal, weight 0).
func QuantileIndexes(method string, q float64, n int) (int, int, float64) {
	qq := q / 100
	nf := float64(n)
	pick := func(i float64) (int, int, float64) {
		k := max(0, min(int(i), n-1))
		return k, k, 0
	}
	// The discrete methods: NumPy's _discret_interpolation_to_boundaries.
	boundary := func(index float64, prev func(g, index float64) bool) (int, int, float64) {
		lo := math.Floor(index)
		if g := index - lo; !prev(g, index) {
			lo++
		}
		return pick(lo)
	}
	var v float64
	switch method {
	case "", "linear":
		return PercentileIndexes(q, n)
	case "lower":
		return pick(math.Floor((nf - 1) * qq))
	case "higher":
		return pick(math.Ceil((nf - 1) * qq))
	case "nearest":
		return pick(math.RoundToEven((nf - 1) * qq))
	case "inverted_cdf":
		return boundary(nf*qq-1, func(g, _ float64) bool { return g == 0 })
	case "closest_observation":
		return boundary(nf*qq-1-0.5, func(g, index float64) bool { return g == 0 && math.Mod(math.Floor(index), 2) == 0 })
	case "midpoint":
		v = 0.5 * (math.Floor((nf-1)*qq) + math.Ceil((nf-1)*qq))
	case "averaged_inverted_cdf":
		v = nf*qq - 1
	case "interpolated_inverted_cdf":
		v = virtualIndex(nf, qq, 0, 1)
	case "hazen":
		v = virtualIndex(nf, qq, 0.5, 0.5)
	case "weibull":
		v = virtualIndex(nf, qq, 0, 0)
	case "median_unbiased":
		v = virtualIndex(nf, qq, 1/3.0, 1/3.0)
	case "normal_unbiased":
		v = virtualIndex(nf, qq, 3/8.0, 3/8.0)
	}
	// NumPy's _get_indexes: past the last value both ranks are the last
	// (the weight taken from index -1), before the first both the first.
	var lo, hi int
	var prev float64
	switch {
	case v >= nf-1:
		lo, hi, prev = n-1, n-1, -1
	case v < 0:
		lo, hi, prev = 0, 0, 0
	default:
		prev = math.Floor(v)
		lo, hi = int(prev), int(prev)+1
	}
	g := v - prev
	switch method {
	case "midpoint":
		g = 0.5
		if math.Mod(v, 1) == 0 {
			g = 0
		}
	case "averaged_inverted_cdf":
		g = 1
		if v-prev == 0 {
			g = 0.5
		}
	}
	return lo, hi, g
}

// virtualIndex is NumPy's _compute_virtual_index.
func virtualIndex(n, q, alpha, beta float64) float64 {
	return n*q + (alpha + q*(1-alpha-beta)) - 1
}
