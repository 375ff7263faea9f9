package main

import (
	osexec "os/exec"
	"strings"
	"testing"
)

// TestXarrayDataset writes a dataset with marsfs, as a user of xarray
// would (a float32 variable of three dimensions, its coordinates, an
// integer variable holding zeros, attributes), into a group marsfs makes,
// and has xarray open it with open_zarr: dimensions, coordinates, values
// and attributes as written, no zero read as missing. A second graph adds
// a variable, and the consolidated metadata shows it.
func TestXarrayDataset(t *testing.T) {
	if err := osexec.Command("/usr/bin/python3", "-c", "import xarray, zarr").Run(); err != nil {
		t.Skip("no /usr/bin/python3 with xarray and zarr (apt-get install python3-xarray python3-zarr)")
	}
	bin := build(t)
	data := t.TempDir()
	p := startUp(t, bin, "--workers", "2", "--data-dir", data)
	spec := `
time = arange(48, chunks=10) * 6
lat = linspace(90, -90, 19)
lon = arange(36) * 10.0
t2m = ((arange(48 * 19 * 36) % 97).reshape(48, 19, 36) * 0.5 + 200).astype(float32).rechunk((10, 19, 36))
count = arange(48, chunks=10) % 3
to_zarr(t2m, "era.zarr/t2m", dims=("time", "lat", "lon"), attrs={"units": "K", "long_name": "2 metre temperature", "levels": [1000, 850.5]})
to_zarr(lat, "era.zarr/lat", dims=("lat",), attrs={"units": "degrees_north"})
to_zarr(lon, "era.zarr/lon", dims=("lon",), attrs={"units": "degrees_east"})
to_zarr(time, "era.zarr/time", dims=("time",), attrs={"units": "hours since 2020-01-01"})
to_zarr(count, "era.zarr/count", dims="time", attrs={"flag": True, "note": None})
`
	if out, errs, code := p.marsfs(t, spec, "run", "--addr", p.unx, "-"); code != 0 {
		t.Fatalf("marsfs run: exit %d\n%s%s", code, out, errs)
	}
	check := `
import sys, numpy as np, xarray as xr
ds = xr.open_zarr(sys.argv[1] + "/era.zarr")
assert dict(ds.dims) == {"time": 48, "lat": 19, "lon": 36}, ds.dims
assert set(ds.coords) == {"time", "lat", "lon"}, list(ds.coords)
assert set(ds.data_vars) == {"t2m", "count"}, list(ds.data_vars)
assert ds.t2m.dims == ("time", "lat", "lon") and ds.t2m.dtype == np.float32
want = ((np.arange(48 * 19 * 36) % 97).reshape(48, 19, 36) * 0.5 + 200).astype(np.float32)
assert np.array_equal(ds.t2m.values, want)
assert np.array_equal(ds.lat.values, np.linspace(90, -90, 19))
assert np.array_equal(ds.lon.values, np.arange(36) * 10.0), ds.lon.values[:3]
assert str(ds.time.values[0])[:19] == "2020-01-01T00:00:00" and str(ds.time.values[1])[:19] == "2020-01-01T06:00:00", ds.time.values[:2]
assert ds["count"].dtype == np.int64 and np.array_equal(ds["count"].values, np.arange(48) % 3), ds["count"].values[:4]
assert ds.t2m.attrs == {"units": "K", "long_name": "2 metre temperature", "levels": [1000, 850.5]}, ds.t2m.attrs
assert ds.lat.attrs == {"units": "degrees_north"}, ds.lat.attrs
assert ds["count"].attrs == {"flag": True, "note": None}, ds["count"].attrs
mean = ds.t2m.mean("time").values
print("ok", float(mean.mean()))
`
	out, err := osexec.Command("/usr/bin/python3", "-c", check, data).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok ") {
		t.Fatalf("xarray on marsfs' dataset: %v\n%s", err, out)
	}
	// A variable added by a later graph, computed from the dataset.
	add := `
x = from_zarr("era.zarr/t2m")
to_zarr(x.mean(axis=0), "era.zarr/t2m_mean", dims=("lat", "lon"), attrs={"units": "K"})
`
	if out, errs, code := p.marsfs(t, add, "run", "--addr", p.unx, "-"); code != 0 {
		t.Fatalf("marsfs run: exit %d\n%s%s", code, out, errs)
	}
	check2 := `
import sys, numpy as np, xarray as xr
ds = xr.open_zarr(sys.argv[1] + "/era.zarr")
assert set(ds.data_vars) == {"t2m", "count", "t2m_mean"}, list(ds.data_vars)
assert ds.t2m_mean.dims == ("lat", "lon")
np.testing.assert_allclose(ds.t2m_mean.values, ds.t2m.values.astype(np.float64).mean(axis=0), rtol=1e-6)
print("ok")
`
	if out, err := osexec.Command("/usr/bin/python3", "-c", check2, data).CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "ok") {
		t.Fatalf("xarray after a second graph: %v\n%s", err, out)
	}
	// Errors name what is wrong.
	for _, c := range []struct{ spec, want string }{
		{`to_zarr(ones(3), "e.zarr/a", dims=("x", "y"))`, `dims=("x", "y") names 2 dimensions of an array of 1`},
		{`to_zarr(ones(3), "e.zarr/a", dims=("x",), zarr_format=3)`, "in zarr_format=2"},
		{`to_zarr(ones(3), "e.zarr/a", attrs={"a": nan})`, "cannot be written in JSON"},
		{`to_zarr(ones(3), "e.zarr/a", attrs=3)`, "attrs must be a dict"},
		{`to_zarr(ones(3), "era.zarr/t2m/a")`, "is a Zarr array, not a group"},
		{`to_zarr(ones(3), "no/such/dir.zarr/a")`, `directory "no/such" does not exist`},
	} {
		out, errs, code := p.marsfs(t, c.spec, "run", "--addr", p.unx, "-")
		if code == 0 || !strings.Contains(out+errs, c.want) {
			t.Errorf("%s: exit %d, want an error with %q:\n%s%s", c.spec, code, c.want, out, errs)
		}
	}
	p.stop(t)
}
