// Package gemm computes dense matrix products, C = alpha op(A) op(B) +
// beta C, and symmetric rank-k updates, C = alpha A Aᵀ + beta C, on
// row-major float64 and float32 matrices, fast: on amd64 CPUs with AVX2
// and FMA it runs register-blocked micro-kernels written in assembly;
// elsewhere it calls gonum's pure-Go BLAS, which is also the tests'
// reference.
//
// The method is Goto's, as OpenBLAS and BLIS use it. The product is cut
// into blocks sized from the CPU's caches (see blockSizes): a kc x nc
// block of B is packed once into micro-panels of nr columns and stays in
// L3 (or L2); for it, each mc x kc block of A is packed into micro-panels
// of mr rows and stays in L2; and for each pair of micro-panels a
// micro-kernel computes an mr x nr block of C in registers, over kc steps,
// with the B micro-panel in L1. Packing makes every transpose and leading
// dimension look the same to the kernel, and pads the edges with zeros, so
// there is one kernel a type; blocks of C at the edges are computed into a
// small buffer and added from there.
//
// The kernels' shape is 6 x 8 for float64 and 6 x 16 for float32: twelve
// YMM accumulators, two registers for a row of B and two for broadcasts of
// A, the 16 registers of AVX2. Rows of 8 float64 are C's own rows, so the
// kernel loads and stores C a cache line a row. Where the CPU has
// AVX-512F, float64 products run on a 20 x 8 kernel instead (kernelD512):
// twenty ZMM accumulators, one a row of C, each FMA broadcasting its value
// of A from memory, so that a step reads B once for 20 rows and issues one
// instruction an FMA. On Zen 4, which runs a 512-bit FMA as two 256-bit
// halves, the peak is the same; alone on packed panels it runs at 99% of
// the measured peak (the 6 x 8 one at 95%), and on 1000³ products it does
// 55 GFLOP a CPU-second against 53, the same within the noise on 4000³.
// It prefetches C's rows twice, at the start and 4 rounds before the
// update, since its A panel (40 KB) streams through L1.
//
// Packing runs in assembly where it is a copy or a transpose of whole
// vectors: B's panels of 64 bytes a row, and A's panels of float64 rows by
// 6 (AVX2's kernel) or by 4 (AVX-512's), transposed 4 x 4 in registers.
//
// DgemmFilled takes A and B as functions that make their values: the
// product asks for a few rows at a time just before it packs them, so a
// random block (marsfs' matmul ops draw them) is packed from cache and
// never stored whole.
//
// Packing buffers are reused (a small free list): fresh pages cost more to
// touch than a block's product on a machine that hands them out slowly.
//
// What was taken from whom (ideas, not code): the five loops around a
// micro-kernel, packing into micro-panels with zero padding, and blocks
// sized from L1 (kc), L2 (mc) and L3 (nc), from BLIS and Goto's paper;
// the 6 x 8 register block with two broadcast registers, the prefetch of
// C's rows before the loop and of the A panel ahead inside it, from BLIS'
// Haswell kernel; beta 0 never reading C, and the symmetric rank-k update
// as the general product restricted to the blocks of one triangle, from
// the reference BLAS and OpenBLAS' syrk drivers; the pure-Go path cut
// into blocks gonum computes serially, from what marsfs did before.
//
// Threads: a product runs on the goroutine that calls it. marsfs runs one
// kernel a core already; a product shared by two goroutines (one packed
// block of B for both, as OpenBLAS' threads do) was measured and made no
// more GFLOP a CPU-second than one product a core (see the commit that
// dropped it), so it was left out.
package gemm
