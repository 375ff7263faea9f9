package tensortest

import (
	"context"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
)

// tinyCombineOp is the first combine of tinySum, with partials of the
// right dtype and shape as its inputs.
func tinyCombineOp(tb testing.TB) (*chunk.Op, []*tensor.Array) {
	tb.Helper()
	for _, op := range tinySum(tb).Ops {
		if !strings.HasSuffix(string(op.Kind), ".combine") {
			continue
		}
		if op.DType != tensor.Float64 {
			tb.Fatalf("combine of %v", op.DType)
		}
		in := make([]*tensor.Array, len(op.Inputs))
		for i := range in {
			in[i] = tensor.NewArray(op.DType, op.Shape)
			for j := range in[i].Float64s() {
				in[i].Float64s()[j] = float64(i + 1)
			}
		}
		return op, in
	}
	tb.Fatal("no combine op")
	return nil, nil
}

// TestTinyCombineOp checks the combine of tiny partials and that it
// allocates only its output.
func TestTinyCombineOp(t *testing.T) {
	op, in := tinyCombineOp(t)
	out, err := kernel.Run(context.Background(), op, in)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for i := range in {
		want += float64(i + 1)
	}
	if got := out.Float64s()[0]; got != want {
		t.Errorf("combine of %d partials = %v, want %v", len(in), got, want)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := kernel.Run(context.Background(), op, in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations combining %d scalars", allocs, len(in))
	}
}

// BenchmarkReduceCombineTiny combines a tree sum's scalar partials: what
// the kernel costs beyond the work.
func BenchmarkReduceCombineTiny(b *testing.B) {
	op, in := tinyCombineOp(b)
	benchRun(b, op, in)
}
