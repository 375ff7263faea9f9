package syntax

import "iter"

// DidYouMean names the name of names nearest to name, as " (did you mean
// NAME?)", when one is a typo away: one edit for a name of up to four
// letters, two for a longer one. It says nothing otherwise.
func DidYouMean(name string, names iter.Seq[string]) string {
	limit := 1
	if len(name) > 4 {
		limit = 2
	}
	best, bestD := "", limit+1
	for cand := range names {
		if d := editDistance(name, cand, bestD+1); d < bestD || d == bestD && cand < best {
			best, bestD = cand, d
		}
	}
	if best == "" || bestD > limit {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance between a and b, or bound when
// it is at least bound.
func editDistance(a, b string, bound int) int {
	if d := len(a) - len(b); d >= bound || -d >= bound {
		return bound
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			low = min(low, cur[j])
		}
		if low >= bound {
			return bound
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], bound)
}
