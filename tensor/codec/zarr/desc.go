package zarr

import "marsfs/tensor/chunk"

// Desc describes a as the chunk ops that read and write it carry it
// (chunk.ZarrArray): the same fields, so that package chunk, the contract
// every marsfs process links, need not link the codecs. The slices are
// shared, not copied.
func (a *Array) Desc() chunk.ZarrArray {
	d := chunk.ZarrArray{Format: a.Format, Shape: a.Shape, Chunks: a.Chunks, DType: a.DType, BigEndian: a.BigEndian,
		Perm: a.Perm, Fill: a.Fill, Prefix: a.Prefix, Separator: a.Separator}
	if a.Codecs != nil {
		d.Codecs = make([]chunk.ZarrCodec, len(a.Codecs))
		for i, c := range a.Codecs {
			d.Codecs[i] = chunk.ZarrCodec(c)
		}
	}
	if a.Shard != nil {
		d.Shard = &chunk.ZarrShard{Inner: a.Shard.Inner.Desc(), IndexAtStart: a.Shard.IndexAtStart, IndexCRC: a.Shard.IndexCRC}
	}
	return d
}

// FromDesc is the array d describes, Desc's inverse. The slices are
// shared, not copied.
func FromDesc(d *chunk.ZarrArray) *Array {
	a := &Array{Format: d.Format, Shape: d.Shape, Chunks: d.Chunks, DType: d.DType, BigEndian: d.BigEndian,
		Perm: d.Perm, Fill: d.Fill, Prefix: d.Prefix, Separator: d.Separator}
	if d.Codecs != nil {
		a.Codecs = make([]Codec, len(d.Codecs))
		for i, c := range d.Codecs {
			a.Codecs[i] = Codec(c)
		}
	}
	if d.Shard != nil {
		a.Shard = &Shard{Inner: *FromDesc(&d.Shard.Inner), IndexAtStart: d.Shard.IndexAtStart, IndexCRC: d.Shard.IndexCRC}
	}
	return a
}
