package zarr

import (
	"bytes"
	"encoding/gob"
	"reflect"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// TestDescRoundTrip: an array, sharded with codecs inside and out, comes
// back from its description (and from the description's gob, as a worker
// gets it) field for field, so that a field added to Array and not to
// chunk.ZarrArray, or not copied, fails here.
func TestDescRoundTrip(t *testing.T) {
	inner := Array{Format: 3, Shape: []int{8, 6}, Chunks: []int{4, 3}, DType: tensor.Float32, BigEndian: true,
		Perm: []int{1, 0}, Fill: []byte{1, 2, 3, 4}, Prefix: "c/", Separator: "/", Codecs: []Codec{allCodecs[5], allCodecs[9]}}
	a := Array{Format: 3, Shape: []int{16, 12}, Chunks: []int{8, 6}, DType: tensor.Float32, Fill: []byte{1, 2, 3, 4},
		Prefix: "c/", Separator: ".", Codecs: []Codec{allCodecs[2]}, Shard: &Shard{Inner: inner, IndexAtStart: true, IndexCRC: true}}
	d := a.Desc()
	if got := FromDesc(&d); !reflect.DeepEqual(*got, a) {
		t.Fatalf("FromDesc(Desc(a)) = %+v, want %+v", *got, a)
	}
	var buf bytes.Buffer
	var sent chunk.Op
	if err := gob.NewEncoder(&buf).Encode(&chunk.Op{Kind: chunk.KindFromZarr, Args: chunk.ZarrArgs{Path: "a.zarr", Array: d, Offset: []int{0, 0}}}); err != nil {
		t.Fatal(err)
	}
	if err := gob.NewDecoder(&buf).Decode(&sent); err != nil {
		t.Fatal(err)
	}
	za, _ := sent.Args.(chunk.ZarrArgs)
	got := FromDesc(&za.Array)
	if k1, k2 := got.Key([]int{1, 0}), a.Key([]int{1, 0}); k1 != k2 || got.Shard == nil || !reflect.DeepEqual(got.Shard.Inner.Codecs, inner.Codecs) {
		t.Fatalf("after gob: key %q (want %q), shard %+v", k1, k2, got.Shard)
	}
	for _, typ := range [][2]reflect.Type{{reflect.TypeFor[Array](), reflect.TypeFor[chunk.ZarrArray]()},
		{reflect.TypeFor[Shard](), reflect.TypeFor[chunk.ZarrShard]()}} {
		if typ[0].NumField() != typ[1].NumField() {
			t.Errorf("%v has %d fields, %v %d", typ[0], typ[0].NumField(), typ[1], typ[1].NumField())
		}
	}
}
