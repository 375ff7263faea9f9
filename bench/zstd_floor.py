"""The decode floor of bench's W7 on libzstd, as Dask reads it.

Decodes the same 8 store chunks of the W7 array as
`go test -bench DecodeStore ./tensor/codec/zarr` (files 0, 12, ..., 84,
40 MB each decoded) with numcodecs' Zstd (libzstd), on one core, into a
buffer reused from chunk to chunk ("reused") and into a fresh NumPy array
a chunk, as da.from_zarr does ("fresh"), and prints MB/s of decoded bytes.

    /usr/bin/python3 bench/zstd_floor.py [STORE]
"""
import os
import sys
import tempfile
import time

import numcodecs
import numpy as np
from numcodecs import Zstd

store = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    tempfile.gettempdir(), "marsfs-bench-data", "bench-q-500000x1000-c5000.zarr")
files = [open(os.path.join(store, "%d.0" % (i * 12)), "rb").read() for i in range(8)]
codec = Zstd()
n = 5000 * 1000 * 8


def rate(fresh, rounds=3):
    best = 0.0
    out = np.empty(n, dtype=np.uint8)
    for _ in range(rounds):
        t = time.perf_counter()
        for raw in files:
            if fresh:
                b = codec.decode(raw)
            else:
                b = codec.decode(raw, out=out)
            assert len(memoryview(b).cast("B")) == n
        best = max(best, len(files) * n / (time.perf_counter() - t) / 1e6)
    return best


rate(False, 1)  # warm the decoder and the buffer
print("numcodecs %s: libzstd reused %.0f MB/s, fresh %.0f MB/s (best of 3 passes over %d chunks)"
      % (numcodecs.__version__, rate(False), rate(True), len(files)))
