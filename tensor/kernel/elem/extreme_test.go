package elem

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"marsfs/tensor"
)

// TestExtremeEveryPath folds max and min over rows of every length up to
// past three vector rounds, drawn from values that test Go's rules (NaN,
// zeros of both signs, infinities) and ordinary ones, from several starts,
// with the vector loops and without: the results must be the scalar
// fold's, bit for bit but for which NaN.
func TestExtremeEveryPath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	special := []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1, -1}
	same := func(a, b float64) bool { return a != a && b != b || math.Float64bits(a) == math.Float64bits(b) }
	for _, op := range []string{tensor.OpMax, tensor.OpMin} {
		m, err := MonoidFor(op, tensor.Float64)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n <= 60; n++ {
			for trial := range 40 {
				row := make([]float64, n)
				for i := range row {
					switch {
					case trial%4 == 0 && r.IntN(8) == 0:
						row[i] = special[r.IntN(len(special))]
					case trial%4 == 1:
						row[i] = special[1+r.IntN(2)] // zeros only
					default:
						row[i] = r.NormFloat64()
					}
				}
				id := make([]float64, 1)
				m.Init(f64Bytes(id))
				starts := []float64{id[0], 0, math.Copysign(0, -1), math.NaN(), r.NormFloat64()}
				for _, acc := range starts {
					want := acc
					for _, v := range row {
						if op == tensor.OpMax {
							want = max(want, v)
						} else {
							want = min(want, v)
						}
					}
					for _, vec := range []bool{false, true} {
						if vec && !useExtremeAVX2 {
							continue
						}
						saved := useExtremeAVX2
						useExtremeAVX2 = vec
						got := []float64{acc}
						m.Inner(f64Bytes(got), 0, f64Bytes(row))
						useExtremeAVX2 = saved
						if !same(got[0], want) {
							t.Fatalf("%s, vector %v, start %v, row %v: %v, want %v", op, vec, acc, row, got[0], want)
						}
					}
				}
			}
		}
	}
}

// f64Bytes is the memory of d as bytes.
func f64Bytes(d []float64) []byte {
	if len(d) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), 8*len(d))
}

// TestExtremePairEveryPath: max and min of two rows element by element
// (the fold along an outer axis), with the vector loops and without, over
// values that test Go's rules, for every length to past four vector
// rounds: the scalar's results, bit for bit but for which NaN.
func TestExtremePairEveryPath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	special := []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1, -1}
	same := func(a, b float64) bool { return a != a && b != b || math.Float64bits(a) == math.Float64bits(b) }
	for _, op := range []string{tensor.OpMax, tensor.OpMin} {
		m, err := MonoidFor(op, tensor.Float64)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n <= 20; n++ {
			for range 200 {
				acc, row := make([]float64, n), make([]float64, n)
				for i := range n {
					acc[i], row[i] = special[r.IntN(len(special))], special[r.IntN(len(special))]
					if r.IntN(4) == 0 {
						row[i] = r.NormFloat64()
					}
				}
				want := make([]float64, n)
				for i := range n {
					if op == tensor.OpMax {
						want[i] = max(acc[i], row[i])
					} else {
						want[i] = min(acc[i], row[i])
					}
				}
				for _, vec := range []bool{false, true} {
					if vec && !useExtremeAVX2 {
						continue
					}
					saved := useExtremeAVX2
					useExtremeAVX2 = vec
					got := slices.Clone(acc)
					m.Outer(f64Bytes(got), f64Bytes(row))
					useExtremeAVX2 = saved
					for i := range n {
						if !same(got[i], want[i]) {
							t.Fatalf("%s, vector %v: %v op %v = %v, want %v", op, vec, acc[i], row[i], got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestExtremeFloat32 is TestExtremeEveryPath and TestExtremePairEveryPath
// for float32 rows, to past three vector rounds of 32.
func TestExtremeFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	nan := float32(math.NaN())
	special := []float32{nan, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), 1, -1}
	same := func(a, b float32) bool { return a != a && b != b || math.Float32bits(a) == math.Float32bits(b) }
	bytes32 := func(d []float32) []byte {
		if len(d) == 0 {
			return nil
		}
		return unsafe.Slice((*byte)(unsafe.Pointer(&d[0])), 4*len(d))
	}
	pick := func(trial int) float32 {
		switch {
		case trial%4 == 0 && r.IntN(8) == 0:
			return special[r.IntN(len(special))]
		case trial%4 == 1:
			return special[1+r.IntN(2)]
		}
		return float32(r.NormFloat64())
	}
	for _, op := range []string{tensor.OpMax, tensor.OpMin} {
		m, err := MonoidFor(op, tensor.Float32)
		if err != nil {
			t.Fatal(err)
		}
		f := func(a, b float32) float32 {
			if op == tensor.OpMax {
				return max(a, b)
			}
			return min(a, b)
		}
		for n := 0; n <= 100; n++ {
			for trial := range 24 {
				row, acc := make([]float32, n), make([]float32, n)
				for i := range row {
					row[i], acc[i] = pick(trial), pick(trial)
				}
				for _, start := range []float32{0, float32(math.Copysign(0, -1)), nan, float32(r.NormFloat64())} {
					want := start
					for _, v := range row {
						want = f(want, v)
					}
					wantPair := make([]float32, n)
					for i := range n {
						wantPair[i] = f(acc[i], row[i])
					}
					for _, vec := range []bool{false, true} {
						if vec && !useExtremeAVX2 {
							continue
						}
						saved := useExtremeAVX2
						useExtremeAVX2 = vec
						got := []float32{start}
						m.Inner(bytes32(got), 0, bytes32(row))
						pair := slices.Clone(acc)
						m.Outer(bytes32(pair), bytes32(row))
						useExtremeAVX2 = saved
						if !same(got[0], want) {
							t.Fatalf("%s, vector %v, start %v, row %v: %v, want %v", op, vec, start, row, got[0], want)
						}
						for i := range n {
							if !same(pair[i], wantPair[i]) {
								t.Fatalf("%s, vector %v: %v op %v = %v, want %v", op, vec, acc[i], row[i], pair[i], wantPair[i])
							}
						}
					}
				}
			}
		}
	}
}
