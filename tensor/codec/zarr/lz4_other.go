//go:build !amd64 || purego

package zarr

func lz4DecodeBlock(dst, src []byte) int { return lz4DecodeGo(dst, src) }
