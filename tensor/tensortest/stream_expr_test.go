package tensortest

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec/zarr"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/kernel/expr"
	"marsfs/tensor/spec/lang"
)

// writeZarrBytes writes data, the C-order bytes of an array of dt and
// shape, into dir/name uncompressed, in chunks along the first axis.
func writeZarrBytes(t *testing.T, dir, name string, dt tensor.DType, shape, chunks []int, data []byte) {
	t.Helper()
	a, err := zarr.New(shape, chunks, dt, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, name)
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	row := a.ChunkBytes() / chunks[0]
	idx := make([]int, len(shape))
	for i := 0; i*chunks[0] < shape[0]; i++ {
		c := make([]byte, a.ChunkBytes())
		copy(c, data[i*chunks[0]*row:min(len(data), (i+1)*chunks[0]*row)])
		idx[0] = i
		if err := os.WriteFile(filepath.Join(root, a.Key(idx)), c, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := a.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, a.MetaName()), meta, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStreamKernel runs the expr programs that read a Zarr chunk (a
// weighted sum over the trailing axes, sums, maxima, a variance and a
// nanmean along each axis, an elementwise result) with the chunk handed
// over in pieces of ragged sizes (one element, a block less one, a
// block, a block and one, random, the whole chunk) and checks that each
// makes ExprKernel's chunk to the bit, in every dtype a store chunk
// streams in (float32 and float64 with NaNs, int32, int64).
func TestStreamKernel(t *testing.T) {
	dir := t.TempDir()
	shape, chunks := []int{13, 7, 300}, []int{5, 7, 300}
	n := shape[0] * shape[1] * shape[2]
	r := rand.New(rand.NewPCG(7, 7))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx := kernel.WithData(context.Background(), root)
	const weights = "w = cos(linspace(90, -90, 7) * 0.017453292519943295)\n"
	cases := []struct {
		dt    tensor.DType
		specs []string
	}{
		{tensor.Float32, []string{
			weights + "g = (x * w[:, None]).sum(axis=(1, 2))",
			"y = (x * 2.5 - 1).sum(axis=0)",
			"y = (x * 1.0).var(axis=0)",
			"y = nanmean(x * 1.5, axis=1)",
			"y = x * 2 + 1",
			"y = x - x.mean(axis=0)",
		}},
		{tensor.Float64, []string{
			weights + "g = (x * w[:, None]).sum(axis=(1, 2))",
			"y = ((x - 3) ** 2).mean(axis=0)",
			"y = nanmean(x * 1.5, axis=2)",
			"y = (x * 0.5).max(axis=(0, 2))",
			"y = x - x.mean(axis=0)",
		}},
		{tensor.Int32, []string{"y = (x * 3 + 1).sum(axis=2)", "y = (x % 7).max(axis=(0, 2))", "y = x * 2"}},
		{tensor.Int64, []string{"y = (x * 3 + 1).sum(axis=(1, 2))", "y = (x - 1).min(axis=0)"}},
	}
	for _, c := range cases {
		data := make([]byte, n*c.dt.Size())
		for i := range n {
			v := 280 + 10*r.NormFloat64()
			if i%97 == 5 {
				v = math.NaN()
			}
			switch c.dt {
			case tensor.Float32:
				tensor.View[float32](data)[i] = float32(v)
			case tensor.Float64:
				tensor.View[float64](data)[i] = v
			case tensor.Int32:
				tensor.View[int32](data)[i] = int32(r.IntN(2000) - 1000)
			case tensor.Int64:
				tensor.View[int64](data)[i] = int64(r.IntN(1<<40) - 1<<39)
			}
		}
		name := "x-" + c.dt.String() + ".zarr"
		writeZarrBytes(t, dir, name, c.dt, shape, chunks, data)
		for _, src := range c.specs {
			g, err := lang.ParseData(`x = from_zarr("`+name+`")`+"\n"+src+"\n", nil, root.FS())
			if err != nil {
				t.Fatalf("%v %q: %v", c.dt, src, err)
			}
			checked := 0
			_, err = ComputeGraph(ctx, g, nil, nil, fuse.Options{FuseExpr: true}, func(cg *chunk.Graph) {
				checked += checkStreamed(t, ctx, cg, r, c.dt.String()+" "+src)
			})
			if err != nil {
				t.Fatalf("%v %q: %v", c.dt, src, err)
			}
			if checked != 3 && !strings.Contains(src, "mean(axis=0)") {
				t.Errorf("%v %q: %d expr ops read a stored chunk, want 3", c.dt, src, checked)
			}
		}
	}
	if sunkPrograms != 4 {
		t.Errorf("%d elementwise programs streamed to a sink, want 4 (x * 2 + 1, x * 2, and the anomalies)", sunkPrograms)
	}
}

// sunkPrograms counts the specs of TestStreamKernel whose programs
// StreamKernelTo took.
var sunkPrograms int

// checkStreamed runs the ops of cg in key order and checks every expr op
// whose first input a from_zarr op makes against its streamed run; it
// returns how many it checked.
func checkStreamed(t *testing.T, ctx context.Context, cg *chunk.Graph, r *rand.Rand, what string) int {
	t.Helper()
	sinks := 0
	defer func() {
		if sinks > 0 {
			sunkPrograms++
		}
	}()
	chunks := make([]*tensor.Array, len(cg.Ops))
	checked := 0
	for _, op := range cg.Ops {
		in := make([]*tensor.Array, len(op.Inputs))
		for i, k := range op.Inputs {
			in[i] = chunks[k]
		}
		out, err := kernel.Run(ctx, op, in)
		if err != nil {
			t.Fatalf("%s: op %d (%s): %v", what, op.Key, op.Name(), err)
		}
		chunks[op.Key] = out
		if op.Kind != chunk.KindExpr || len(op.Inputs) == 0 || cg.Ops[op.Inputs[0]].Kind != chunk.KindFromZarr {
			continue
		}
		checked++
		x := in[0]
		es := x.DType.Size()
		block := op.Args.(chunk.ExprArgs).Block
		for _, sizes := range [][]int{{1}, {block - 1}, {block}, {block + 1}, {3, 5000, 1}, {x.Len()}, nil} {
			sin := slices.Clone(in)
			sin[0] = nil
			pieces := 0
			got, ok, err := expr.StreamKernel(ctx, op, sin, 0, x.DType, func(visit func(int, []byte) error) (bool, error) {
				for off, i := 0, 0; off < x.Len(); i++ {
					k := r.IntN(3*block) + 1
					if sizes != nil {
						k = sizes[i%len(sizes)]
					}
					k = min(k, x.Len()-off)
					pieces++
					if err := visit(off*es, x.Data[off*es:(off+k)*es]); err != nil {
						return true, err
					}
					off += k
				}
				return true, nil
			})
			if err != nil || !ok {
				t.Fatalf("%s: op %d streamed in %v: ok %v, %v", what, op.Key, sizes, ok, err)
			}
			if got.DType != out.DType || !slices.Equal(got.Shape, out.Shape) || !slices.Equal(got.Data, out.Data) {
				t.Fatalf("%s: op %d (%s) streamed in %d pieces of %v: not ExprKernel's chunk", what, op.Key, op.Name(), pieces, sizes)
			}
			// Its output a piece at a time, for an elementwise program;
			// declined, with nothing sunk, for one that reduces.
			var sunk []byte
			ok, err = expr.StreamKernelTo(ctx, op, sin, 0, x.DType, func(visit func(int, []byte) error) (bool, error) {
				for off, i := 0, 0; off < x.Len(); i++ {
					k := r.IntN(3*block) + 1
					if sizes != nil {
						k = sizes[i%len(sizes)]
					}
					k = min(k, x.Len()-off)
					if err := visit(off*es, x.Data[off*es:(off+k)*es]); err != nil {
						return true, err
					}
					off += k
				}
				return true, nil
			}, func(off int, piece []byte) error {
				if off != len(sunk) {
					t.Fatalf("%s: op %d sunk a piece at %d after %d bytes", what, op.Key, off, len(sunk))
				}
				sunk = append(sunk, piece...)
				return nil
			})
			reduces := slices.ContainsFunc(op.Args.(chunk.ExprArgs).Code, func(in chunk.ExprInstr) bool { return in.Op == chunk.ExprReduce })
			switch {
			case err != nil:
				t.Fatalf("%s: op %d streamed to a sink in %v: %v", what, op.Key, sizes, err)
			case reduces && (ok || sunk != nil):
				t.Fatalf("%s: op %d reduces, yet streamed to a sink (ok %v, %d bytes)", what, op.Key, ok, len(sunk))
			case !reduces && (!ok || !slices.Equal(sunk, out.Data)):
				t.Fatalf("%s: op %d (%s) streamed to a sink in pieces of %v: ok %v, not ExprKernel's chunk (%d bytes of %d)", what, op.Key, op.Name(), sizes, ok, len(sunk), len(out.Data))
			}
			if !reduces {
				sinks++
			}
		}
	}
	return checked
}
