package tensortest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// lstsqWant is np.linalg.lstsq(A, b, rcond=None)[0] for the A and b of
// lstsqData (NumPy 1.24).
var lstsqWant = []float64{1.511622144792876, 0.4838649155722324, 0.012684846018179208}

// lstsqData is the tall least-squares problem of docs/examples/lstsq.spec:
// rows (1, i/10, (i*i % 13)/5) and b_i = 2 + 0.5*i/10 - (i*7 % 11)/10.
func lstsqData() (*tensor.Array, *tensor.Array) {
	const m = 40
	a := tensor.NewArray(tensor.Float64, []int{m, 3})
	b := tensor.NewArray(tensor.Float64, []int{m, 1})
	for i := range m {
		fi := float64(i)
		copy(a.Float64s()[3*i:], []float64{1, fi / 10, float64(i*i%13) / 5})
		b.Float64s()[i] = 2 + 0.5*fi/10 - float64(i*7%11)/10
	}
	return a, b
}

// TestLeastSquares solves min |Ax - b| by the normal equations,
// solve(AᵀA, Aᵀb), and by QR, solve(R, Qᵀb), on a tall A cut into row
// blocks, and checks both against NumPy's lstsq.
func TestLeastSquares(t *testing.T) {
	a, b := lstsqData()
	for _, rows := range [][]int{{40}, {15, 15, 10}, tile.ReshapeSplit(40, 3)} {
		c := newShapeCase()
		na := c.input(a, [][]int{rows, {3}})
		nb := c.input(b, [][]int{rows, {1}})
		at := c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{na}, Shape: []int{3, 40}, DType: tensor.Float64, Attrs: spec.Attrs{Perm: []int{1, 0}}})
		ata := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{at, na}, Shape: []int{3, 3}, DType: tensor.Float64})
		atb := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{at, nb}, Shape: []int{3, 1}, DType: tensor.Float64})
		normal := c.add(&spec.Node{Op: tensor.OpSolve, Inputs: []*spec.Node{ata, atb}, Shape: []int{3, 1}, DType: tensor.Float64})
		q := c.add(&spec.Node{Op: tensor.OpQRQ, Inputs: []*spec.Node{na}, Shape: []int{40, 3}, DType: tensor.Float64})
		r := c.add(&spec.Node{Op: tensor.OpQRR, Inputs: []*spec.Node{na}, Shape: []int{3, 3}, DType: tensor.Float64})
		qt := c.add(&spec.Node{Op: tensor.OpTranspose, Inputs: []*spec.Node{q}, Shape: []int{3, 40}, DType: tensor.Float64, Attrs: spec.Attrs{Perm: []int{1, 0}}})
		qtb := c.add(&spec.Node{Op: tensor.OpMatmul, Inputs: []*spec.Node{qt, nb}, Shape: []int{3, 1}, DType: tensor.Float64})
		viaQR := c.add(&spec.Node{Op: tensor.OpSolve, Inputs: []*spec.Node{r, qtb}, Shape: []int{3, 1}, DType: tensor.Float64})
		outs, _ := c.runOutputs(t, normal, viaQR)
		checkClose(t, fmt.Sprintf("normal equations, rows %v", rows), outs[0], lstsqWant, 1e-10)
		checkClose(t, fmt.Sprintf("QR, rows %v", rows), outs[1], lstsqWant, 1e-12)
	}
}

// TestLeastSquaresSpec runs docs/examples/lstsq.spec, the same problem
// written in the spec language.
func TestLeastSquaresSpec(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "lstsq.spec"))
	if err != nil {
		t.Fatal(err)
	}
	outs := runSpecOutputs(t, string(src))
	if len(outs) != 2 {
		t.Fatalf("%d outputs, want 2", len(outs))
	}
	for i, name := range []string{"normal equations", "QR"} {
		if !slices.Equal(outs[i].Shape, []int{3}) || outs[i].DType != tensor.Float64 {
			t.Fatalf("%s: %v%v", name, outs[i].DType, outs[i].Shape)
		}
		checkClose(t, name, outs[i], lstsqWant, 1e-10)
	}
}

// runSpec parses, tiles and computes a spec that names no session tensors.
func runSpecOutputs(t *testing.T, src string) []*tensor.Array {
	t.Helper()
	g, err := lang.ParseText(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ComputeGraph(context.Background(), g, nil, nil, fuse.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]*tensor.Array, len(g.Outputs))
	for i, o := range g.Outputs {
		outs[i] = got[o.Name]
	}
	return outs
}
