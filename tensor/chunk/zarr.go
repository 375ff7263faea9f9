package chunk

import "marsfs/tensor"

// A ZarrArray is what the ops that read and write a Zarr array (ZarrArgs,
// ZarrWriteArgs) carry of its metadata: the fields of zarr.Array, as plain
// data, so that this package, which every process links, links no codec.
// zarr.Desc makes one of a zarr.Array, and zarr.FromDesc the array back.
type ZarrArray struct {
	Format    int
	Shape     []int
	Chunks    []int
	DType     tensor.DType
	BigEndian bool
	Perm      []int
	Fill      []byte
	Prefix    string
	Separator string
	Codecs    []ZarrCodec
	Shard     *ZarrShard
}

// A ZarrCodec is zarr.Codec's fields: one stage of a chunk's codec
// pipeline.
type ZarrCodec struct {
	ID       string
	Level    int
	Cname    string
	Shuffle  int
	Typesize int
}

// A ZarrShard is zarr.Shard's fields: how a store chunk holds inner chunks.
type ZarrShard struct {
	Inner        ZarrArray
	IndexAtStart bool
	IndexCRC     bool
}
