package tensortest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// The references below are NumPy 1.24's results for these integer inputs.
var (
	solveA = []int64{4, -2, 1, 3, 0, 1, 5, -1, 2, 2, 0, 3, 6, -2, 1, 2, -1, 0, 7, -3, 1, 1, 2, -1, 8}
	solveB = []int64{1, 0, 2, 0, 1, -1, 3, 2, 0, -1, 0, 1, 2, -2, 4}
	solveb = []int64{1, -2, 3, 0, 5}

	// np.linalg.solve(A, b), np.linalg.solve(A, B), np.linalg.inv(A).
	solveWantb = []float64{-0.4249431387414706, -0.5189537528430628, 0.761182714177407, 0.30022744503411664, 0.5902198635329794}
	solveWantB = []float64{
		0.3265731614859742, 0.3235405610310841, -0.04529946929492032,
		0.05894617134192571, 0.40314632297194847, -0.4835102350265352,
		0.39272175890826383, 0.12964366944655045, 0.25777103866565576,
		-0.19370735405610312, -0.20583775587566333, 0.3188021228203184,
		0.07941622441243365, -0.39897649734647456, 0.5415087187263078,
	}
	invWant = []float64{
		0.3447687642153146, 0.12073540561031085, -0.0026535253980288116, -0.19787717968157692, -0.10405610310841545,
		-0.0062547384382107725, 0.1715314632297195, 0.0511751326762699, -0.040940106141015925, -0.06463229719484458,
		-0.028809704321455645, -0.0887035633055345, 0.14480667172100076, 0.08415466262319937, 0.03563305534495829,
		-0.12092494313874146, -0.01705837755875663, -0.010614101592115238, 0.20849128127369218, 0.08377558756633811,
		-0.050227445034116754, -0.01648976497346474, -0.04359363153904473, 0.03487490523123578, 0.14764973464746017,
	}

	// S = A Aᵀ + 5I and np.linalg.cholesky(S).
	cholS    = []int64{35, -1, -6, 31, 1, -1, 40, 7, 5, 18, -6, 7, 55, -20, 25, 31, 5, -20, 68, -30, 1, 18, 25, -30, 76}
	cholWant = []float64{
		5.916079783099616, 0, 0, 0, 0,
		-0.1690308509457033, 6.322296147083635, 0, 0, 0,
		-1.01418510567422, 1.0800777549342306, 7.266695302179994, 0, 0,
		5.239956379316802, 0.9309456799851527, -2.1593320420371884, 5.9172191455113134, 0,
		0.1690308509457033, 2.851586039177822, 3.0401018627551633, -4.558863879015195, 6.149343577104618,
	}
)

// int64Array makes an int64 array of shape from v.
func int64Array(shape []int, v []int64) *tensor.Array {
	a := tensor.NewArray(tensor.Int64, shape)
	copy(a.Int64s(), v)
	return a
}

// checkClose compares got's elements with want to a relative tolerance.
func checkClose(t *testing.T, what string, got *tensor.Array, want []float64, tol float64) {
	t.Helper()
	if got.Len() != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, got.Len(), len(want))
	}
	for i, w := range want {
		if g := got.Float64At(i); math.Abs(g-w) > tol*max(1, math.Abs(w)) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, g, w)
		}
	}
}

// squareChunkings are chunkings of a 5 x 5 matrix, ragged ones included.
var squareChunkings = [][][]int{
	{{5}, {5}}, {{2, 3}, {5}}, {{2, 2, 1}, {3, 2}}, {{1, 1, 1, 1, 1}, {1, 4}}, {{4, 1}, {2, 2, 1}},
}

func TestSolve(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Int64, tensor.Float64, tensor.Float32} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		odt := tile.LinalgDType(dt)
		a := kernel.ConvertChunk(int64Array([]int{5, 5}, solveA), dt)
		for ci, chunks := range squareChunkings {
			for _, rhs := range []struct {
				b      *tensor.Array
				chunks [][]int
				want   []float64
			}{
				{int64Array([]int{5}, solveb), [][]int{{3, 2}}, solveWantb},
				{int64Array([]int{5, 3}, solveB), [][]int{{1, 4}, {2, 1}}, solveWantB},
			} {
				what := fmt.Sprintf("%v chunks %v b %v", dt, chunks, rhs.b.Shape)
				c := newShapeCase()
				x := c.input(a, chunks)
				b := c.input(rhs.b, rhs.chunks)
				s := c.add(&spec.Node{Op: tensor.OpSolve, Inputs: []*spec.Node{x, b}, Shape: rhs.b.Shape, DType: spec.SolveDType(dt, tensor.Int64)})
				if dt == tensor.Float32 && ci%2 == 0 {
					// float32 with float32 stays float32, as in NumPy.
					b = c.input(kernel.ConvertChunk(rhs.b, tensor.Float32), rhs.chunks)
					s = c.add(&spec.Node{Op: tensor.OpSolve, Inputs: []*spec.Node{x, b}, Shape: rhs.b.Shape, DType: odt})
				}
				outs, _ := c.runOutputs(t, s)
				if !slices.Equal(outs[0].Shape, rhs.b.Shape) || outs[0].DType != s.DType {
					t.Fatalf("%s: got %v%v", what, outs[0].DType, outs[0].Shape)
				}
				checkClose(t, what, outs[0], rhs.want, tol)
			}
			c := newShapeCase()
			x := c.input(a, chunks)
			inv := c.add(&spec.Node{Op: tensor.OpInv, Inputs: []*spec.Node{x}, Shape: []int{5, 5}, DType: odt})
			outs, _ := c.runOutputs(t, inv)
			checkClose(t, fmt.Sprintf("inv %v chunks %v", dt, chunks), outs[0], invWant, tol)
		}
	}
}

func TestCholesky(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Int64, tensor.Float64, tensor.Float32} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		// Only the lower triangle is read, as in NumPy: garbage above it
		// changes nothing.
		s := kernel.ConvertChunk(int64Array([]int{5, 5}, cholS), dt)
		for i := range 5 {
			for j := i + 1; j < 5; j++ {
				switch dt {
				case tensor.Int64:
					s.Int64s()[i*5+j] = 1000
				case tensor.Float64:
					s.Float64s()[i*5+j] = math.NaN()
				}
			}
		}
		for _, chunks := range squareChunkings {
			c := newShapeCase()
			x := c.input(s, chunks)
			l := c.add(&spec.Node{Op: tensor.OpCholesky, Inputs: []*spec.Node{x}, Shape: []int{5, 5}, DType: tile.LinalgDType(dt)})
			outs, _ := c.runOutputs(t, l)
			checkClose(t, fmt.Sprintf("%v chunks %v", dt, chunks), outs[0], cholWant, tol)
		}
	}
}

// TestLinalgDataErrors checks that a singular matrix and one that is not
// positive definite fail the graph with a kernel error that says so.
func TestLinalgDataErrors(t *testing.T) {
	singular := []float64{1, 2, 3, 2, 4, 6, 0, 1, 1} // row 2 is twice row 1
	notPD := []float64{1, 2, 0, 2, 1, 0, 0, 0, 3}
	for _, chunks := range [][][]int{{{3}, {3}}, {{1, 2}, {2, 1}}, {{1, 1, 1}, {3}}} {
		mk := func(v []float64) (*shapeCase, *spec.Node) {
			a := tensor.NewArray(tensor.Float64, []int{3, 3})
			copy(a.Float64s(), v)
			c := newShapeCase()
			return c, c.input(a, chunks)
		}
		c, x := mk(singular)
		b := c.input(rampArray(tensor.Float64, []int{3}), [][]int{{3}})
		err := c.computeErr(t, c.add(&spec.Node{Op: tensor.OpSolve, Inputs: []*spec.Node{x, b}, Shape: []int{3}, DType: tensor.Float64}))
		if err == nil || !strings.Contains(err.Error(), "linalg.solve: matrix is singular") {
			t.Errorf("solve, chunks %v: error %v", chunks, err)
		}
		c, x = mk(singular)
		err = c.computeErr(t, c.add(&spec.Node{Op: tensor.OpInv, Inputs: []*spec.Node{x}, Shape: []int{3, 3}, DType: tensor.Float64}))
		if err == nil || !strings.Contains(err.Error(), "linalg.inv: matrix is singular") {
			t.Errorf("inv, chunks %v: error %v", chunks, err)
		}
		c, x = mk(notPD)
		err = c.computeErr(t, c.add(&spec.Node{Op: tensor.OpCholesky, Inputs: []*spec.Node{x}, Shape: []int{3, 3}, DType: tensor.Float64}))
		if err == nil || !strings.Contains(err.Error(), "linalg.cholesky: matrix is not positive definite") {
			t.Errorf("cholesky, chunks %v: error %v", chunks, err)
		}
	}
}

// TestLinalgRandom solves, inverts and factors random well-conditioned
// matrices of random sizes and chunkings (single-row blocks among them, so
// that the factor tree has several levels) against gonum's dense results.
func TestLinalgRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for it := range 60 {
		n := 1 + r.IntN(25)
		if it%10 == 0 {
			n = 20 // one row a block: 20 leaves, 3 inner nodes, a root
		}
		a := randomArray(tensor.Float64, []int{n, n}, uint64(it))
		for i := range n {
			a.Float64s()[i*n+i] += float64(2 * n) // diagonally dominant
		}
		nrhs := 1 + r.IntN(3)
		b := randomArray(tensor.Float64, []int{n, nrhs}, uint64(1000+it))
		rows := randomChunks(r, n)
		if it%10 == 0 {
			rows = tile.ReshapeSplit(n, 1)
		}
		chunks := [][]int{rows, randomChunks(r, n)}
		what := fmt.Sprintf("n %d chunks %v", n, chunks)

		c := newShapeCase()
		x := c.input(a, chunks)
		nb := c.input(b, [][]int{randomChunks(r, n), {nrhs}})
		s := c.add(&spec.Node{Op: tensor.OpSolve, Inputs: []*spec.Node{x, nb}, Shape: []int{n, nrhs}, DType: tensor.Float64})
		inv := c.add(&spec.Node{Op: tensor.OpInv, Inputs: []*spec.Node{x}, Shape: []int{n, n}, DType: tensor.Float64})
		// a aᵀ is symmetric positive definite.
		xt := c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{x}, Shape: []int{n, n}, DType: tensor.Float64, Attrs: spec.Attrs{Perm: []int{1, 0}}})
		spd := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{x, xt}, Shape: []int{n, n}, DType: tensor.Float64})
		l := c.add(&spec.Node{Op: tensor.OpCholesky, Inputs: []*spec.Node{spd}, Shape: []int{n, n}, DType: tensor.Float64})
		outs, _ := c.runOutputs(t, s, inv, l)

		am := dense(a)
		var want mat.Dense
		if err := want.Solve(am, dense(b)); err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(dense(outs[0]), &want); d > 1e-12 {
			t.Errorf("%s: solve differs by %g", what, d)
		}
		var wantInv mat.Dense
		if err := wantInv.Inverse(am); err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(dense(outs[1]), &wantInv); d > 1e-12 {
			t.Errorf("%s: inv differs by %g", what, d)
		}
		var aat mat.Dense
		aat.Mul(am, am.T())
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(n, aat.RawMatrix().Data)) {
			t.Fatalf("%s: reference Cholesky failed", what)
		}
		var wantL mat.TriDense
		ch.LTo(&wantL)
		if d := maxAbsDiff(dense(outs[2]), &wantL); d > 1e-9*float64(n) {
			t.Errorf("%s: cholesky differs by %g", what, d)
		}
	}
}

// TestCholeskyManyBlocks factors a 12 x 12 matrix in 1 x 1 blocks: the
// sums of products are split over update ops of bounded fan-in.
func TestCholeskyManyBlocks(t *testing.T) {
	const n = 12
	a := randomArray(tensor.Float64, []int{n, n}, 5)
	am := dense(a)
	var spd mat.Dense
	spd.Mul(am, am.T())
	for i := range n {
		spd.Set(i, i, spd.At(i, i)+1)
	}
	s := tensor.NewArray(tensor.Float64, []int{n, n})
	copy(s.Float64s(), spd.RawMatrix().Data)
	c := newShapeCase()
	x := c.input(s, [][]int{tile.ReshapeSplit(n, 1), tile.ReshapeSplit(n, 1)})
	l := c.add(&spec.Node{Op: tensor.OpCholesky, Inputs: []*spec.Node{x}, Shape: []int{n, n}, DType: tensor.Float64})
	outs, cg := c.runOutputs(t, l)
	updates := 0
	for _, op := range cg.Ops {
		if len(op.Inputs) > 2*tile.CholUpdates+2 {
			t.Errorf("%s op reads %d blocks", op.Kind, len(op.Inputs))
		}
		if op.Kind == chunk.KindCholeskyUpdate {
			updates++
		}
	}
	if updates == 0 {
		t.Error("no update ops")
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(n, spd.RawMatrix().Data)) {
		t.Fatal("reference Cholesky failed")
	}
	var want mat.TriDense
	ch.LTo(&want)
	if d := maxAbsDiff(dense(outs[0]), &want); d > 1e-12 {
		t.Errorf("cholesky differs by %g", d)
	}
}
