package lang

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"marsfs/tensor/spec"
)

// TestToZarrDataset parses to_zarr's dims= and attrs= into the sink, keeps
// them through the JSON form, and refuses what xarray could not read,
// naming the argument.
func TestToZarrDataset(t *testing.T) {
	data := fstest.MapFS{}
	g, err := ParseData(`x = ones((4, 3))
to_zarr(x, "ds.zarr/sub/v", dims=("time", "lat"), attrs={"units": "K", "n": 3, "f": 2.5, "ok": False, "none": None, "list": [1, "a"], "nested": {"k": (1, 2)},})
`, spec.Env{}, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Sinks) != 1 {
		t.Fatalf("sinks: %+v", g.Sinks)
	}
	s := g.Sinks[0]
	wantAttrs := `{"units":"K","n":3,"f":2.5,"ok":false,"none":null,"list":[1,"a"],"nested":{"k":[1,2]}}`
	if !reflect.DeepEqual(s.Dims, []string{"time", "lat"}) || s.Attrs != wantAttrs {
		t.Errorf("sink dims %q attrs %s, want %s", s.Dims, s.Attrs, wantAttrs)
	}
	js, err := g.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseData(string(js), spec.Env{}, data)
	if err != nil {
		t.Fatalf("JSON %s: %v", js, err)
	}
	if b := back.Sinks[0]; !reflect.DeepEqual(b.Dims, s.Dims) || b.Attrs != s.Attrs {
		t.Errorf("from JSON: dims %q attrs %s", b.Dims, b.Attrs)
	}
	for _, c := range []struct{ src, want string }{
		{`to_zarr(ones(3), "d.zarr/v", dims=("a", "b"))`, `1:35: to_zarr: dims=("a", "b") names 2 dimensions of an array of 1`},
		{`to_zarr(ones((2, 2)), "d.zarr/v", dims=("a", "a"))`, "each dimension needs a name of its own"},
		{`to_zarr(ones(3), "d.zarr/v", dims=(1,))`, "1:36: to_zarr(): dims holds strings, not int"},
		{`to_zarr(ones(3), "d.zarr/v", attrs=[1])`, "1:36: to_zarr(): attrs must be a dict, not list"},
		{`to_zarr(ones(3), "d.zarr/v", attrs={1: 2})`, "1:37: a dict's keys are strings, not int"},
		{`to_zarr(ones(3), "d.zarr/v", attrs={"a": ones(2)})`, "a tensor cannot be an attribute"},
		{`to_zarr(ones(3), "d.zarr/v", attrs={"_ARRAY_DIMENSIONS": ["x"]})`, "_ARRAY_DIMENSIONS is given by dims="},
		{`to_zarr(ones(3), "d.zarr/v", dims=("x",), zarr_format=3)`, "in zarr_format=2"},
		{`to_zarr(ones(3), "d.zarr/v", attrs={"a" 1})`, "1:41: unexpected"},
		{`to_zarr(ones(3), "d.zarr/v", attrs={"a": 1)`, "1:43: unexpected ')'"},
		{`to_zarr(ones(3), "out.npy/v")`, `directory "out.npy" does not exist`},
	} {
		_, err := ParseData(c.src, spec.Env{}, data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.src, err, c.want)
		}
	}
}
