// Package openblas makes gonum's blas64 and blas32 packages call OpenBLAS,
// through gonum's cgo binding, with one OpenBLAS thread a call.
//
// Importing it is the whole interface: its init switches the
// implementations. Its code builds only with the openblas build tag (and
// cgo), and then needs libopenblas at build and run time (Debian:
// libopenblas-dev); without the tag the package is empty, so that a plain
// build of marsfs needs no C library.
//
// The worker processes run it (with the openblas tag); under `marsfs up
// --workers 0`, whose one worker is in the scheduler's process, there too.
package openblas
