// Package kernel runs one chunk op: Run looks its Kind up in the one table
// of kernels (KernelFor) and computes its chunk from its input chunks.
//
// Kernels are deterministic: the same op on the same inputs gives the same
// bytes on any worker, which is what lets a lost chunk be made again.
// An error a kernel returns is marked ErrKernel, and executors do not retry
// it. Kernels take the memory of their outputs from the context's
// tensor.Alloc when there is one, so a worker's output lands straight in
// shared memory. Float products and factorizations call gonum's BLAS
// interfaces: by default gonum's pure-Go BLAS whose matrix products are
// tensor/internal/gemm's assembly kernels (blas_default.go), OpenBLAS
// with the openblas build tag. A product whose every pair of blocks is a
// block and its own transpose (the diagonal blocks of x.T @ x) computes
// one triangle with a symmetric rank-k update and mirrors it.
//
// The typed element loops are in kernel/elem; the machine that runs fused
// expression programs is kernel/expr.
//
// The worker processes run it; under `marsfs up --workers 0`, whose one
// worker is in the scheduler's process, there too.
package kernel
