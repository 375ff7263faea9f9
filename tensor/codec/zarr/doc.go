// Package zarr reads and writes Zarr arrays, formats 2 and 3, a chunk at
// a time: the metadata (.zarray, zarr.json), the key of each chunk in the
// store, and the codec pipeline that turns a chunk's stored bytes into its
// elements and back.
//
// The package does no I/O of chunks: Open reads the metadata from an
// fs.FS, and the caller reads and writes the chunk files themselves, so
// that each worker of marsfs reads only its own chunks. An Array is plain
// data (gob encodes it) so that the process that parses a spec can hand
// it to the workers.
//
// What a chunk's bytes hold, decoded: the elements of the whole chunk
// (edge chunks too are stored whole, padded), C order after the chunk's
// transpose (Perm: format 2's order "F", format 3's transpose codec), in
// the array's byte order. Codecs: none, zlib, gzip, zstd, lz4 (numcodecs'
// framing: a 4-byte little-endian size, then an LZ4 block), blosc (inner
// blosclz, lz4, lz4hc, snappy, zlib, zstd; byte and bit shuffle), and on
// format 3 crc32c and sharding_indexed (read only). Compression uses klauspost/compress and pierrec/lz4;
// blosc's frame, its shuffles and blosclz are written here (no Go blosc
// library could be had from the module proxy; see blosc.go).
//
// Both run it: the scheduler reads an array's metadata when a spec names
// it, the workers read and write its chunks.
package zarr
