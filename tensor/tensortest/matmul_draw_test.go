package tensortest

import (
	"fmt"
	"strings"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
)

// The random blocks only matmul ops read are drawn by them: the products
// come out bit for bit as when the blocks are stored, and the blocks' ops
// leave the graph.
func TestDrawMatmulBlocks(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		drawn int // random ops the optimized graph no longer has
	}{
		{"A = rand(40, 40, chunks=10, seed=1)\nB = rand(40, 40, chunks=10, seed=2)\nr = (A @ B).sum()", 32},
		{"A = rand(40, 30, chunks=(10, 7), seed=1)\nB = uniform(-1, 1, size=(30, 20), chunks=(7, 15), seed=2)\nC = A @ B", 20 + 10},
		// Twelve chunks along k: three groups a product, added by matmul.sum.
		{"A = rand(8, 24, chunks=(8, 2), seed=1)\nB = rand(24, 8, chunks=(2, 4), seed=2)\nC = A @ B", 12 + 24},
		// A kept as an output: stored. B's add redraws it, which leaves
		// the products its only readers.
		{"A = rand(20, 20, chunks=10, seed=1)\nB = rand(20, 20, chunks=10, seed=2)\nC = A @ B\nD = B + 1\nfetch A, C, D", 4},
		// B read by a product and a sum of B's own: stored.
		{"A = rand(20, 20, chunks=10, seed=1)\nB = rand(20, 20, chunks=10, seed=2)\nC = A @ B\nD = B.cumsum(axis=0)\nfetch C, D", 4},
		// Normal values cost more to draw: stored.
		{"A = randn(20, 20, chunks=10, seed=1)\nB = rand(20, 20, chunks=10, seed=2)\nC = A @ B", 4},
		// A's one block is read by 17 products: stored; B's are drawn.
		{"A = rand(8, 8, chunks=8, seed=1)\nB = rand(8, 17, chunks=(8, 1), seed=2)\nC = A @ B", 17},
		// Blocks larger than the products' cache blocks, with edges: the
		// products make the values as they pack them (gemm.DgemmFilled).
		{"A = rand(300, 530, chunks=(300, 265), seed=3)\nB = rand(530, 290, chunks=(265, 290), seed=4)\nC = A @ B", 4},
		// A product with a rechunked operand reads the assembled blocks.
		{"A = rand(12, 12, chunks=(12, 4), seed=1)\nB = rand(12, 12, chunks=(6, 12), seed=2)\nC = A @ B", 0},
	} {
		t.Run(strings.ReplaceAll(tc.spec, "\n", "; "), func(t *testing.T) {
			cg := tileSpec(t, tc.spec)
			want := computeAll(t, cg)
			for _, opt := range []fuse.Options{{FuseExpr: true}, {FuseExpr: true, Fuse: true}} {
				f := fuse.Optimize(cg, opt)
				fk, ck := kinds(fuse.Optimize(cg, fuse.Options{FuseExpr: true})), kinds(cg)
				gens := func(k map[string]int) int { return k[tensor.OpRand] + k[tensor.OpRandn] + k[tensor.OpUniform] }
				if got := gens(ck) - gens(fk); got != tc.drawn {
					t.Errorf("%d random blocks drawn, want %d", got, tc.drawn)
				}
				named := false
				for _, op := range f.Ops {
					named = named || strings.Contains(op.Name(), "matmul(")
				}
				if named != (tc.drawn > 0) {
					t.Errorf("%+v: an op named matmul(...): %v, want %v", opt, named, tc.drawn > 0)
				}
				checkOutputs(t, gobGraph(t, f), cg.Outputs, want, true, fmt.Sprintf("%+v", opt))
			}
		})
	}
}

func TestDrawnMatmulName(t *testing.T) {
	f := fuse.Optimize(tileSpec(t, "A = rand(20, 20, chunks=10, seed=1)\nB = uniform(0, 1, size=(20, 20), chunks=10, seed=2)\nC = A @ B"), fuse.Options{FuseExpr: true})
	var names []string
	for _, op := range f.Ops {
		names = append(names, op.Name())
	}
	if want := "matmul(2 rand+2 uniform)"; !strings.Contains(strings.Join(names, " "), want) {
		t.Errorf("ops %v, want one named %s", names, want)
	}
}

// A matmul op whose blocks do not add up gets an error, not a panic.
func TestDrawnMatmulBadArgs(t *testing.T) {
	gen := chunk.Op{Kind: chunk.KindRand, Shape: []int{2, 2}, DType: tensor.Float64, Args: chunk.GenArgs{Offset: []int{0, 0}, Global: []int{2, 2}, Seed: 1}}
	two := tensor.NewArray(tensor.Float64, []int{2, 2})
	for _, tc := range []struct {
		name string
		args any
		in   []*tensor.Array
		want string
	}{
		{"missing input", chunk.MatmulArgs{Blocks: []chunk.Op{gen, {}}}, nil, "inputs for"},
		{"extra input", chunk.MatmulArgs{Blocks: []chunk.Op{gen, gen}}, []*tensor.Array{two}, "inputs for"},
		{"not random", chunk.MatmulArgs{Blocks: []chunk.Op{{Kind: tensor.OpAdd, Shape: []int{2, 2}, DType: tensor.Float64}, gen}}, nil, "no random"},
		{"odd", chunk.MatmulArgs{Blocks: []chunk.Op{gen}}, nil, "want pairs"},
		{"wrong args", chunk.GenArgs{}, []*tensor.Array{two, two}, "bad args"},
		{"wrong shape", chunk.MatmulArgs{Blocks: []chunk.Op{gen, {}}}, []*tensor.Array{tensor.NewArray(tensor.Float64, []int{3, 2})}, "blocks of shapes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &chunk.Op{Kind: chunk.KindMatmul, Inputs: make([]int, len(tc.in)), Shape: []int{2, 2}, DType: tensor.Float64, Args: tc.args}
			_, err := runNoPanic(op, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// A product that draws its blocks holds one drawn pair at a time, fused in
// a chain or not.
func TestScratchBytes(t *testing.T) {
	cg := tileSpec(t, "A = rand(40, 30, chunks=(10, 30), seed=1)\nB = rand(30, 20, chunks=(30, 20), seed=2)\nC = zeros((40, 20), chunks=(10, 20))\nr = (A @ B).sum()\ns = (C @ ones((20, 5))).sum()\nfetch r, s")
	for _, opt := range []fuse.Options{{FuseExpr: true}, {FuseExpr: true, Fuse: true}} {
		var drawn, plain int
		for _, op := range fuse.Optimize(cg, opt).Ops {
			switch b := op.ScratchBytes(); {
			case b == 8*(10*30+30*20):
				drawn++
			case b == 0:
				plain++
			default:
				t.Errorf("%+v: %s holds %d bytes of scratch", opt, op.Name(), b)
			}
		}
		if drawn != 4 {
			t.Errorf("%+v: %d ops hold a drawn pair, want the 4 products", opt, drawn)
		}
	}
}

// The large chunks a fused chain passes on go through scratch buffers,
// views of them included, and the results are those of the unfused graph.
func TestFuseChainScratch(t *testing.T) {
	for _, text := range []string{
		"A = rand(300, 300, chunks=150, seed=1)\nB = rand(300, 300, chunks=150, seed=2)\nr = (A @ B).sum(axis=0)",
		"A = rand(300, 300, chunks=150, seed=1)\nB = rand(300, 300, chunks=150, seed=2)\nr = (A @ B).T",
		"x = randn(400, 300, chunks=(400, 300), seed=3)\ny = x.T.reshape(120000)\nz = cumsum(y)",
		"x = randn(400, 300, chunks=(400, 300), seed=3)\nz = sort(abs(x.T), axis=1)",
	} {
		t.Run(strings.ReplaceAll(text, "\n", "; "), func(t *testing.T) {
			cg := tileSpec(t, text)
			want := computeAll(t, cg)
			for _, opt := range []fuse.Options{{Fuse: true}, {FuseExpr: true, Fuse: true}} {
				f := gobGraph(t, fuse.Optimize(cg, opt))
				fused := 0
				for _, op := range f.Ops {
					if op.Kind == chunk.KindFuse {
						fused++
					}
				}
				if fused == 0 {
					t.Fatalf("%+v: no fused chain", opt)
				}
				for range 2 { // the second run reuses the first's buffers
					checkOutputs(t, f, cg.Outputs, want, true, fmt.Sprintf("%+v", opt))
				}
			}
		})
	}
}
