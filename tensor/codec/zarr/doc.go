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
// format 3 crc32c and sharding_indexed (read only).
//
// Speed is the C libraries' (c-blosc, liblz4, libzstd through numcodecs,
// what Dask reads with), on one core, measured side by side on the same
// chunks by bench/codecs.py and BenchmarkCodecs. The policy that gets
// there:
//
//   - Decoding writes into the chunk's own memory (Decode's dst), never a
//     whole-chunk intermediate. Blosc's blocks are independent: each is
//     decompressed into a block-sized scratch buffer from a pool, which
//     stays in cache, and unshuffled from there into the chunk; an
//     unshuffled block decompresses straight into the chunk. zstd and
//     lz4 decode into the chunk itself. A reader that only folds the
//     elements into something small (a reduction's sums, an expression's
//     blocks) takes blosc's blocks one at a time from DecodeBlocks, in
//     the block buffer, and the chunk is never written at all;
//     DecodeBlocksAt reads each block's compressed bytes from the file as
//     it goes, so that the file is not held whole either, and
//     DecodePiecesAt hands a float32 byte-shuffled block over 16 KB at a
//     time, unshuffled from its planes where they lie (a plane stored
//     raw is not copied), into a piece that stays in L1.
//   - Blosc's frame, its shuffles, LZ4's block format and BloscLZ are
//     written here (no pure-Go blosc could be had, and pierrec/lz4's
//     decoder copied the runs of shuffled floats a byte at a time): the
//     byte shuffles of 4- and 8-byte elements and the bit transpose in
//     AVX2 assembly, the LZ4 decoder in amd64 assembly, each beside a
//     pure-Go loop that other CPUs and the purego build tag use and that
//     the tests hold the assembly to. The bit shuffle is the byte shuffle,
//     an 8 x 8 bit transpose of each word, and the byte shuffle of the
//     words (shuffle.go).
//   - Encoding lays a blosc frame out as c-blosc 1.x does (its block
//     size for the level, codec and typesize; blocks of the fast codecs
//     split into one stream a byte plane; lz4 at c-blosc's acceleration,
//     10 - clevel), so that what zarr-python reads back costs it what its
//     own frames do, and the ratio is c-blosc's within a few percent.
//     EncodeTo writes into a buffer the caller reuses: a new output a
//     chunk costs more in page faults than lz4 takes to fill it. A
//     chunk made a piece at a time is encoded as it comes (ChunkEncoder:
//     each block compressed once whole, the same frame), so that it is
//     never whole in memory; one blosc would store copied is left to
//     Encode.
//   - zstd, zlib and gzip are klauspost/compress's, the fastest Go
//     implementations to be had (bench/README.md has them against
//     libzstd and zlib).
//
// Corrupt input is an error that says what is wrong (the codec, the
// block, the stream), never a panic nor a write outside the chunk: every
// decoder has a Fuzz function.
//
// Both processes run it: the scheduler reads an array's metadata when a
// spec names it, the workers read and write its chunks.
package zarr
