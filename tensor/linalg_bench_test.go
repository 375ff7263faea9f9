package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkTSQR factors a 2,000,000 x 50 float64 matrix stored in row
// chunks of 100,000 (20 leaves under one tree node), computing both Q and R
// through Tile and Compute. For comparison, NumPy 1.24's
// np.linalg.qr(a) of the same shape takes the time noted in the package's
// report; run this with -benchtime=1x: one run holds a few GB.
func BenchmarkTSQR(b *testing.B) {
	const m, n, rows = 2_000_000, 50, 100_000
	c := newShapeCase()
	tt := &TiledTensor{Shape: []int{m, n}, DType: Float64, Chunks: [][]int{reshapeSplit(m, rows), {n}}}
	for i := range m / rows {
		id := uint64(1 + i)
		c.stored[id] = randomArray(Float64, []int{rows, n}, uint64(i))
		tt.Keys = append(tt.Keys, id)
	}
	c.env["a"] = tt
	a := c.add(&Node{Op: OpInput, Shape: tt.Shape, DType: Float64, Chunks: tt.Chunks, Attrs: Attrs{Name: "a"}})
	q := c.add(&Node{Op: OpQRQ, Inputs: []*Node{a}, Shape: []int{m, n}, DType: Float64})
	r := c.add(&Node{Op: OpQRR, Inputs: []*Node{a}, Shape: []int{n, n}, DType: Float64})
	for b.Loop() {
		cg, err := c.tileOutputs(q, r)
		if err != nil {
			b.Fatal(err)
		}
		outs, err := Compute(b.Context(), cg, func(id uint64) (*Array, error) { return c.stored[id], nil })
		if err != nil {
			b.Fatal(err)
		}
		if len(outs) != 2 {
			b.Fatal(fmt.Sprint(len(outs), " outputs"))
		}
	}
	b.ReportMetric(float64(m)*n*8/1e6/(b.Elapsed().Seconds()/float64(b.N)), "MB/s")
}

// BenchmarkSort sorts 4,000,000 float64 stored in 8 chunks through Tile and
// Compute: 8 local sorts and the 19 merge-splits of the 8-wire network.
func BenchmarkSort(b *testing.B) {
	const n, rows = 4_000_000, 500_000
	c := newShapeCase()
	x := c.input(randomArray(Float64, []int{n}, 1), [][]int{reshapeSplit(n, rows)})
	s := c.add(&Node{Op: OpSort, Inputs: []*Node{x}, Shape: []int{n}, DType: Float64})
	for b.Loop() {
		c.runOutputs(b, s)
	}
	b.ReportMetric(float64(n)/1e6/(b.Elapsed().Seconds()/float64(b.N)), "Melem/s")
}
