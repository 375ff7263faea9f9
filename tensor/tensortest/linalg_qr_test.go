package tensortest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// runOutputs tiles the graph of c with outs as its outputs and computes them.
func (c *shapeCase) runOutputs(t testing.TB, outs ...*spec.Node) ([]*tensor.Array, *chunk.Graph) {
	t.Helper()
	stored := func(id uint64) (*tensor.Array, error) { return c.stored[id], nil }
	g := c.graph(outs...)
	s, err := tile.Stages(g, c.env)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Last() {
		// Tiled in stages (a sample sort, a mask): the graph returned
		// holds every stage's ops, for the tests that look at them.
		all := &chunk.Graph{}
		byName, err := ComputeGraph(context.Background(), g, c.env, stored, fuse.Options{}, func(cg *chunk.Graph) { all.Ops = append(all.Ops, cg.Ops...) })
		if err != nil {
			t.Fatal(err)
		}
		got := make([]*tensor.Array, len(outs))
		for i := range outs {
			got[i] = byName[fmt.Sprintf("out%d", i)]
		}
		return got, all
	}
	got, err := Compute(context.Background(), s.Graph, stored)
	if err != nil {
		t.Fatal(err)
	}
	return got, s.Graph
}

// graph is the case's graph with outs as its outputs, out0, out1, ...
func (c *shapeCase) graph(outs ...*spec.Node) *spec.Graph {
	g := &spec.Graph{Nodes: c.nodes}
	for i, o := range outs {
		g.Outputs = append(g.Outputs, spec.Output{Name: fmt.Sprintf("out%d", i), Node: o})
	}
	return g
}

func (c *shapeCase) tileOutputs(outs ...*spec.Node) (*chunk.Graph, error) {
	return tile.Graph(c.graph(outs...), c.env)
}

// computeErr tiles and computes outs and returns the error, which must come
// from a kernel, not from tiling.
func (c *shapeCase) computeErr(t testing.TB, outs ...*spec.Node) error {
	t.Helper()
	cg, err := c.tileOutputs(outs...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compute(context.Background(), cg, func(id uint64) (*tensor.Array, error) { return c.stored[id], nil })
	return err
}

// dense views a 2-D array as a gonum matrix of float64.
func dense(a *tensor.Array) *mat.Dense {
	r, c := a.Shape[0], a.Shape[1]
	if r == 0 || c == 0 {
		return &mat.Dense{}
	}
	d := make([]float64, r*c)
	for i := range d {
		d[i] = a.Float64At(i)
	}
	return mat.NewDense(r, c, d)
}

// maxAbsDiff is the largest |x - y| over the elements of two r x c matrices.
func maxAbsDiff(x, y mat.Matrix) float64 {
	r, c := x.Dims()
	m := 0.0
	for i := range r {
		for j := range c {
			m = max(m, math.Abs(x.At(i, j)-y.At(i, j)))
		}
	}
	return m
}

// checkOrthonormal checks that the columns of q (m x k) are orthonormal.
func checkOrthonormal(t *testing.T, what string, q *mat.Dense, k int, tol float64) {
	t.Helper()
	if k == 0 {
		return
	}
	var qtq mat.Dense
	qtq.Mul(q.T(), q)
	id := mat.NewDiagDense(k, nil)
	for i := range k {
		id.SetDiag(i, 1)
	}
	if d := maxAbsDiff(&qtq, id); d > tol {
		t.Errorf("%s: |QᵀQ - I| = %g", what, d)
	}
}

// linalgChunkings lists chunkings of an m x n matrix: whole, ragged row
// blocks, one row a block (a tree of several levels), and split columns.
func linalgChunkings(m, n int) [][][]int {
	out := [][][]int{{{m}, {n}}}
	if m > 2 {
		out = append(out, [][]int{tile.ReshapeSplit(m, (m+2)/3), {n}})
		out = append(out, [][]int{tile.ReshapeSplit(m, 1), {n}})
	}
	if n > 1 {
		out = append(out, [][]int{tile.ReshapeSplit(m, max(1, (m+1)/2)), tile.ReshapeSplit(n, (n+1)/2)})
	}
	return out
}

func TestQR(t *testing.T) {
	for _, tc := range []struct {
		m, n int
		dt   tensor.DType
	}{
		{37, 5, tensor.Float64}, {6, 6, tensor.Float64}, {4, 9, tensor.Float64}, {20, 3, tensor.Float32},
		{12, 4, tensor.Int64}, {70, 2, tensor.Int32}, {1, 1, tensor.Float64}, {9, 1, tensor.Bool}, {0, 3, tensor.Float64},
		// More columns than one panel of the blocked factorization.
		{200, 40, tensor.Float64}, {45, 45, tensor.Float64}, {20, 37, tensor.Float64},
	} {
		a := randomArray(tc.dt, []int{tc.m, tc.n}, uint64(tc.m*31+tc.n))
		k := min(tc.m, tc.n)
		odt := tile.LinalgDType(tc.dt)
		tol := 1e-12
		if odt == tensor.Float32 {
			tol = 1e-5
		}
		for _, chunks := range linalgChunkings(tc.m, tc.n) {
			what := fmt.Sprintf("%v%v chunks %v", tc.dt, a.Shape, chunks)
			c := newShapeCase()
			x := c.input(a, chunks)
			q := c.add(&spec.Node{Op: tensor.OpQRQ, Inputs: []*spec.Node{x}, Shape: []int{tc.m, k}, DType: odt})
			r := c.add(&spec.Node{Op: tensor.OpQRR, Inputs: []*spec.Node{x}, Shape: []int{k, tc.n}, DType: odt})
			outs, cg := c.runOutputs(t, q, r)
			if outs[0].DType != odt || !slices.Equal(outs[0].Shape, []int{tc.m, k}) || !slices.Equal(outs[1].Shape, []int{k, tc.n}) {
				t.Fatalf("%s: got Q %v%v and R %v", what, outs[0].DType, outs[0].Shape, outs[1].Shape)
			}
			// The factor tree is tiled once for both outputs.
			leaves := 0
			for _, op := range cg.Ops {
				if args, ok := op.Args.(chunk.QRFactorArgs); ok && args.Leaf {
					leaves++
				}
			}
			if leaves != len(chunks[0]) {
				t.Errorf("%s: %d leaf factors for %d row blocks", what, leaves, len(chunks[0]))
			}
			if k == 0 {
				continue
			}
			qm, rm := dense(outs[0]), dense(outs[1])
			for i := range k {
				for j := range i {
					if rm.At(i, j) != 0 {
						t.Fatalf("%s: R[%d, %d] = %g below the diagonal", what, i, j, rm.At(i, j))
					}
				}
			}
			var qr mat.Dense
			qr.Mul(qm, rm)
			scale := max(1, mat.Norm(dense(a), math.Inf(1)))
			if d := maxAbsDiff(&qr, dense(a)); d > tol*scale*float64(tc.n) {
				t.Errorf("%s: |QR - A| = %g", what, d)
			}
			checkOrthonormal(t, what, qm, k, tol*float64(tc.m))
		}
	}
}

func TestSVD(t *testing.T) {
	for _, tc := range []struct {
		m, n int
		dt   tensor.DType
	}{
		{37, 5, tensor.Float64}, {6, 6, tensor.Float64}, {4, 9, tensor.Float64}, {25, 3, tensor.Float32}, {12, 4, tensor.Int64}, {3, 1, tensor.Float64},
		{120, 33, tensor.Float64},
	} {
		a := randomArray(tc.dt, []int{tc.m, tc.n}, uint64(tc.m*17+tc.n))
		k := min(tc.m, tc.n)
		odt := tile.LinalgDType(tc.dt)
		tol := 1e-11
		if odt == tensor.Float32 {
			tol = 1e-5
		}
		var ref mat.SVD
		if !ref.Factorize(dense(a), mat.SVDNone) {
			t.Fatal("reference SVD failed")
		}
		wantS := ref.Values(nil)
		for _, chunks := range linalgChunkings(tc.m, tc.n) {
			what := fmt.Sprintf("%v%v chunks %v", tc.dt, a.Shape, chunks)
			c := newShapeCase()
			x := c.input(a, chunks)
			u := c.add(&spec.Node{Op: tensor.OpSVDU, Inputs: []*spec.Node{x}, Shape: []int{tc.m, k}, DType: odt})
			s := c.add(&spec.Node{Op: tensor.OpSVDS, Inputs: []*spec.Node{x}, Shape: []int{k}, DType: odt})
			vt := c.add(&spec.Node{Op: tensor.OpSVDVT, Inputs: []*spec.Node{x}, Shape: []int{k, tc.n}, DType: odt})
			outs, cg := c.runOutputs(t, u, s, vt)
			small := 0
			for _, op := range cg.Ops {
				if op.Kind == chunk.KindSVDSmall {
					small++
				}
			}
			if small != 1 {
				t.Errorf("%s: %d small SVDs, want 1", what, small)
			}
			um, vtm := dense(outs[0]), dense(outs[2])
			sv := make([]float64, k)
			for i := range k {
				sv[i] = outs[1].Float64At(i)
				if math.Abs(sv[i]-wantS[i]) > tol*wantS[0] {
					t.Errorf("%s: s[%d] = %g, want %g", what, i, sv[i], wantS[i])
				}
				if i > 0 && sv[i] > sv[i-1] {
					t.Errorf("%s: singular values not decreasing: %v", what, sv)
				}
			}
			var us, usv mat.Dense
			us.Mul(um, mat.NewDiagDense(k, sv))
			usv.Mul(&us, vtm)
			if d := maxAbsDiff(&usv, dense(a)); d > tol*max(1, wantS[0])*float64(tc.n) {
				t.Errorf("%s: |U S Vᵀ - A| = %g", what, d)
			}
			checkOrthonormal(t, what+" U", um, k, tol*float64(tc.m))
			checkOrthonormal(t, what+" V", mat.DenseCopyOf(vtm.T()), k, tol*float64(tc.n))
		}
	}
}

func TestFactorErrors(t *testing.T) {
	for _, tc := range []struct {
		node spec.Node
		want string
	}{
		{spec.Node{Op: tensor.OpQRQ, Shape: []int{5, 5}, DType: tensor.Float64}, "shape"},
		{spec.Node{Op: tensor.OpQRR, Shape: []int{4, 4}, DType: tensor.Float32}, "dtype"},
		{spec.Node{Op: tensor.OpInv, Shape: []int{5, 4}, DType: tensor.Float64}, "square"},
		{spec.Node{Op: tensor.OpCholesky, Shape: []int{5, 4}, DType: tensor.Float64}, "square"},
	} {
		c := newShapeCase()
		x := c.input(randomArray(tensor.Float64, []int{5, 4}, 1), [][]int{{5}, {4}})
		n := tc.node
		n.Inputs = []*spec.Node{x}
		_, err := c.tileOutputs(c.add(&n))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one about %s", tc.node.Op, err, tc.want)
		}
	}
}
