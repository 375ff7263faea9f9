package tensortest

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"marsfs/tensor"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// BenchmarkTSQR factors a 2,000,000 x 50 float64 matrix stored in row
// chunks of 100,000 (20 leaves under one tree node), computing both Q and R
// through Tile and Compute, on one goroutine; run it with -benchtime=1x: one
// run holds a few GB, most of it fresh pages. On the 2-core development
// machine at load 1.2 it took 13.2 s (17.0 CPU-s) on gonum's BLAS and 15.2 s
// (15.7 CPU-s) with -tags openblas, where NumPy 1.24's np.linalg.qr of the
// same size, on Debian's OpenBLAS with two threads, took 12.3-14.2 s
// (16.6-18.4 CPU-s).
func BenchmarkTSQR(b *testing.B) {
	const m, n, rows = 2_000_000, 50, 100_000
	c := newShapeCase()
	tt := &tensor.TiledTensor{Shape: []int{m, n}, DType: tensor.Float64, Chunks: [][]int{tile.ReshapeSplit(m, rows), {n}}}
	for i := range m / rows {
		id := uint64(1 + i)
		c.stored[id] = randomArray(tensor.Float64, []int{rows, n}, uint64(i))
		tt.Keys = append(tt.Keys, id)
	}
	c.env["a"] = tt
	a := c.add(&spec.Node{Op: tensor.OpInput, Shape: tt.Shape, DType: tensor.Float64, Chunks: tt.Chunks, Attrs: spec.Attrs{Name: "a"}})
	q := c.add(&spec.Node{Op: tensor.OpQRQ, Inputs: []*spec.Node{a}, Shape: []int{m, n}, DType: tensor.Float64})
	r := c.add(&spec.Node{Op: tensor.OpQRR, Inputs: []*spec.Node{a}, Shape: []int{n, n}, DType: tensor.Float64})
	cpu0 := cpuSeconds()
	for b.Loop() {
		cg, err := c.tileOutputs(q, r)
		if err != nil {
			b.Fatal(err)
		}
		outs, err := Compute(b.Context(), cg, func(id uint64) (*tensor.Array, error) { return c.stored[id], nil })
		if err != nil {
			b.Fatal(err)
		}
		if len(outs) != 2 {
			b.Fatal(fmt.Sprint(len(outs), " outputs"))
		}
	}
	b.ReportMetric(float64(m)*n*8/1e6/(b.Elapsed().Seconds()/float64(b.N)), "MB/s")
	// CPU time too: on a shared machine it varies less than the elapsed time.
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
}

// cpuSeconds is the CPU time (user and system) the process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkSort sorts 4,000,000 float64 stored in 8 chunks through Tile and
// Compute: 8 local sorts and the 19 merge-splits of the 8-wire network.
func BenchmarkSort(b *testing.B) {
	const n, rows = 4_000_000, 500_000
	c := newShapeCase()
	x := c.input(randomArray(tensor.Float64, []int{n}, 1), [][]int{tile.ReshapeSplit(n, rows)})
	s := c.add(&spec.Node{Op: tensor.OpSort, Inputs: []*spec.Node{x}, Shape: []int{n}, DType: tensor.Float64})
	for b.Loop() {
		c.runOutputs(b, s)
	}
	b.ReportMetric(float64(n)/1e6/(b.Elapsed().Seconds()/float64(b.N)), "Melem/s")
}
