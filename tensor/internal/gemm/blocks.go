package gemm

import "github.com/klauspost/cpuid/v2"

// The archs of the two types, their blocks sized from this CPU's caches:
// float64 products run on the AVX-512 kernel (20 x 8) where the CPU has
// it, else on the AVX2 one (6 x 8). Tests run both.
var (
	archF64AVX2   = newArch(kernelF64, 6, 8, 8)
	archF64AVX512 = newArch(kernelF64x20, 20, 8, 8) // not used unless have512
	archF64       = pick(have512, archF64AVX512, archF64AVX2)
	archF32       = newArch(kernelF32, 6, 16, 4)
)

func pick[T any](cond bool, yes, no T) T {
	if cond {
		return yes
	}
	return no
}

func newArch[T float32 | float64](kernel func(k int, a, b, c *T, ldc int, alpha, beta T), mr, nr, size int) *arch[T] {
	l1, l2, l3 := cacheSizes()
	mc, kc, nc := blockSizes(l1, l2, l3, mr, nr, size)
	return &arch[T]{kernel: kernel, mr: mr, nr: nr, mc: mc, kc: kc, nc: nc}
}

// cacheSizes returns the CPU's L1 data, L2 and L3 cache sizes in bytes,
// or Zen 4's where the CPU does not say.
func cacheSizes() (l1, l2, l3 int) {
	c := cpuid.CPU.Cache
	l1, l2, l3 = c.L1D, c.L2, c.L3
	if l1 <= 0 {
		l1 = 32 << 10
	}
	if l2 <= 0 {
		l2 = 1 << 20
	}
	if l3 <= 0 {
		l3 = 32 << 20
	}
	return l1, l2, l3
}

// blockSizes chooses the cache blocks for elements of size bytes and a
// micro-kernel of mr x nr:
//   - kc, the depth of every block, so that a micro-panel of B (kc x nr),
//     which the kernel reads once for each micro-panel of A, fills half of
//     L1, leaving the rest to the A micro-panel and C's rows streaming by;
//   - mc so that the packed block of A (mc x kc), read once for every
//     micro-panel of B, takes a quarter of L2: the rest holds the B
//     micro-panels and C's rows passing through, and the block of
//     another product when two share the core (marsfs runs more kernels
//     than cores). On 1000³ products, a quarter (126 rows) did 2-4% more
//     GFLOP a CPU-second than a half (252), in alternated runs;
//   - nc so that the packed block of B (kc x nc) takes an eighth of L3,
//     which the other cores' products share, at most 4096 columns.
//
// On Zen 4 (32 KiB, 1 MiB, 32 MiB), float64: kc 256, mc 126, nc 2048.
func blockSizes(l1, l2, l3, mr, nr, size int) (mc, kc, nc int) {
	kc = clamp(l1/2/(nr*size)/8*8, 64, 512)
	mc = clamp(l2/4/(kc*size)/mr*mr, mr, 64*mr)
	nc = clamp(l3/8/(kc*size)/nr*nr, 16*nr, 4096)
	return mc, kc, nc
}

func clamp(x, lo, hi int) int { return max(lo, min(hi, x)) }
