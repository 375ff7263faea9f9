"""The climate and two-pass variance workloads (CLIM-*, VAR2-*) in Dask and
NumPy, for bench/dask_workloads.py; bench/workloads_climate.go has the
marsfs side and the same names.
"""

import os

import numpy as np

CODECS = ["lz4", "zstd", "raw"]


def _parse(w):
    """(kind, step, codec) of an id: CLIM-MEAN-ZSTD -> clim, MEAN, zstd."""
    parts = w.split("-")
    kind = parts[0].lower()
    if kind == "var2":
        return kind, None, parts[1].lower()
    codec = parts[2].lower() if len(parts) > 2 else "lz4"
    return kind, parts[1], codec


def _path(kind, p):
    codec = CODECS[p["codec"]]
    if kind == "clim":
        name = "clim-%s-%dx%dx%d-c%d.zarr" % (codec, p["t"], p["lat"], p["lon"], p["tchunk"])
    else:
        name = "var2-%s-%dx%d-c%d.zarr" % (codec, p["rows"], p["cols"], p["rchunk"])
    return os.path.join(os.environ["MARSFS_BENCH_DATA"], name)


def _weights(xp, lat, lon):
    wl = xp.cos(xp.linspace(90, -90, lat) * 0.017453292519943295)
    return wl / (wl.sum() * lon)


def _compressor(codec):
    from numcodecs import Blosc, Zstd
    return {"lz4": Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE),
            "zstd": Zstd(level=1), "raw": None}[codec]


def _steps(step, x, w, p, write):
    """The outputs of a climate step over x (NumPy or Dask), write(a)
    storing the anomaly."""
    out = []
    if step in ("MEAN", "ANOM", "ALL"):
        m = x.mean(axis=0)
        out.append(m)
    if step in ("STD", "ALL"):
        out.append(x.std(axis=0))
    if step in ("ANOM", "ALL"):
        write(x - m)
    if step in ("GMEAN", "ALL"):
        out.append((x * w[:, None]).sum(axis=(1, 2)))
    if step in ("SEAS", "ALL"):
        c = x.reshape(3, p["t"] // 3, p["lat"], p["lon"]).mean(axis=0)
        out += [c, (c * w[:, None]).sum(axis=(1, 2))]
    return out


def dask_workload(w, p):
    import dask.array as da
    kind, step, codec = _parse(w)
    path = _path(kind, p)
    if kind == "var2":
        def f():
            x = da.from_zarr(path)
            m = x.mean(axis=0)
            return [m, ((x - m) ** 2).mean(axis=0)]
        return f
    out = os.path.join(os.environ["MARSFS_BENCH_DATA"], "anom-dask-%s.zarr" % codec)

    def f():
        x = da.from_zarr(path)
        w = _weights(np, p["lat"], p["lon"])
        stores = []

        def write(a):
            # One graph: the store's tasks are computed with the others.
            stores.append(da.to_zarr(a, out, overwrite=True, compute=False,
                                     compressor=_compressor(codec)))
        return _steps(step, x, w, p, write) + stores
    return f


def numpy_workload(w, p):
    """NumPy on the array in memory: it is read before the runs."""
    import zarr
    kind, step, codec = _parse(w)
    x = zarr.open(_path(kind, p), mode="r")[:]
    if kind == "var2":
        def f():
            m = x.mean(axis=0)
            return [m, ((x - m) ** 2).mean(axis=0)]
        return f
    out = os.path.join(os.environ["MARSFS_BENCH_DATA"], "anom-numpy-%s.zarr" % codec)

    def f():
        w = _weights(np, p["lat"], p["lon"])

        def write(a):
            zarr.open(out, mode="w", shape=a.shape, chunks=(p["tchunk"], p["lat"], p["lon"]),
                      dtype=a.dtype, compressor=_compressor(codec))[:] = a
        return _steps(step, x, w, p, write)
    return f
