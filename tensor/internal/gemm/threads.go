package gemm

import "sync"

// runShared is run on threads goroutines sharing each packed block of B,
// as OpenBLAS' threads do: the threads pack a block of B together, then
// each takes every threads-th block of rows of A, packs it into its own
// buffer and multiplies it by the shared block into its own rows of C.
// It is an experiment (see BenchmarkShared): marsfs runs a kernel a core.
func (p *product[T]) runShared(ar *arch[T], threads int) {
	p.check()
	if p.m == 0 || p.n == 0 {
		return
	}
	if p.k == 0 || p.alpha == 0 {
		p.scale()
		return
	}
	mr, nr := ar.mr, ar.nr
	kc := min(ar.kc, p.k)
	mc := min(ar.mc, roundUp(p.m, mr))
	nc := min(ar.nc, roundUp(p.n, nr))
	threads = max(1, min(threads, (p.m+mc-1)/mc))
	own := make([]*buffers[T], threads)
	for t := range own {
		own[t] = ar.get(mc*kc, 0)
		defer ar.put(own[t])
	}
	shared := ar.get(0, kc*nc)
	defer ar.put(shared)
	var wg sync.WaitGroup
	for jc := 0; jc < p.n; jc += nc {
		nb := min(nc, p.n-jc)
		panels := (nb + nr - 1) / nr
		for pc := 0; pc < p.k; pc += kc {
			kb := min(kc, p.k-pc)
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			for t := range threads {
				j0, j1 := t*panels/threads*nr, min(nb, (t+1)*panels/threads*nr)
				if j0 >= j1 {
					continue
				}
				wg.Go(func() {
					packB(shared.b[j0*kb:], p.b, p.ldb, p.transB, pc, jc+j0, kb, j1-j0, nr)
				})
			}
			wg.Wait()
			for t := range threads {
				bufs := &buffers[T]{a: own[t].a, b: shared.b, c: own[t].c}
				wg.Go(func() {
					for ic := t * mc; ic < p.m; ic += threads * mc {
						mb := min(mc, p.m-ic)
						if p.tri == upperTriangle && ic >= jc+nb {
							break
						}
						if p.tri == lowerTriangle && ic+mb <= jc {
							continue
						}
						packA(bufs.a, p.a, p.lda, p.transA, ic, pc, mb, kb, mr)
						p.macro(ar, bufs, ic, jc, mb, nb, kb, beta)
					}
				})
			}
			wg.Wait()
		}
	}
}
