package zarr

import (
	"encoding/json"
	"slices"
	"testing"
	"testing/fstest"
)

// TestConsolidate checks the consolidated metadata of a group: every
// .zgroup, .zarray and .zattrs below it by their paths from the group,
// and nothing of the arrays' chunk files or of arrays being written.
func TestConsolidate(t *testing.T) {
	fsys := fstest.MapFS{
		"ds.zarr/.zgroup":                    {Data: GroupMeta},
		"ds.zarr/t2m/.zarray":                {Data: []byte(`{"zarr_format": 2}`)},
		"ds.zarr/t2m/.zattrs":                {Data: []byte(`{"_ARRAY_DIMENSIONS": ["t"]}`)},
		"ds.zarr/t2m/0":                      {Data: []byte("chunk")},
		"ds.zarr/t2m/1/0":                    {Data: []byte("nested chunk")},
		"ds.zarr/sub/.zgroup":                {Data: GroupMeta},
		"ds.zarr/sub/lat/.zarray":            {Data: []byte(`{"zarr_format": 2}`)},
		"ds.zarr/lon.marsfs-ab.part/.zarray": {Data: []byte(`{"zarr_format": 2}`)},
		"ds.zarr/.hidden/.zarray":            {Data: []byte(`{}`)},
	}
	raw, err := Consolidate(fsys, "ds.zarr")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
		Format   int                        `json:"zarr_consolidated_format"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Format != 1 {
		t.Fatalf("%v: %s", err, raw)
	}
	var keys []string
	for k := range doc.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{".zgroup", "sub/.zgroup", "sub/lat/.zarray", "t2m/.zarray", "t2m/.zattrs"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	fsys["ds.zarr/sub/lat/.zattrs"] = &fstest.MapFile{Data: []byte(`not json`)}
	if _, err := Consolidate(fsys, "ds.zarr"); err == nil {
		t.Error("a .zattrs that is not JSON was consolidated")
	}
}
