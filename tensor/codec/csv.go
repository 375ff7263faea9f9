package codec

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"

	"marsfs/tensor"
)

// WriteCSV writes a 1-D array as one column (one value a line) and a 2-D
// array as rows of comma-separated values, each line ending in "\n", with no
// header. Floats are written in the shortest form that reads back as the same
// value ('g': "0.1", "1e-05"), with NaN and infinities as nan, inf and -inf;
// ints in decimal; bools as True and False. numpy.loadtxt, numpy.genfromtxt
// and pandas.read_csv read all of these back (pandas.to_csv writes bools the
// same way). Arrays of other ranks are refused.
func WriteCSV(w io.Writer, a *tensor.Array) error {
	if err := a.Check(); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	rows, cols := 0, 0
	switch len(a.Shape) {
	case 1:
		rows, cols = a.Shape[0], 1
	case 2:
		rows, cols = a.Shape[0], a.Shape[1]
	default:
		return fmt.Errorf("csv: only 1-D and 2-D arrays have a CSV form, not %d-D (shape %v)", len(a.Shape), a.Shape)
	}
	bw := bufio.NewWriter(w)
	buf := make([]byte, 0, 32)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			if c > 0 {
				bw.WriteByte(',')
			}
			buf = appendCSVValue(buf[:0], a, r*cols+c)
			bw.Write(buf)
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func appendCSVValue(b []byte, a *tensor.Array, i int) []byte {
	switch a.DType {
	case tensor.Bool:
		if a.Data[i] != 0 {
			return append(b, "True"...)
		}
		return append(b, "False"...)
	}
	if a.DType.IsInteger() {
		return append(b, intText(a, i)...)
	}
	v := a.Float64At(i)
	switch {
	case math.IsNaN(v):
		return append(b, "nan"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	if a.DType == tensor.Float16 {
		// The shortest digits that read back as the half, as 'g' gives.
		e := shortest(v, 'e', 16)
		w, _ := strconv.ParseFloat(e, 64)
		return strconv.AppendFloat(b, w, 'g', -1, 64)
	}
	return strconv.AppendFloat(b, v, 'g', -1, floatBits(a.DType))
}
