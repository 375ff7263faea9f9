package tensortest

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"marsfs/tensor/chunk"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec/lang"
)

// kindsSeen collects the kinds of the ops of graphs, and of the members
// of their fused ops, with one op of each for its arguments.
type kindsSeen map[chunk.Kind]*chunk.Op

func (s kindsSeen) add(op *chunk.Op) {
	if op.Stored != 0 {
		return
	}
	if _, ok := s[op.Kind]; !ok {
		s[op.Kind] = op
	}
	switch a := op.Args.(type) {
	case chunk.FuseArgs:
		for i := range a.Members {
			s.add(&a.Members[i])
		}
	case chunk.MapsArgs:
		for i := range a.Members {
			s.add(&a.Members[i])
		}
	case chunk.MatmulArgs:
		for i := range a.Blocks {
			if a.Blocks[i].Kind != "" {
				s.add(&a.Blocks[i])
			}
		}
	}
}

// TestKinds ties the three lists of op kinds together: every kind
// chunk.Kinds names has a kernel, and the tiler and the fusers emit it
// (the NumPy catalogue's cases, tiled in ragged chunks with fusion off and
// on, and the specs below, emit every one); and every kind they emit is
// one of chunk.Kinds, has a kernel, and its op, arguments included, goes
// through gob as a worker receives it.
func TestKinds(t *testing.T) {
	all := chunk.Kinds()
	for _, k := range all {
		if _, ok := kernel.KernelFor(k); !ok {
			t.Errorf("kind %s has no kernel", k)
		}
	}
	seen := kindsSeen{}
	collect := func(cg *chunk.Graph) {
		for _, op := range cg.Ops {
			seen.add(op)
		}
	}
	ctx := context.Background()
	mode := catModes[1] // ragged: trees of combines, several chunks a block
	for _, c := range loadCatalogue(t) {
		if c.refused {
			continue
		}
		env := newCatEnv()
		for k, name := range c.inputs {
			in := loadGolden(t, c.name, "in_"+name)
			env.store(t, name, in, mode.chunks(k, in))
		}
		g, err := lang.Parse(strings.ReplaceAll(c.spec, "{c}", mode.creator), env.tensors)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, o := range catOptims {
			if _, err := ComputeGraph(ctx, g, env.tensors, env.stored, o.opt, collect); err != nil {
				t.Fatalf("%s%s: %v", c.name, o.name, err)
			}
		}
	}
	for _, tc := range catalogueSpecs {
		g, err := lang.ParseText(fetchAll(tc.src, tc.wants), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range catOptims {
			if _, err := ComputeGraph(ctx, g, nil, nil, o.opt, collect); err != nil {
				t.Fatalf("%s%s: %v", tc.name, o.name, err)
			}
		}
	}
	for k, op := range seen {
		if !slices.Contains(all, k) {
			t.Errorf("kind %s is emitted (%s) but not one of chunk.Kinds", k, op.Name())
		}
		if _, ok := kernel.KernelFor(k); !ok {
			t.Errorf("kind %s is emitted but has no kernel", k)
		}
		if dec := gobRoundTrip(t, op); dec.Kind != k || (op.Args == nil) != (dec.Args == nil) {
			t.Errorf("kind %s: after gob, %s with %T", k, dec.Kind, dec.Args)
		}
	}
	// What the catalogue lacks: random generators, sibling reductions of
	// one expression (expr.part), a Cholesky factor of more blocks than an
	// update takes (linalg.cholesky.update), files, and a k-means
	// iteration (label.sums).
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fctx := kernel.WithData(ctx, root)
	for _, src := range []string{`x = rand(12, 12, chunks=2, seed=1)
a = x @ x.T + 12 * eye(12, chunks=2)
l = linalg.cholesky(a)
u = uniform(1, 2, size=(30, 20), chunks=(8, 8), seed=4) + randn(30, 20, chunks=(8, 8), seed=2)
v = normal(0, 1, size=(30, 20), chunks=(8, 8), seed=5) * randint(0, 9, size=(30, 20), chunks=(8, 8), seed=3)
w = u + v
s = w.sum(axis=0)
m = w.mean(axis=1)
to_npy(l, "l.npy", overwrite=True)
to_zarr(u, "u.zarr", overwrite=True)
fetch l, s, m`, `l = from_npy("l.npy", chunks=5)
u = from_zarr("u.zarr")
y = l.sum() + u.sum()`, `x = rand(60, 4, chunks=(20, 4), seed=6) * 8
c = x[:3]
d = (c*c).sum(axis=1) - 2*(x @ c.T)
oh = (d.argmin(axis=1)[:, None] == arange(3)).astype(float64)
k = (oh.T @ x) / oh.sum(axis=0)[:, None]`} {
		g, err := lang.ParseData(src, nil, root.FS())
		if err != nil {
			t.Fatalf("%v:\n%s", err, src)
		}
		for _, o := range catOptims {
			if _, err := ComputeGraph(fctx, g, nil, nil, o.opt, collect); err != nil {
				t.Fatalf("%s%s: %v", src, o.name, err)
			}
		}
	}
	var missing []string
	for _, k := range all {
		if seen[k] == nil {
			missing = append(missing, string(k))
		}
	}
	if len(missing) > 0 {
		t.Errorf("no tiling emits the %d kinds %s", len(missing), strings.Join(missing, " "))
	}
}
