package sched

import (
	"bytes"
	"context"
	"testing"
	"time"

	"marsfs/exec/engine"
	"marsfs/tensor"
)

// clusterSpecs are run both on a local scheduler (NewLocal) and on the cluster; the
// results must agree bit for bit, since the same kernels run on the same
// chunks wherever they run.
var clusterSpecs = []string{
	"x = rand(1000, chunks=100, seed=1)\ny = rand(1000, chunks=130, seed=2)\npi = 4 * ((x*x + y*y) < 1).mean()",
	"a = arange(24, chunks=5).reshape((4, 6))\nb = a.T @ a\nc = b.sum(axis=0)\nfetch b, c",
	"x = randn(60, 40, chunks=(16, 12), seed=3)\ns = x.std(axis=1)\nm = x.max()\nfetch s, m",
	"x = arange(100, chunks=7)\ny = x[3:90:4] * 2\nz = concatenate((y, y))\nfetch z",
	"x = rand(200, 10, chunks=(50, 10), seed=4)\nq, r = linalg.qr(x)\nfetch q, r",
	"x = randint(0, 10, 500, chunks=64, seed=5)\nh = bincount(x, minlength=10)\ns = sort(x)\nfetch h, s",
	"v = u.sum(axis=1) + u[:, 0]\nw = (u * 2).astype(float32)\nfetch v, w",
	"a = linspace(0, 1, 50, chunks=7)\nb = where(a > 0.5, sqrt(a), -a)\nc = clip(b, -0.3, 0.9).cumsum()\nfetch b, c",
	"m = randn(30, 20, chunks=(8, 6), seed=9)\nk = m.argmax(axis=0)\nt = (m.T @ m).astype(float32)\nr = m.reshape((20, 30))[::2, 1:]\nfetch k, t, r",
	"e = eye(12, chunks=5)\nf = (e * 3 + ones((12, 12), chunks=4)).var(axis=1, keepdims=True)\nfetch f",
	// Lengths the data decides: tiled in stages.
	"x = randint(0, 50, 3000, chunks=250, seed=6)\nv, c = unique(x, return_counts=True)\nw = (v * c).sum() + v[-1]\nb = bincount(x)[10:20]\nfetch v, c, w, b",
	"x = randint(-20, 20, 1000, chunks=90, seed=7)\nv = unique(x)",
	"y = unique(unique(u) * 2 % 5)\nz = y * 3 + y[0]\nfetch y, z",
	// Masks (in stages too) and the functions of issue 21.
	"x = randn(2000, chunks=170, seed=8)\nm = x[x > 0.3]\nr = u[u[:, 0] > 0]\nn = nonzero(u > 1)[1]\nfetch m, r, n",
	"a = randn(40, 30, chunks=(9, 7), seed=10)\nc = cov(a)\ne = einsum('ij,kj->ik', a, a)\nw, v = linalg.eigh(c)\nd = triu(roll(flip(a), 3, axis=1)).sum(axis=0) + diag(c)[:30]\nfetch c, e, w, d",
	// Tensors of earlier graphs, kept on the workers.
	"t = b.sum() + pi + z.mean()",
}

func specOutputs(t *testing.T, s *engine.Session, g *engine.Graph) []*tensor.Array {
	t.Helper()
	var outs []*tensor.Array
	for _, o := range g.Chunks().Outputs {
		outs = append(outs, fetchNamed(t, s, o.Name))
	}
	return outs
}

// runSpecs runs clusterSpecs on a fresh session of each engine and compares.
func runSpecs(t *testing.T, tc *testCluster) {
	lr := NewLocal(2)
	defer lr.Close()
	local := engine.New(lr)
	defer local.Close()
	remote := engine.New(tc.s)
	defer remote.Close()
	ls, err := local.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := remote.NewSession("test")
	if err != nil {
		t.Fatal(err)
	}
	u := tensor.NewArray(tensor.Float64, []int{12, 9})
	for i := range u.Float64s() {
		u.Float64s()[i] = float64(i%7) - 2.5
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, sess := range []*engine.Session{ls, rs} {
		if err := sess.Upload(ctx, "u", u); err != nil {
			t.Fatalf("upload: %v", err)
		}
	}
	ran := 0
	for _, spec := range clusterSpecs {
		lg, err := ls.Submit(spec)
		if err != nil {
			t.Logf("spec not supported here (%v):\n%s", err, spec)
			continue
		}
		if st := lg.Wait(ctx); st.State != engine.Succeeded {
			t.Logf("spec fails locally (%s):\n%s", lg.Err(), spec)
			continue
		}
		rg, err := rs.Submit(spec)
		if err != nil {
			t.Fatalf("cluster refused a spec the local engine ran: %v\n%s", err, spec)
		}
		st := rg.Wait(ctx)
		if st.State != engine.Succeeded {
			t.Fatalf("on the cluster: %s (%s)\n%s", st.State, rg.Err(), spec)
		}
		want, got := specOutputs(t, ls, lg), specOutputs(t, rs, rg)
		for i := range want {
			if want[i].DType != got[i].DType || !bytes.Equal(want[i].Data, got[i].Data) {
				t.Errorf("output %d of\n%s\ndiffers: cluster %v%v, local %v%v", i, spec, got[i].DType, got[i].Shape, want[i].DType, want[i].Shape)
			}
		}
		ran++
	}
	if ran < 6 {
		t.Errorf("only %d of %d specs ran", ran, len(clusterSpecs))
	}
	t.Logf("%d specs agree", ran)
	rs.Close()
	tc.waitHeld(0)
}

func TestSpecsOnCluster(t *testing.T) {
	runSpecs(t, newTestCluster(t, 2, false))
}

func TestSpecsOnWorkerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	runSpecs(t, newTestCluster(t, 2, true))
}

// TestSpecThroughput times a Monte Carlo spec of 2×10^7 elements on the
// local scheduler and on two worker processes (measurement; the machine's cores
// are shared by both).
func TestSpecThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	const spec = "x = rand(20000000, chunks=1000000, seed=1)\ny = rand(20000000, chunks=1000000, seed=2)\npi = 4 * ((x*x + y*y) < 1).mean()"
	tc := newTestCluster(t, 2, true)
	for _, r := range []struct {
		name   string
		runner engine.Runner
	}{{"local", newLocal(t, 2)}, {"2 worker processes", tc.s}} {
		e := engine.New(r.runner)
		s, err := e.NewSession("bench")
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		g, err := s.Submit(spec)
		if err != nil {
			t.Fatal(err)
		}
		st := waitDone(t, g)
		t.Logf("%s: %v for %d operands, peak %d chunks, %d bytes moved, pi %.5f",
			r.name, time.Since(begin), st.Operands, st.PeakChunks, st.TransferBytes, fetchNamed(t, s, "pi").Float64s()[0])
		e.Close()
	}
}
