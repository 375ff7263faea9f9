package tensor

// vecRow returns a packed loop for the float64 arithmetic of an expr
// program, or nil when kind has none; ops on other dtypes, and other ops,
// run the elementwise kernels' loops.
func vecRow(kind string, ct, out DType) rowFn {
	if ct != Float64 || out != Float64 {
		return nil
	}
	var loop func(d, a, b []float64)
	switch kind {
	case OpAdd:
		loop = addF64
	case OpSubtract:
		loop = subF64
	case OpMultiply:
		loop = mulF64
	case OpDivide:
		loop = divF64
	default:
		return nil
	}
	return func(dst []byte, in [][]byte) error {
		d := view[float64](dst)
		// Slicing checks the lengths the loops rely on.
		loop(d, view[float64](in[0])[:len(d)], view[float64](in[1])[:len(d)])
		return nil
	}
}
