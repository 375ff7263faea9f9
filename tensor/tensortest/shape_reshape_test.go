package tensortest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

func TestReshape(t *testing.T) {
	cases := []struct{ from, to []int }{
		{[]int{6, 4}, []int{4, 6}},
		{[]int{2, 3, 4}, []int{4, 6}},
		{[]int{4, 6}, []int{2, 3, 4}},
		{[]int{24}, []int{2, 3, 4}},
		{[]int{2, 3, 4}, []int{24}},
		{[]int{2, 3, 4}, []int{6, 4}},
		{[]int{2, 3, 4}, []int{2, 12}},
		{[]int{4, 6}, []int{2, 2, 6}},
		{[]int{4, 6}, []int{3, 8}},
		{[]int{5, 3}, []int{3, 5}},
		{[]int{7, 1, 3}, []int{3, 1, 7}},
		{[]int{2, 2, 2, 2}, []int{4, 4}},
		{[]int{3, 4}, []int{3, 1, 4}},
		{[]int{3, 1, 4}, []int{3, 4}},
		{[]int{1, 5}, []int{5, 1}},
		{[]int{5}, []int{1, 5, 1}},
		{[]int{12}, []int{12, 1}},
		{[]int{}, []int{1, 1}},
		{[]int{1, 1}, []int{}},
		{[]int{1}, []int{}},
		{[]int{0, 4}, []int{2, 0, 3}},
		{[]int{2, 0}, []int{0, 5}},
	}
	for ci, tc := range cases {
		dt := allDTypes[ci%len(allDTypes)]
		a := rampArray(dt, tc.from)
		want := &tensor.Array{DType: dt, Shape: tc.to, Data: a.Data}
		for _, chunks := range chunkings(tc.from) {
			if tensor.NumElements(tensor.GridShape(chunks)) > 200 {
				continue
			}
			c := newShapeCase()
			in := c.input(a, chunks)
			out := c.add(&spec.Node{Op: tensor.OpReshape, Inputs: []*spec.Node{in}, Shape: tc.to, DType: dt})
			got, cg := c.run(t, out)
			if err := sameArray(got, want); err != nil {
				t.Errorf("%v%v chunks %v -> %v: %v", dt, tc.from, chunks, tc.to, err)
				continue
			}
			checkReshapeReads(t, cg, c.env[in.Attrs.Name], chunks)
		}
	}
}

// checkReshapeReads checks that the op making each output chunk reads
// exactly the input chunks that hold its elements.
func checkReshapeReads(t *testing.T, cg *chunk.Graph, src *tensor.TiledTensor, chunks [][]int) {
	t.Helper()
	opOf := map[uint64]int{} // stored chunk ID -> its op key
	for _, op := range cg.Ops {
		if op.Stored != 0 {
			opOf[op.Stored] = op.Key
		}
	}
	dst := cg.Outputs[0]
	if tensor.NumElements(dst.Shape) == 0 {
		return
	}
	outOffs, inOffs := tensor.ChunkOffsets(dst.Chunks), tensor.ChunkOffsets(src.Chunks)
	grid, inGrid := tensor.GridShape(dst.Chunks), tensor.GridShape(src.Chunks)
	for k, key := range dst.Keys {
		op := cg.Ops[key]
		if op.Stored != 0 {
			continue // an input chunk passed through
		}
		idx, shape := tensor.Unravel(k, grid), tensor.ChunkShape(dst.Chunks, grid, k)
		var want []int
		for e := range tensor.NumElements(shape) {
			f := 0
			for ax, v := range tensor.Unravel(e, shape) {
				f = f*dst.Shape[ax] + outOffs[ax][idx[ax]] + v
			}
			u := tensor.Unravel(f, src.Shape)
			for ax := range u {
				u[ax] = tile.ChunkAt(inOffs[ax], u[ax])
			}
			if in := opOf[src.Keys[tensor.Ravel(u, inGrid)]]; !slices.Contains(want, in) {
				want = append(want, in)
			}
		}
		got := slices.Clone(op.Inputs)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v chunks %v -> %v: output chunk %v reads %v, want %v", src.Shape, chunks, dst.Shape, idx, got, want)
		}
	}
}

// TestReshapeChunking checks the chunkings the rule chooses and that runs
// from one input chunk merge into one strided run.
func TestReshapeChunking(t *testing.T) {
	cases := []struct {
		from       []int
		chunks     [][]int
		to         []int
		wantChunks [][]int
		runs       int // runs per op when all ops have the same number
	}{
		// Rows of the output are the input chunks: one run each.
		{[]int{1000}, [][]int{tile.ReshapeSplit(1000, 100)}, []int{10, 100}, [][]int{tile.ReshapeSplit(10, 1), {100}}, 1},
		// Axes that map one to one keep their chunks.
		{[]int{2, 3, 10}, [][]int{{1, 1}, {3}, {4, 4, 2}}, []int{6, 10}, [][]int{{3, 3}, {4, 4, 2}}, 1},
		// Five rows of four chunks: one strided run a chunk.
		{[]int{40, 40}, [][]int{{20, 20}, {10, 10, 10, 10}}, []int{1600}, [][]int{tile.ReshapeSplit(1600, 200)}, 4},
		// Only unit axes change: chunk by chunk.
		{[]int{6, 4}, [][]int{{3, 3}, {1, 3}}, []int{6, 1, 4, 1}, [][]int{{3, 3}, {1}, {1, 3}, {1}}, 1},
	}
	for _, tc := range cases {
		c := newShapeCase()
		a := rampArray(tensor.Float64, tc.from)
		in := c.input(a, tc.chunks)
		out := c.add(&spec.Node{Op: tensor.OpReshape, Inputs: []*spec.Node{in}, Shape: tc.to, DType: tensor.Float64})
		got, cg := c.run(t, out)
		if err := sameArray(got, &tensor.Array{DType: tensor.Float64, Shape: tc.to, Data: a.Data}); err != nil {
			t.Errorf("%v -> %v: %v", tc.from, tc.to, err)
		}
		if !tile.SameChunks(cg.Outputs[0].Chunks, tc.wantChunks) {
			t.Errorf("%v %v -> %v: chunks %v, want %v", tc.from, tc.chunks, tc.to, cg.Outputs[0].Chunks, tc.wantChunks)
		}
		for _, op := range cg.Ops {
			if op.Kind != chunk.KindReshape {
				continue
			}
			if n := len(op.Args.(chunk.ReshapeArgs).Runs); n != tc.runs {
				t.Errorf("%v -> %v: op %d has %d runs, want %d", tc.from, tc.to, op.Key, n, tc.runs)
			}
		}
	}
}

func TestReshapeErrors(t *testing.T) {
	for _, tc := range []struct {
		to []int
		dt tensor.DType
	}{
		{[]int{5, 5}, tensor.Int64},
		{[]int{-2, -12}, tensor.Int64},
		{[]int{24}, tensor.Float64},
	} {
		c := newShapeCase()
		in := c.input(rampArray(tensor.Int64, []int{4, 6}), [][]int{{2, 2}, {6}})
		out := c.add(&spec.Node{Op: tensor.OpReshape, Inputs: []*spec.Node{in}, Shape: tc.to, DType: tc.dt})
		if _, err := c.tile(out); err == nil {
			t.Errorf("reshape to %v%v: no error", tc.dt, tc.to)
		}
	}
}

func TestReshapeKernelBounds(t *testing.T) {
	in := rampArray(tensor.Int32, []int{4})
	for _, r := range []chunk.ReshapeRun{
		{In: 1, Len: 1, Count: 1},
		{Src: 2, Len: 3, Count: 1},
		{Dst: 1, Len: 1, Count: 3, DstStride: 2},
		{Src: 3, Len: 1, Count: 2, SrcStride: -4},
	} {
		op := &chunk.Op{Kind: chunk.KindReshape, Inputs: []int{0}, Shape: []int{2, 2}, DType: tensor.Int32, Args: chunk.ReshapeArgs{Runs: []chunk.ReshapeRun{r}}}
		if _, err := kernel.Run(t.Context(), op, []*tensor.Array{in}); err == nil {
			t.Errorf("run %+v: no error", r)
		}
	}
}

// BenchmarkTileReshape tiles the reshape of a 10000x10000 tensor in 100x100
// chunks to one axis: 10^4 output chunks, each gathering rows of 100 chunks.
func BenchmarkTileReshape(b *testing.B) {
	chunks := [][]int{tile.ReshapeSplit(10000, 100), tile.ReshapeSplit(10000, 100)}
	tt := &tensor.TiledTensor{Shape: []int{10000, 10000}, DType: tensor.Float64, Chunks: chunks}
	for k := range 10000 {
		tt.Keys = append(tt.Keys, uint64(k+1))
	}
	in := &spec.Node{ID: 0, Op: tensor.OpInput, Shape: tt.Shape, DType: tensor.Float64, Chunks: chunks, Attrs: spec.Attrs{Name: "x"}}
	out := &spec.Node{ID: 1, Op: tensor.OpReshape, Inputs: []*spec.Node{in}, Shape: []int{100000000}, DType: tensor.Float64}
	g := &spec.Graph{Nodes: []*spec.Node{in, out}, Outputs: []spec.Output{{Name: "y", Node: out}}}
	for b.Loop() {
		cg, err := tile.Graph(g, mapEnv{"x": tt})
		if err != nil {
			b.Fatal(err)
		}
		if len(cg.Ops) != 20000 {
			b.Fatalf("%d ops, want 20000", len(cg.Ops))
		}
	}
}

// randomShape factors total into up to 4 axes, some of length 1.
func randomShape(r *rand.Rand, total int) []int {
	var shape []int
	for len(shape) < 3 && total > 1 {
		var divs []int
		for d := 1; d <= total; d++ {
			if total%d == 0 {
				divs = append(divs, d)
			}
		}
		d := divs[r.IntN(len(divs))]
		shape = append(shape, d)
		total /= d
	}
	return append(shape, total)
}

// randomChunks cuts an axis of length n at random points.
func randomChunks(r *rand.Rand, n int) []int {
	if n == 0 {
		return []int{0}
	}
	var cs []int
	for n > 0 {
		c := 1 + r.IntN(n)
		cs = append(cs, c)
		n -= c
	}
	return cs
}

// TestReshapeRandom reshapes randomly chunked tensors between random shapes
// of the same size.
func TestReshapeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		total := []int{1, 6, 12, 24, 30, 36, 60}[r.IntN(7)]
		from, to := randomShape(r, total), randomShape(r, total)
		chunks := make([][]int, len(from))
		for ax, n := range from {
			chunks[ax] = randomChunks(r, n)
		}
		dt := allDTypes[r.IntN(len(allDTypes))]
		a := rampArray(dt, from)
		c := newShapeCase()
		in := c.input(a, chunks)
		out := c.add(&spec.Node{Op: tensor.OpReshape, Inputs: []*spec.Node{in}, Shape: to, DType: dt})
		got, cg := c.run(t, out)
		if err := sameArray(got, &tensor.Array{DType: dt, Shape: to, Data: a.Data}); err != nil {
			t.Fatalf("%v%v chunks %v -> %v: %v", dt, from, chunks, to, err)
		}
		checkReshapeReads(t, cg, c.env[in.Attrs.Name], chunks)
	}
}
