package elem

// The float sums of mean, var and std over leading axes add rows of a
// float32 chunk, each widened to float64, into a row of accumulators:
// acc[j] += float64(row[j]) for one row after another. AddWideRows takes
// several rows at once and adds them in the same order, so that each
// accumulator sees the same additions as row by row (the same partials to
// the bit), but is loaded and stored once for all of them rather than once
// a row: for a climate chunk's time mean, half a megabyte of float64 sums
// read and written 24 times became 3 times.

// MaxWideRows is the most rows AddWideRows and AddSqDevWideRows take at
// once.
const MaxWideRows = 8

// AddWideRows sets acc[j] to (...((acc[j] + float64(rows[0][j])) +
// float64(rows[1][j])) + ...) for every j: the rows in order, each at
// least len(acc) long. It takes at most MaxWideRows rows.
func AddWideRows(acc []float64, rows [][]float32) {
	n := len(acc)
	if len(rows) == 0 || n == 0 {
		return
	}
	var ptrs [MaxWideRows]*float32
	for i, r := range rows {
		_ = r[n-1]
		ptrs[i] = &r[0]
	}
	j := 0
	if useWideAVX2 {
		if j = n &^ 15; j > 0 {
			addWideF32AVX2(&acc[0], &ptrs[0], len(rows), j)
		}
	}
	for ; j < n; j++ {
		s := acc[j]
		for _, r := range rows {
			s += float64(r[j])
		}
		acc[j] = s
	}
}

// AddSqDevWideRows sets m2[j] to m2[j] plus d*d for each row in order,
// with d = float64(row[j]) - mean[j], as one row at a time would: the
// second pass of a var's map. It takes at most MaxWideRows rows, each at
// least len(m2) long, and a mean as long.
func AddSqDevWideRows(m2, mean []float64, rows [][]float32) {
	n := len(m2)
	if len(rows) == 0 || n == 0 {
		return
	}
	mean = mean[:n]
	var ptrs [MaxWideRows]*float32
	for i, r := range rows {
		_ = r[n-1]
		ptrs[i] = &r[0]
	}
	j := 0
	if useWideAVX2 {
		if j = n &^ 15; j > 0 {
			sqDevWideF32AVX2(&m2[0], &mean[0], &ptrs[0], len(rows), j)
		}
	}
	for ; j < n; j++ {
		s, mu := m2[j], mean[j]
		for _, r := range rows {
			d := float64(r[j]) - mu
			s += d * d
		}
		m2[j] = s
	}
}
