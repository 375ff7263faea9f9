package tensortest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/spec/lang"
	"marsfs/tensor/tile"
)

// columnSpecs are specs of reductions over elementwise expressions, some
// of whose columns the tiler fuses (columns: the graph StagesFused
// makes has fewer ops) and some not.
var columnSpecs = []struct {
	spec    string
	columns bool
}{
	{"s = (ones(1000, chunks=10) + 1).sum()", true},
	{"s = (ones(1005, chunks=10) + 1).sum()", true}, // a short last chunk
	{"s = (ones(10, chunks=10) + 1).sum()", true},   // one column
	{"x = ones((30, 40), chunks=(7, 9))\ns = (x * 3 - 1).sum(axis=0)", true},
	{"x = ones((30, 40), chunks=(7, 9))\ns = (x * 3 - 1).mean(axis=1, keepdims=True)", true},
	{"s = (ones((10, 10), chunks=5) * 2 + ones((10, 10), chunks=5)).sum()", true},
	{"s = (ones((10, 10), chunks=5) * full((1, 1), 3.0, chunks=1) - zeros((1,), chunks=1)).prod()", true},
	{"x = arange(100, chunks=9)\ns = where(x > 50, x, 0).sum()", true},
	{"s = (arange(100, chunks=9) > 50).any()", true},
	{"s = (arange(100, chunks=7) * 0.5).var(ddof=1)", true},
	{"x = rand(1000, chunks=100, seed=1)\ns = (x * 2 + 1).std()", true},
	{"a = rand(1000, chunks=64, seed=1)\nb = randn(1000, chunks=64, seed=2)\ns = (a * b + a).max()", true},
	{"s = count_nonzero(randint(0, 3, size=(50, 8), chunks=(9, 4), seed=7) * 1)", true},
	{"s = nansum(linspace(0, 1, 500, chunks=64) / 0)", true},
	{"s = (eye(30, 20, k=2, chunks=(8, 8)) + 1).sum(axis=0)", true},
	{"s = (ones(100, chunks=10) + 1).sum()\nt = (arange(50, chunks=5) * 2).max()\nfetch s, t", true},
	{"u = unique(arange(20, chunks=5) % 3)\ns = (ones(100, chunks=10) + 1).sum()\nfetch u, s", true},
	{"s = (arange(100, chunks=7) % 3 - 1).sum()", true},
	{"s = (ones((6, 8, 10), chunks=(2, 3, 4), dtype=float32) * 1.5).sum(axis=(0, 2), keepdims=True)", true},
	{"s = (-(arange(60.0, chunks=11) ** 2)).astype(int32).min()", true},
	{"s = (ones(64, chunks=8) > 0).mean()", true},
	{"x = rand(90, chunks=16, seed=2)\ny = rand(90, chunks=16, seed=3)\ns = where(x > y, x, y * 2).all()", true},
	{"x = rand(100, chunks=10, seed=2)\ns = (x * x + x).sum()\nt = x.sum()\nfetch s, t", false}, // x read outside
	{"s = (ones(100, chunks=10) + 1).sum()\nt = (ones(100, chunks=10) + 1).sum()\nfetch s, t", true},
	// Columns that are not apart: tiled whole, then fused.
	{"x = ones(100, chunks=10) + 1\ns = x.sum()\nfetch x, s", false},              // an output inside
	{"x = ones(100, chunks=10) + 1\ns = x.sum()\nm = x.max()\nfetch s, m", false}, // siblings
	{"o = ones(100, chunks=10)\ns = (o + 1).sum()\nfetch o, s", false},
	{"s = (ones(100, chunks=10) + ones(100, chunks=20)).sum()", false},          // rechunked
	{"s = (ones((10, 10), chunks=5) + arange(10, chunks=5)).sum()", false},      // broadcast row
	{"s = (ones((10, 10), chunks=5) + rand(1, seed=1, chunks=1)).sum()", false}, // broadcast rand
	{"s = ones(100, chunks=10).sum()", true},
	{"s = rand(1000, chunks=100, seed=1).mean()", true},
	{"s = ones((), dtype=int32).sum()\nt = full((1, 1), 2.0).max()\nfetch s, t", false}, // one element
	{"x = rand(200, 50, chunks=(20, 10), seed=1)\ns = x.sum(axis=0)\nm = x.mean(axis=1)\nfetch s, m", false},
	{"s = (arange(100, chunks=10) * 2).argmax()", false},
}

// TestStagesFused checks that FuseExpr of the graph StagesFused
// makes is the graph FuseExpr makes of Stages', op for op, for the
// specs above and those FuseExpr is tested on, and that both graphs
// compute the same bits.
func TestStagesFused(t *testing.T) {
	type tc struct {
		spec    string
		columns int // 1: the tiler fuses columns, 0: it does not, -1: either
	}
	var cases []tc
	for _, c := range columnSpecs {
		n := 0
		if c.columns {
			n = 1
		}
		cases = append(cases, tc{c.spec, n})
	}
	for _, c := range fuseSpecs {
		cases = append(cases, tc{c.spec, -1})
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.spec, "\n", "; "), func(t *testing.T) {
			tile := func(fused bool) *tile.Stage {
				g, err := lang.Parse(c.spec, nil)
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				st, err := tile.StagesWith(g, nil, tile.Options{Fused: fused})
				if err != nil {
					t.Fatalf("tile (fused %v): %v", fused, err)
				}
				return st
			}
			ref, got := tile(false), tile(true)
			if fewer := len(got.Graph.Ops) < len(ref.Graph.Ops); c.columns >= 0 && fewer != (c.columns == 1) {
				t.Errorf("%d ops tiled fused, %d not: want columns fused %v", len(got.Graph.Ops), len(ref.Graph.Ops), c.columns == 1)
			}
			if got.Results != ref.Results || !reflect.DeepEqual(got.Probes, ref.Probes) || got.Last() != ref.Last() {
				t.Errorf("stage: results %d probes %v last %v, want %d %v %v", got.Results, got.Probes, got.Last(), ref.Results, ref.Probes, ref.Last())
			}
			for _, opt := range []fuse.Options{{FuseExpr: true}, {FuseExpr: true, Fuse: true}} {
				want, have := fuse.Optimize(ref.Graph, opt), fuse.Optimize(got.Graph, opt)
				if err := sameChunkGraph(have, want); err != nil {
					t.Fatalf("%+v: %v", opt, err)
				}
			}
			if !ref.Last() {
				return // the later stages need the first one's chunks
			}
			// Unoptimized, the expr ops run as well, but for the
			// reassociated sums of fused reductions.
			want, have := computeAll(t, ref.Graph), computeAll(t, got.Graph)
			for i := range want {
				if d := sameValues(have[i], want[i], false); d != "" {
					t.Errorf("output %d %s", i, d)
				}
			}
		})
	}
}

// sameChunkGraph reports how got differs from want, op by op.
func sameChunkGraph(got, want *chunk.Graph) error {
	if len(got.Ops) != len(want.Ops) {
		return fmt.Errorf("%d ops, want %d", len(got.Ops), len(want.Ops))
	}
	// Compared as Go syntax, which spells every field, and NaN alike;
	// the ranges, out of line, by what they hold.
	spell := func(op chunk.Op) string {
		rs := op.RangeList()
		op.Ranges = nil
		return fmt.Sprintf("%#v ranges %#v", op, rs)
	}
	for k, w := range want.Ops {
		if g, ws := spell(*got.Ops[k]), spell(*w); g != ws {
			return fmt.Errorf("op %d:\n got %s\nwant %s", k, g, ws)
		}
	}
	if !reflect.DeepEqual(got.Outputs, want.Outputs) {
		return fmt.Errorf("outputs %+v, want %+v", got.Outputs, want.Outputs)
	}
	return nil
}

// TestFuseExprSharesKeptOps checks that FuseExpr shares with the graph it
// reads the ops that keep their key and inputs, and copies the others, and
// that of a graph with nothing to fuse it keeps every op.
func TestFuseExprSharesKeptOps(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		shared int // ops shared, from the first
		same   bool
	}{
		// The scalar, then rand and add fused: the sum's ops move down.
		{"x = ones(4, chunks=2)\ny = rand(4, chunks=2, seed=1)\nz = y + 1\nfetch x, z", 2, false},
		{"x = arange(10, chunks=3)\ny = x.T\nfetch x, y", 4, true},
	} {
		g, err := lang.Parse(tc.spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		cg, err := tile.Graph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := fuse.Expr(cg)
		shared := 0
		for k, op := range f.Ops {
			if k < len(cg.Ops) && op == cg.Ops[k] {
				if op.Key != k {
					t.Errorf("%q: shared op %d has key %d", tc.spec, k, op.Key)
				}
				shared++
			}
		}
		if tc.same && shared != len(cg.Ops) || !tc.same && shared != tc.shared {
			t.Errorf("%q: %d of %d ops shared, want %d (all: %v)", tc.spec, shared, len(f.Ops), tc.shared, tc.same)
		}
		if tc.same && &f.Ops[0] == &cg.Ops[0] {
			t.Errorf("%q: the graph's op list is shared", tc.spec)
		}
	}
}
