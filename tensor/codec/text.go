package codec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"marsfs/tensor"
)

// Text rendering in the manner of NumPy's str(ndarray) with the default print
// options: nested brackets, elements aligned in columns of one width, rows
// wrapped at 75 characters, and arrays of more than 1000 elements summarized
// with "..." keeping 3 items at each end of every axis.
const (
	textLineWidth = 75
	textThreshold = 1000
	textEdgeItems = 3
	textPrecision = 8 // most digits after the decimal point
)

// FormatText renders a as NumPy prints it: str(ndarray) with NumPy's default
// print options. A 0-d array prints as its scalar, an empty one as "[]".
func FormatText(a *tensor.Array) string {
	if err := a.Check(); err != nil {
		return "<" + err.Error() + ">"
	}
	if len(a.Shape) == 0 {
		return formatScalar(a)
	}
	if a.Len() == 0 {
		return "[]"
	}
	shown := a
	if a.Len() > textThreshold {
		whole := &tensor.TiledTensor{Shape: a.Shape, DType: a.DType, Chunks: make([][]int, len(a.Shape)), Keys: []uint64{0}}
		for ax, n := range a.Shape {
			whole.Chunks[ax] = []int{n}
		}
		var err error
		if shown, err = tensor.GatherIndex(whole, TextIndex(a.Shape), func(int) (*tensor.Array, error) { return a, nil }); err != nil {
			return "<" + err.Error() + ">"
		}
	}
	return FormatTextShown(a.Shape, shown)
}

// TextIndex returns, for each axis of an array of the given shape, the
// indices its text shows: all of them, or when the array has more than 1000
// elements the first 3 and the last 3 of each axis longer than 6. Gathering
// just those (GatherIndex) and rendering them with FormatTextShown prints a
// tensor of any size without fetching it whole.
func TextIndex(shape []int) [][]int {
	summarize := tensor.NumElements(shape) > textThreshold
	sel := make([][]int, len(shape))
	for ax, n := range shape {
		if summarize && n > 2*textEdgeItems {
			for i := range textEdgeItems {
				sel[ax] = append(sel[ax], i)
			}
			for i := n - textEdgeItems; i < n; i++ {
				sel[ax] = append(sel[ax], i)
			}
			continue
		}
		sel[ax] = make([]int, n)
		for i := range n {
			sel[ax][i] = i
		}
	}
	return sel
}

// FormatTextShown is FormatText of an array of the given shape of which only
// the elements TextIndex(shape) selects are at hand, gathered in shown.
func FormatTextShown(shape []int, shown *tensor.Array) string {
	if err := shown.Check(); err != nil {
		return "<" + err.Error() + ">"
	}
	if len(shape) == 0 {
		return formatScalar(shown)
	}
	if tensor.NumElements(shape) == 0 {
		return "[]"
	}
	sel := TextIndex(shape)
	for ax := range shape {
		if len(shown.Shape) != len(shape) || shown.Shape[ax] != len(sel[ax]) {
			return fmt.Sprintf("<text of shape %v needs the shown elements in shape %v, not %v>", shape, selShape(sel), shown.Shape)
		}
	}
	p := &printer{a: shown, shape: shape, strides: tensor.ElemStrides(shown.Shape), summarize: tensor.NumElements(shape) > textThreshold}
	all := make([]int, shown.Len())
	for i := range all {
		all[i] = i
	}
	p.format = newElemFormat(shown, all)
	return p.recurse(nil, " ", textLineWidth)
}

func selShape(sel [][]int) []int {
	sh := make([]int, len(sel))
	for ax, s := range sel {
		sh[ax] = len(s)
	}
	return sh
}

// formatScalar renders a 0-d array as NumPy renders the scalar it holds:
// floats as the shortest string that reads back the same, positional between
// 1e-4 and 1e16 ("0.5", "1.0") and scientific outside ("1e-05").
func formatScalar(a *tensor.Array) string {
	switch a.DType {
	case tensor.Bool:
		if a.Data[0] != 0 {
			return "True"
		}
		return "False"
	}
	if a.DType.IsInteger() {
		return intText(a, 0)
	}
	v, bits := a.Float64At(0), floatBits(a.DType)
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	if abs := math.Abs(v); abs == 0 || abs >= 1e-4 && abs < 1e16 {
		s := shortest(v, 'f', bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return shortest(v, 'e', bits)
}

func floatBits(dt tensor.DType) int {
	switch dt {
	case tensor.Float16:
		return 16
	case tensor.Float32:
		return 32
	}
	return 64
}

// shortest formats v ('f' or 'e') with the fewest digits that read back
// as the same number of bits bits, as strconv does for 32 and 64 and as
// NumPy does for float16 too.
func shortest(v float64, format byte, bits int) string {
	if bits != 16 {
		return strconv.FormatFloat(v, format, -1, bits)
	}
	h := tensor.HalfFromFloat64(v)
	for p := 0; ; p++ {
		e := strconv.FormatFloat(v, 'e', p, 64)
		back, _ := strconv.ParseFloat(e, 64)
		if tensor.HalfFromFloat64(back) != h && p < 17 {
			continue
		}
		if format == 'e' {
			return e
		}
		// Those p+1 significant digits in positional notation, zeros
		// after them down to the units, as strconv's shortest 'f' does.
		mant, ex, _ := strings.Cut(e, "e")
		exp, _ := strconv.Atoi(ex)
		if exp >= p {
			sign := ""
			if strings.HasPrefix(mant, "-") {
				sign, mant = "-", mant[1:]
			}
			return sign + strings.Replace(mant, ".", "", 1) + strings.Repeat("0", exp-p)
		}
		return strconv.FormatFloat(v, 'f', p-exp, 64)
	}
}

// intText renders element i of an integer array.
func intText(a *tensor.Array, i int) string {
	if a.DType == tensor.Uint64 {
		return strconv.FormatUint(a.Uint64s()[i], 10)
	}
	return strconv.FormatInt(intAt(a, i), 10)
}

// A printer renders an array of shape from the elements of it that the text
// shows, gathered in a (see TextIndex).
type printer struct {
	a         *tensor.Array
	shape     []int
	strides   []int // a's
	summarize bool
	format    func(i int) string // renders a's element i
}

// items returns the indices shown along an axis of length n.
func (p *printer) items(n int) (lead, trail int, summary bool) {
	if p.summarize && n > 2*textEdgeItems {
		return textEdgeItems, textEdgeItems, true
	}
	return 0, n, false
}

// recurse renders the sub-array that index selects (one index for each of
// the leading axes) with NumPy's layout: elements of the last axis separated
// by a space and wrapped to width, other axes separated by newlines (one more
// for each further axis), each line but the first indented by hang.
func (p *printer) recurse(index []int, hang string, width int) string {
	axis := len(index)
	if axis == len(p.shape) {
		off := 0
		for ax, i := range index {
			// Index i of the axis is element i of a's axis, or, past an
			// ellipsis, i less the elements left out.
			if n := p.shape[ax]; p.a.Shape[ax] < n && i >= textEdgeItems {
				i -= n - p.a.Shape[ax]
			}
			off += i * p.strides[ax]
		}
		return p.format(off)
	}
	nextHang := hang + " "
	nextWidth := width - 1 // room for the closing bracket
	n := p.shape[axis]
	lead, trail, summary := p.items(n)
	sub := func(i int) string {
		return p.recurse(append(index[:axis:axis], i), nextHang, nextWidth)
	}
	var s strings.Builder
	if axis == len(p.shape)-1 {
		elemWidth := width - 1 // the separator " " has no visible part; "]" has one
		line := hang
		add := func(word string) {
			// Wrap unless the line holds nothing but its indent.
			if len(line)+len(word) > elemWidth && len(line) > len(hang) {
				s.WriteString(strings.TrimRight(line, " "))
				s.WriteByte('\n')
				line = hang
			}
			line += word
		}
		for i := 0; i < lead; i++ {
			add(sub(i))
			line += " "
		}
		if summary {
			add("...")
			line += " "
		}
		for i := n - trail; i < n-1; i++ {
			add(sub(i))
			line += " "
		}
		add(sub(n - 1))
		s.WriteString(line)
	} else {
		sep := strings.Repeat("\n", len(p.shape)-axis-1)
		for i := 0; i < lead; i++ {
			s.WriteString(hang + sub(i) + sep)
		}
		if summary {
			s.WriteString(hang + "..." + sep)
		}
		for i := n - trail; i < n-1; i++ {
			s.WriteString(hang + sub(i) + sep)
		}
		s.WriteString(hang + sub(n-1))
	}
	return "[" + s.String()[len(hang):] + "]"
}

// newElemFormat returns the element formatter NumPy would choose for the
// shown elements of a: one width for all, and for floats one notation.
func newElemFormat(a *tensor.Array, shown []int) func(int) string {
	switch a.DType {
	case tensor.Bool:
		return func(i int) string {
			if a.Data[i] != 0 {
				return " True"
			}
			return "False"
		}
	}
	if a.DType.IsInteger() {
		w := 0
		for _, i := range shown {
			w = max(w, len(intText(a, i)))
		}
		return func(i int) string { return fmt.Sprintf("%*s", w, intText(a, i)) }
	}
	f := newFloatFormat(a, shown)
	return func(i int) string { return f.format(a.Float64At(i)) }
}

// intAt is element i of an integer array other than uint64.
func intAt(a *tensor.Array, i int) int64 {
	switch a.DType {
	case tensor.Int8:
		return int64(a.Int8s()[i])
	case tensor.Int16:
		return int64(a.Int16s()[i])
	case tensor.Int32:
		return int64(a.Int32s()[i])
	case tensor.Uint8:
		return int64(a.Data[i])
	case tensor.Uint16:
		return int64(a.Uint16s()[i])
	case tensor.Uint32:
		return int64(a.Uint32s()[i])
	}
	return a.Int64s()[i]
}

// floatFormat is NumPy's FloatingFormat in its default mode ("maxprec"):
// every element with the fewest digits that identify it, at most 8 after the
// point, in columns padded to the widest integer and fraction parts.
type floatFormat struct {
	bits     int
	exp      bool // scientific notation
	padLeft  int  // width of the integer part (with its sign)
	padRight int  // width of the fraction part (scientific: and the exponent)
	digits   int  // scientific: digits after the point
	expSize  int  // scientific: digits of the exponent
}

func newFloatFormat(a *tensor.Array, shown []int) *floatFormat {
	f := &floatFormat{bits: floatBits(a.DType)}
	var finite []float64
	hasNonFinite, negInf := false, false
	maxAbs, minAbs := 0.0, math.Inf(1)
	for _, i := range shown {
		v := a.Float64At(i)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			hasNonFinite = true
			negInf = negInf || math.IsInf(v, -1)
			continue
		}
		finite = append(finite, v)
		if v != 0 {
			maxAbs, minAbs = max(maxAbs, math.Abs(v)), min(minAbs, math.Abs(v))
		}
	}
	if maxAbs > 0 {
		// NumPy compares in the array's own precision.
		switch f.bits {
		case 16:
			half := func(x float64) float64 { return float64(tensor.HalfFromFloat64(x).Float32()) }
			f.exp = minAbs < half(0.0001) || half(maxAbs/minAbs) > 1000
		case 32:
			mx, mn := float32(maxAbs), float32(minAbs)
			f.exp = mx >= 1e8 || mn < float32(0.0001) || mx/mn > 1000
		default:
			f.exp = maxAbs >= 1e8 || minAbs < 0.0001 || maxAbs/minAbs > 1000
		}
	}
	switch {
	case len(finite) == 0:
	case f.exp:
		expLen := 0
		for _, v := range finite {
			ip, fp, ex := f.sci(v)
			f.padLeft = max(f.padLeft, len(ip))
			f.digits = max(f.digits, len(fp))
			expLen = max(expLen, len(ex))
		}
		f.expSize = expLen - 1
		f.padRight = f.expSize + 2 + f.digits
	default:
		for _, v := range finite {
			ip, fp := f.pos(v)
			f.padLeft = max(f.padLeft, len(ip))
			f.padRight = max(f.padRight, len(fp))
		}
	}
	if hasNonFinite {
		infLen := 3
		if negInf {
			infLen++
		}
		f.padLeft = max(f.padLeft, 3-(f.padRight+1), infLen-(f.padRight+1))
	}
	return f
}

// pos returns the integer and fraction digits of v in positional notation:
// the shortest fraction that reads back as v, rounded to 8 decimals if
// longer, after the exact integer digits.
func (f *floatFormat) pos(v float64) (string, string) {
	s := shortest(v, 'f', f.bits)
	ip, fp, _ := strings.Cut(s, ".")
	if fp == "" {
		// NumPy prints every digit down to the units from the exact value:
		// float32(88457152) shows as 88457152., not as its shortest form
		// 88457150.
		ip = strconv.FormatFloat(v, 'f', 0, 64)
	}
	if len(fp) > textPrecision {
		s = strconv.FormatFloat(v, 'f', textPrecision, 64)
		ip, fp, _ = strings.Cut(s, ".")
		fp = strings.TrimRight(fp, "0")
	}
	return ip, fp
}

// sci returns the mantissa's integer and fraction digits and the signed
// exponent ("-10", "+00") of v in scientific notation.
func (f *floatFormat) sci(v float64) (string, string, string) {
	s := shortest(v, 'e', f.bits)
	mant, ex, _ := strings.Cut(s, "e")
	ip, fp, _ := strings.Cut(mant, ".")
	if len(fp) > textPrecision {
		s = strconv.FormatFloat(v, 'e', textPrecision, 64)
		mant, ex, _ = strings.Cut(s, "e")
		ip, fp, _ = strings.Cut(mant, ".")
		fp = strings.TrimRight(fp, "0")
	}
	return ip, fp, ex
}

func (f *floatFormat) format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s := "nan"
		if math.IsInf(v, 1) {
			s = "inf"
		} else if math.IsInf(v, -1) {
			s = "-inf"
		}
		return pad(s, f.padLeft+f.padRight+1)
	}
	if f.exp {
		// Every element gets the same number of digits; NumPy takes those
		// beyond an element's shortest form from its exact binary value, so
		// a float32 shows its own digits there, not zeros.
		mant, ex, _ := strings.Cut(strconv.FormatFloat(v, 'e', f.digits, 64), "e")
		ip, fp, _ := strings.Cut(mant, ".")
		sign, digits := ex[:1], ex[1:]
		digits = strings.Repeat("0", max(f.expSize-len(digits), 0)) + digits
		return pad(ip, f.padLeft) + "." + fp + "e" + sign + digits
	}
	ip, fp := f.pos(v)
	return pad(ip, f.padLeft) + "." + fp + strings.Repeat(" ", f.padRight-len(fp))
}

// pad right-aligns s in a field of width w.
func pad(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return strings.Repeat(" ", w-len(s)) + s
}
