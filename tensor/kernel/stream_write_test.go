package kernel

import (
	"bytes"
	"fmt"
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
)

// anomalyOp is the expr program of x - m over a chunk of dt and shape
// (t, lat, lon), m of shape (lat, lon) broadcast along t.
func anomalyOp(dt tensor.DType, shape []int) *chunk.Op {
	code := []chunk.ExprInstr{
		{Op: chunk.ExprLoad, Dst: 0, Input: 0, DType: dt},
		{Op: chunk.ExprBcast, Dst: 1, Input: 1, DType: dt},
		{Op: chunk.ExprElem, Kind: tensor.OpSubtract, Dst: -1, Src: []int{0, 1}, DType: dt, Elem: chunk.ElemArgs{Compute: dt}},
	}
	return &chunk.Op{Kind: chunk.KindExpr, Inputs: []int{0, 1}, Shape: slices.Clone(shape), DType: dt,
		Args: chunk.ExprArgs{Shape: slices.Clone(shape), Block: 4096, Regs: 2, Code: code, Members: []string{"subtract"}}}
}

// TestStreamWrite runs fuse(from_zarr+expr(subtract)+to_zarr.write) of
// blosc chunks by streamWrite (read, computed and encoded a block at a
// time) and checks the file it writes against the general path's (the
// chunk read, the program run, the chunk encoded whole) byte for byte:
// float32 and float64 with NaNs, a climate chunk of 12 blosc blocks and
// chunks whose blocks are no multiple of the program's, written with
// lz4, blosclz and zstd inside blosc and each shuffle. A store that is
// not blosc, and a chunk blosc stores copied (noise), are declined, and
// the fuse op writes the same file by the general path.
func TestStreamWrite(t *testing.T) {
	dir, ctx := dataDir(t)
	seed := uint64(60)
	for _, c := range []struct {
		dt      tensor.DType
		shape   []int
		in, out string // the compressors read and written
		shuffle int
		noise   bool
		streams bool
	}{
		{tensor.Float32, []int{24, 181, 360}, "blosc", "blosc", 1, false, true},
		{tensor.Float32, []int{7, 13, 29}, "blosc", "blosc", 1, false, true},
		{tensor.Float64, []int{5, 31, 677}, "blosc", "blosc", 2, false, true},
		{tensor.Float64, []int{5, 31, 677}, "blosc", "blosc", 1, false, true},
		{tensor.Float32, []int{9, 50, 301}, "blosc", "blosc", 0, false, true},
		{tensor.Float64, []int{3, 40, 600}, "blosc", "blosc-zstd", 1, false, true},
		{tensor.Float32, []int{6, 40, 100}, "blosc", "blosc-blosclz", 1, false, true},
		{tensor.Float32, []int{6, 10, 100}, "zstd", "blosc", 1, false, false},
		{tensor.Float32, []int{6, 10, 100}, "blosc", "zstd", 1, false, false},
		{tensor.Float32, []int{4, 64, 1024}, "blosc", "blosc", 0, true, false},
	} {
		seed++
		what := fmt.Sprintf("%v%v %s -> %s shuffle %d noise %v", c.dt, c.shape, c.in, c.out, c.shuffle, c.noise)
		read := streamStore(t, dir, c.dt, c.shape, c.in, 2, seed)
		x, err := Run(ctx, read, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := tensor.NewArray(c.dt, c.shape[1:])
		for i := range m.Len() {
			v := 280 + math.Sin(float64(i))
			if c.dt == tensor.Float32 {
				m.Float32s()[i] = float32(v)
			} else {
				m.Float64s()[i] = v
			}
		}
		if c.noise {
			// Values whose bytes are noise: m is their negation, so that x -
			// m is x + x, noise too.
			r := rand.New(rand.NewPCG(seed, 9))
			for i := range x.Data {
				x.Data[i] = byte(r.Uint32())
			}
			for i, v := range x.Float32s() {
				if v != v || math.IsInf(float64(v), 0) {
					x.Float32s()[i] = 1
				}
			}
			clear(m.Data)
			za0 := read.Args.(chunk.ZarrArgs)
			enc, err := zarr.FromDesc(&za0.Array).Encode(x.Data)
			if err != nil {
				t.Fatal(err)
			}
			za := read.Args.(chunk.ZarrArgs)
			if err := os.WriteFile(filepath.Join(dir, za.Path, "0.0.0"), enc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		comp, cname, _ := strings.Cut(c.out, "-")
		arr, err := zarr.New(c.shape, c.shape, c.dt, 2, comp)
		if err != nil {
			t.Fatal(err)
		}
		if len(arr.Codecs) == 1 && arr.Codecs[0].ID == "blosc" {
			arr.Codecs[0].Shuffle = c.shuffle
			if cname != "" {
				arr.Codecs[0].Cname = cname
			}
		}
		write := func(temp string) *chunk.Op {
			if err := os.MkdirAll(filepath.Join(dir, temp), 0o755); err != nil {
				t.Fatal(err)
			}
			return &chunk.Op{Kind: chunk.KindToZarrWrite, Inputs: []int{0, 1}, Shape: []int{}, DType: tensor.Bool,
				Args: chunk.ZarrWriteArgs{Path: temp + ".zarr", Temp: temp, Array: arr.Desc(), Index: make([]int, 3), Offsets: [][]int{make([]int, 3)}}}
		}
		e := anomalyOp(c.dt, c.shape)
		y, err := Run(ctx, e, []*tensor.Array{x, m})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		general := fmt.Sprintf("general-%d", seed)
		if _, err := Run(ctx, write(general), []*tensor.Array{y, done()}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want, err := os.ReadFile(filepath.Join(dir, general, "0.0.0"))
		if err != nil {
			t.Fatal(err)
		}
		// blosc stores a chunk that does not compress copied, which the
		// stream declines (ErrNotStreamed): the noise, and here the float64
		// anomaly bit-shuffled.
		copied := len(want) >= 16 && want[2]&0x02 != 0
		if c.noise && !copied {
			t.Fatalf("%s: the noise was compressed", what)
		}
		// The fuse op's inputs: m, then the create op's chunk.
		me, we := *e, *write(fmt.Sprintf("streamed-%d", seed))
		me.Inputs, we.Inputs = []int{0, 1}, []int{0, 2}
		op := &chunk.Op{Kind: chunk.KindFuse, Inputs: []int{0, 1}, Shape: []int{}, DType: tensor.Bool,
			Args: chunk.FuseArgs{Members: []chunk.Op{*read, me, we}}}
		members := op.Args.(chunk.FuseArgs).Members
		h, ok := streamExprHead(members)
		if ok {
			ok, err = streamWrite(ctx, h, members, []*tensor.Array{m, done()})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		if ok != (c.streams && !copied) {
			t.Fatalf("%s: streamed %v, want %v", what, ok, c.streams && !copied)
		}
		streamed := filepath.Join(dir, fmt.Sprintf("streamed-%d", seed), "0.0.0")
		if ok {
			got, err := os.ReadFile(streamed)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: streamed %d bytes, the general path %d, equal %v", what, len(got), len(want), bytes.Equal(got, want))
			}
			os.Remove(streamed)
		} else if _, err := os.Stat(streamed); err == nil {
			t.Fatalf("%s: declined, yet wrote its file", what)
		}
		if _, err := Run(ctx, op, []*tensor.Array{m, done()}); err != nil {
			t.Fatalf("%s: fuse op: %v", what, err)
		}
		if got, err := os.ReadFile(streamed); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: the fuse op wrote %d bytes (%v), the general path %d", what, len(got), err, len(want))
		}
	}
}
