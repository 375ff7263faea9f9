#!/usr/bin/python3
"""Writes the Zarr arrays of the climate and two-pass variance workloads.

bench/workloads_climate.go runs this once per array (the harness keeps the
data directory between runs), so that the arrays are written by
zarr-python, as a user's are:

    climate_data.py clim PATH T LAT LON TCHUNK lz4|zstd
    climate_data.py var2 PATH ROWS COLS RCHUNK lz4|zstd|raw

clim: float32 (T, LAT, LON), a smooth field around 280 K (colder towards
the poles, a seasonal swing opposite in the two hemispheres, a daily one)
plus noise, chunked (TCHUNK, LAT, LON). var2: float64 (ROWS, COLS), 5 plus
a standard normal quantized to 1/1024, as W7's, chunked (RCHUNK, COLS).
lz4 is zarr-python's default compressor (Blosc lz4, byte shuffle); zstd is
numcodecs' Zstd at level 1; raw has no compressor. The array is
written into PATH.part, renamed to PATH once whole.
"""

import os
import shutil
import sys

import numpy as np
import zarr
from numcodecs import Blosc, Zstd


def compressor(name):
    if name == "lz4":
        return Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)
    if name == "zstd":
        return Zstd(level=1)
    if name == "raw":
        return None
    raise SystemExit(f"unknown compressor {name}")


def climate(t0, nt, lat, lon, rng):
    """Times t0..t0+nt of the climate-like field, float32."""
    t = np.arange(t0, t0 + nt, dtype=np.float64)[:, None, None]
    phi = np.deg2rad(np.linspace(90, -90, lat))[None, :, None]
    lam = np.deg2rad(np.linspace(0, 360, lon, endpoint=False))[None, None, :]
    season = np.sin(2 * np.pi * t / 1460)  # 4 steps a day, 365 days
    day = np.sin(2 * np.pi * t / 4 + lam)
    x = (250 + 40 * np.cos(phi) + 3 * np.cos(3 * lam) * np.cos(phi)
         + 12 * np.sin(phi) * season + 2 * np.cos(phi) * day)
    x = x + rng.standard_normal((nt, lat, lon))
    return x.astype(np.float32)


def main():
    kind, path = sys.argv[1], sys.argv[2]
    dims = [int(v) for v in sys.argv[3:-1]]
    comp = compressor(sys.argv[-1])
    tmp = path + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    if kind == "clim" and len(dims) == 4:
        a, b, c, chunk = dims
        shape, chunks, dtype = (a, b, c), (chunk, b, c), np.float32
    elif kind == "var2" and len(dims) == 3:
        a, b, chunk = dims
        shape, chunks, dtype = (a, b), (chunk, b), np.float64
    else:
        raise SystemExit(f"unknown kind {kind}")
    z = zarr.open(tmp, mode="w", shape=shape, chunks=chunks, dtype=dtype,
                  compressor=comp)
    step = chunk * max(1, (64 << 20) // (chunk * int(np.prod(shape[1:])) * np.dtype(dtype).itemsize))
    for lo in range(0, a, step):
        hi = min(a, lo + step)
        rng = np.random.default_rng(lo)
        if kind == "clim":
            z[lo:hi] = climate(lo, hi - lo, b, c, rng)
        else:
            z[lo:hi] = np.round((5 + rng.standard_normal((hi - lo, b))) * 1024) / 1024
    shutil.rmtree(path, ignore_errors=True)
    os.rename(tmp, path)


if __name__ == "__main__":
    main()
