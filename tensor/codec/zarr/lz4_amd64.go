//go:build amd64 && !purego

package zarr

// lz4DecodeBlock decodes the LZ4 block src into dst (lz4_amd64.s): the
// bytes written, or -1, -2, -3 for the errors of lz4Errs. SSE2 only,
// which every amd64 CPU has.
//
//go:noescape
func lz4DecodeBlock(dst, src []byte) int
