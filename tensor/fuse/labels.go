package fuse

import (
	"slices"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// Labels finds, band of rows by band of rows, the reductions by label of
// a one-hot encoding, as Lloyd's k-means writes them:
//
//	d = (C*C).sum(axis=1) - 2*(X @ C.T)
//	oh = (d.argmin(axis=1)[:, None] == arange(k)).astype(float32)
//	oh.T @ X, oh.sum(axis=0)
//
// and gives each band one "label.sums" op (chunk.LabelSumsArgs) in place
// of the product, the scores, the argmin, the one-hot and the two
// reductions' map steps. Unfused, a band of r rows makes and stores three
// chunks of r x k values and one of r labels, reads x twice, and the
// product oh.T @ X reads every band's one-hot and x on the worker that
// sums them; fused, x is read once, nothing of r rows is stored, and only
// each band's sums and counts (k x d + k values) move.
//
// The rewrite matches the chunk ops, not the spec's text, so any spelling
// that tiles to them fuses: a score that is any elementwise program of the
// product and of broadcast or row-aligned chunks (the squared distance
// written out in full, a bias added, a scale), argmax for argmin,
// keepdims=True for the reshape, float64 for float32, any k and d. It
// asks that:
//   - the product is x @ w of a band of rows x (a matmul op of one pair,
//     its first view every column of some rows of a chunk) and a w whose
//     block is whole along d;
//   - the scores, if an expr op makes them, read the product whole and
//     no generator of the value shape (whose values would depend on the
//     rows);
//   - the labels are argmin or argmax along axis 1 of the (r, k) scores,
//     compared, as a column (r, 1), with one chunk of arange(0, L),
//     equal, then cast to a float dtype;
//   - every reader of the one-hot is a reduction over its rows that the
//     op makes: a sum along axis 0, or a matmul summing pairs oh.T @ x of
//     fused bands (read whole) with the same x as their product's;
//   - each intermediate is read by the next step alone and is no output.
//
// A matmul of such pairs becomes a "matmul.sum" of the bands' sums, read
// as ranges of the label.sums chunks, and a sum's readers read the counts
// likewise. Generators that only the fused ops read (the arange) are
// dropped. cg is not modified; keys are renumbered.
func Labels(cg *chunk.Graph) *chunk.Graph {
	n := len(cg.Ops)
	readers := make([][]int, n)
	for _, op := range cg.Ops {
		for _, in := range op.Inputs {
			if len(readers[in]) == 0 || readers[in][len(readers[in])-1] != op.Key {
				readers[in] = append(readers[in], op.Key)
			}
		}
	}
	isOutput := make([]bool, n)
	for _, o := range cg.Outputs {
		for _, k := range o.Keys {
			isOutput[k] = true
		}
	}
	// One candidate band a one-hot op.
	bands := map[int]*labelBand{}
	for _, op := range cg.Ops {
		if b := matchBand(cg, op, readers, isOutput); b != nil {
			bands[op.Key] = b
		}
	}
	// A product of pairs is taken only if every pair is a fused band's;
	// a band whose one-hot another product reads is not fused, which may
	// undo a product taken: repeat until nothing changes.
	for changed := true; changed && len(bands) > 0; {
		changed = false
		for key := range bands {
			for _, r := range readers[key] {
				if op := cg.Ops[r]; op.Kind == "matmul" && !pairsAllFused(cg, op, bands) {
					delete(bands, key)
					changed = true
					break
				}
			}
		}
	}
	if len(bands) == 0 {
		return cg
	}
	removed := make([]bool, n)
	needed := make([]bool, n) // read by a label.sums op
	for _, b := range bands {
		for _, in := range b.inputs {
			needed[in] = true
		}
		for _, k := range b.members {
			removed[k] = true
		}
		for _, r := range readers[b.oh] {
			if cg.Ops[r].Kind != "matmul" {
				removed[r] = true // the sum's map step
			}
		}
	}
	// Generators only removed ops read go too (keys are topological: a
	// reader has a greater key).
	for k := n - 1; k >= 0; k-- {
		op := cg.Ops[k]
		if removed[k] || needed[k] || isOutput[k] || len(readers[k]) == 0 || !chunk.GenKinds[op.Kind] {
			continue
		}
		if !slices.ContainsFunc(readers[k], func(r int) bool { return !removed[r] }) {
			removed[k] = true
		}
	}
	// The sums of each band's chunk, and the counts, as ranges.
	sumsRange := func(b *labelBand) chunk.Range {
		return chunk.Range{Off: 0, Shape: []int{b.labels, b.d}, DType: b.dt}
	}
	countsRange := func(b *labelBand, shape []int) chunk.Range {
		return chunk.Range{Off: b.labels * b.d, Shape: slices.Clone(shape), DType: b.dt}
	}
	// sumOf[k]: the band whose counts the removed sum map k was.
	sumOf := map[int]*labelBand{}
	for _, b := range bands {
		for _, r := range readers[b.oh] {
			if cg.Ops[r].Kind != "matmul" {
				sumOf[r] = b
			}
		}
	}
	out := &chunk.Graph{Ops: make([]*chunk.Op, 0, n)}
	newKey := make([]int32, n)
	var slab chunk.OpSlab
	var ints chunk.IntSlab
	for _, op := range cg.Ops {
		if b, ok := bands[op.Key]; ok {
			c := slab.Take()
			inputs := ints.Take(len(b.inputs))
			for i, in := range b.inputs {
				inputs[i] = int(newKey[in])
			}
			*c = chunk.Op{Key: len(out.Ops), Kind: chunk.KindLabelSums, Inputs: inputs,
				Shape: []int{b.labels*b.d + b.labels}, DType: b.dt, Node: op.Node, Args: b.args}
			newKey[op.Key] = int32(c.Key)
			out.Ops = append(out.Ops, c)
			continue
		}
		if removed[op.Key] {
			newKey[op.Key] = -1
			continue
		}
		if op.Kind == "matmul" && productOfBands(cg, op, bands) {
			c := slab.Take()
			*c = chunk.Op{Key: len(out.Ops), Kind: "matmul.sum", Shape: op.Shape, DType: op.DType, Node: op.Node}
			c.Inputs = ints.Take(len(op.Inputs) / 2)
			rs := make([]chunk.Range, len(c.Inputs))
			for p := range c.Inputs {
				b := bands[op.Inputs[2*p]]
				c.Inputs[p] = int(newKey[b.oh])
				rs[p] = sumsRange(b)
			}
			c.Ranges = &rs
			newKey[op.Key] = int32(c.Key)
			out.Ops = append(out.Ops, c)
			continue
		}
		ranged := slices.ContainsFunc(op.Inputs, func(in int) bool { return sumOf[in] != nil })
		var c *chunk.Op
		if !ranged && keepsKeys(op, len(out.Ops), newKey) {
			c = op
		} else {
			c = slab.Take()
			*c = *op
			c.Key = len(out.Ops)
			c.Inputs = ints.Take(len(op.Inputs))
			for i, in := range op.Inputs {
				if b := sumOf[in]; b != nil {
					c.Inputs[i] = int(newKey[b.oh])
				} else {
					c.Inputs[i] = int(newKey[in])
				}
			}
			if ranged {
				rs := make([]chunk.Range, len(op.Inputs))
				for i, in := range op.Inputs {
					if b := sumOf[in]; b != nil {
						rs[i] = countsRange(b, cg.Ops[in].Shape)
					}
				}
				c.Ranges = &rs
			}
		}
		newKey[op.Key] = int32(c.Key)
		out.Ops = append(out.Ops, c)
	}
	out.Outputs = remapOutputs(cg.Outputs, newKey)
	return out
}

// A labelBand is one band's ops that a label.sums op replaces.
type labelBand struct {
	oh      int             // the one-hot op, whose key the label.sums op takes
	x       int             // the chunk of the band of rows
	rows    chunk.BlockView // the band: rows [R0, R1) of x
	members []int           // the product, scores, argmin steps, reshape, one-hot
	inputs  []int           // the label.sums op's inputs: x, w, the scores' others
	args    chunk.LabelSumsArgs
	labels  int // L
	d       int
	dt      tensor.DType // the one-hot's, the sums'
}

// matchBand returns the band whose one-hot op is oh, or nil.
func matchBand(cg *chunk.Graph, oh *chunk.Op, readers [][]int, isOutput []bool) *labelBand {
	if oh.Kind != "expr" || len(oh.Inputs) != 2 || len(oh.Shape) != 2 || oh.Ranges != nil || isOutput[oh.Key] {
		return nil
	}
	if oh.DType != tensor.Float32 && oh.DType != tensor.Float64 {
		return nil
	}
	ea, ok := oh.Args.(chunk.ExprArgs)
	if !ok || len(ea.Offsets) != 0 {
		return nil
	}
	r, L := oh.Shape[0], oh.Shape[1]
	labIn, rangeIn, ok := oneHotProgram(ea.Code)
	if !ok {
		return nil
	}
	// The arange: one chunk, 0, 1, ..., L-1.
	ar := cg.Ops[oh.Inputs[rangeIn]]
	ga, ok := ar.Args.(chunk.GenArgs)
	if ar.Kind != tensor.OpArange || !ok || !slices.Equal(ar.Shape, []int{L}) || ga.Start != 0 || ga.Step != 1 ||
		len(ga.Offset) != 1 || ga.Offset[0] != 0 || !ar.DType.IsInteger() {
		return nil
	}
	single := func(k int) bool { return len(readers[k]) == 1 && !isOutput[k] && cg.Ops[k].Ranges == nil }
	// The labels: argmin.final (r) then a reshape to (r, 1), or one kept
	// (r, 1).
	lab := cg.Ops[oh.Inputs[labIn]]
	var members []int
	if lab.Kind == "reshape" {
		if !single(lab.Key) || len(lab.Inputs) != 1 || !slices.Equal(lab.Shape, []int{r, 1}) {
			return nil
		}
		members = append(members, lab.Key)
		lab = cg.Ops[lab.Inputs[0]]
		if !slices.Equal(lab.Shape, []int{r}) {
			return nil
		}
	} else if !slices.Equal(lab.Shape, []int{r, 1}) {
		return nil
	}
	fa, ok := lab.Args.(chunk.ReduceArgs)
	if !ok || !single(lab.Key) || len(lab.Inputs) != 1 || (lab.Kind != "argmin.final" && lab.Kind != "argmax.final") {
		return nil
	}
	mp := cg.Ops[lab.Inputs[0]]
	ma, ok := mp.Args.(chunk.ReduceArgs)
	if !ok || !single(mp.Key) || len(mp.Inputs) != 1 || mp.Kind != chunk.StepKind(fa.Op, chunk.StepMap) || ma.Flat || !slices.Equal(ma.Axes, []int{1}) {
		return nil
	}
	members = append(members, lab.Key, mp.Key)
	// The scores, then the product.
	sc := cg.Ops[mp.Inputs[0]]
	if len(sc.Shape) != 2 || sc.Shape[0] != r || !single(sc.Key) || (sc.DType != tensor.Float32 && sc.DType != tensor.Float64) {
		return nil
	}
	k := sc.Shape[1]
	prod := sc
	var score *chunk.ExprArgs
	var scoreIn []int
	var others []int // the scores' inputs other than the product, as op keys
	if sc.Kind == "expr" {
		sa, ok := sc.Args.(chunk.ExprArgs)
		if !ok || len(sa.Offsets) != 0 || !slices.Equal(sa.Shape, sc.Shape) || sc.Ranges != nil {
			return nil
		}
		members = append(members, sc.Key)
		pi := -1
		for i, in := range sc.Inputs {
			if cg.Ops[in].Kind == "matmul" && pi < 0 && single(in) {
				pi = i
			}
		}
		if pi < 0 {
			return nil
		}
		prod = cg.Ops[sc.Inputs[pi]]
		scoreIn = make([]int, len(sc.Inputs))
		for i, in := range sc.Inputs {
			switch {
			case i == pi:
				scoreIn[i] = -1
			default:
				if !scoreOperand(cg.Ops[in].Shape, r, k) {
					return nil
				}
				scoreIn[i] = 2 + len(others)
				others = append(others, in)
			}
		}
		sa.Shape = slices.Clone(sc.Shape)
		score = &sa
	}
	mm, ok := prod.Args.(chunk.MatmulArgs)
	if prod.Kind != "matmul" || !ok || len(mm.Blocks) != 0 || len(prod.Inputs) != 2 || len(mm.Views) != 2 || prod.Ranges != nil {
		return nil
	}
	if !slices.Equal(prod.Shape, []int{r, k}) || !single(prod.Key) {
		return nil
	}
	x, w := cg.Ops[prod.Inputs[0]], cg.Ops[prod.Inputs[1]]
	xv := mm.Views[0]
	// The band: rows [R0, R1) of x's chunk, every column (a product
	// whose output blocks are finer than x's chunks reads a view).
	if len(x.Shape) != 2 || xv.Trans || xv.R0 < 0 || xv.R1-xv.R0 != r || xv.R1 > x.Shape[0] || xv.C0 != 0 || xv.C1 != x.Shape[1] {
		return nil
	}
	if x.DType != prod.DType || w.DType != prod.DType || len(w.Shape) != 2 {
		return nil
	}
	d := x.Shape[1]
	if mm.Views[1].Shape()[0] != d || mm.Views[1].Shape()[1] != k {
		return nil
	}
	members = append(members, prod.Key, oh.Key)
	// Every reader of the one-hot is a reduction over its rows the op
	// makes.
	for _, rk := range readers[oh.Key] {
		rd := cg.Ops[rk]
		switch rd.Kind {
		case "matmul":
			if !pairsOf(cg, rd, oh.Key, x.Key, xv) {
				return nil
			}
		case "sum.map":
			ra, ok := rd.Args.(chunk.ReduceArgs)
			if !ok || len(rd.Inputs) != 1 || !slices.Equal(ra.Axes, []int{0}) || ra.Flat || rd.DType != oh.DType ||
				isOutput[rk] || !slices.Equal(rd.Shape, []int{1, L}) || rd.Ranges != nil {
				return nil
			}
			for _, rr := range readers[rk] {
				if cg.Ops[rr].Ranges != nil {
					return nil
				}
			}
		default:
			return nil
		}
	}
	inputs := append([]int{x.Key, w.Key}, others...)
	return &labelBand{oh: oh.Key, x: x.Key, rows: xv, members: members, inputs: inputs, labels: L, d: d, dt: oh.DType,
		args: chunk.LabelSumsArgs{R0: xv.R0, R1: xv.R1, W: mm.Views[1], Score: score, ScoreIn: scoreIn, ScoreDType: sc.DType,
			ArgMax: fa.Op == tensor.OpArgmax, Labels: L}}
}

// scoreOperand reports whether a chunk of shape s can be read, beside the
// product, by a score program over (r, k) run a block of rows at a time:
// a band of the same rows, (r, 1) or (r, k), cut as the rows are, or a
// chunk without rows, (k,), (1, k), a scalar, broadcast whole.
func scoreOperand(s []int, r, k int) bool {
	switch len(s) {
	case 0:
		return true
	case 1:
		return s[0] == 1 || s[0] == k
	case 2:
		return (s[0] == r || s[0] == 1) && (s[1] == 1 || s[1] == k)
	}
	return false
}

// oneHotProgram reports whether code is (a == b).astype(float) of its
// two inputs, loaded, broadcast or splat (a chunk of one element), and which input is the labels (the
// column) and which the arange; the caller checks their shapes.
func oneHotProgram(code []chunk.ExprInstr) (labels, rng int, ok bool) {
	if len(code) != 4 {
		return 0, 0, false
	}
	reg := map[int]int{} // register -> input
	for _, ins := range code[:2] {
		if ins.Op != chunk.ExprLoad && ins.Op != chunk.ExprBcast && ins.Op != chunk.ExprSplat || !ins.DType.IsInteger() {
			return 0, 0, false
		}
		reg[ins.Dst] = ins.Input
	}
	eq, cast := code[2], code[3]
	if eq.Op != chunk.ExprElem || eq.Kind != tensor.OpEqual || len(eq.Src) != 2 || cast.Op != chunk.ExprElem || cast.Kind != tensor.OpAstype ||
		len(cast.Src) != 1 || cast.Src[0] != eq.Dst || cast.Dst != -1 {
		return 0, 0, false
	}
	a, okA := reg[eq.Src[0]]
	b, okB := reg[eq.Src[1]]
	if !okA || !okB || a == b || len(reg) != 2 {
		return 0, 0, false
	}
	// Equality is symmetric; the caller tells the arange by its op.
	return a, b, true
}

// pairsOf reports whether matmul op pairs oh.T, read whole, with the
// rows of x the view rows holds, and every other pair likewise a whole
// one-hot, transposed, with a view of every column of a band.
func pairsOf(cg *chunk.Graph, op *chunk.Op, oh, x int, rows chunk.BlockView) bool {
	mm, ok := op.Args.(chunk.MatmulArgs)
	if !ok || len(mm.Blocks) != 0 || len(op.Inputs)%2 != 0 || len(mm.Views) != len(op.Inputs) || op.Ranges != nil {
		return false
	}
	found := false
	for p := 0; p < len(op.Inputs); p += 2 {
		a, b := cg.Ops[op.Inputs[p]], cg.Ops[op.Inputs[p+1]]
		va, vb := mm.Views[p], mm.Views[p+1]
		if len(a.Shape) != 2 || len(b.Shape) != 2 || !va.Trans || vb.Trans ||
			va.R0 != 0 || va.C0 != 0 || va.R1 != a.Shape[0] || va.C1 != a.Shape[1] ||
			vb.C0 != 0 || vb.C1 != b.Shape[1] || vb.R1-vb.R0 != a.Shape[0] {
			return false
		}
		if a.Key == oh {
			if b.Key != x || vb.R0 != rows.R0 || vb.R1 != rows.R1 {
				return false
			}
			found = true
		}
	}
	return found
}

// pairsAllFused reports whether every pair of matmul op is a fused
// band's (oh.T, x).
func pairsAllFused(cg *chunk.Graph, op *chunk.Op, bands map[int]*labelBand) bool {
	if len(op.Inputs)%2 != 0 {
		return false
	}
	for p := 0; p < len(op.Inputs); p += 2 {
		b, ok := bands[op.Inputs[p]]
		if !ok || b.x != op.Inputs[p+1] || !pairsOf(cg, op, b.oh, b.x, b.rows) {
			return false
		}
	}
	return true
}

// productOfBands reports whether op is a matmul whose pairs the bands
// make: it becomes the sum of their sums.
func productOfBands(cg *chunk.Graph, op *chunk.Op, bands map[int]*labelBand) bool {
	if len(op.Inputs) == 0 {
		return false
	}
	return pairsAllFused(cg, op, bands)
}
