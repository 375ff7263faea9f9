"""KMEANS, the Python side: its data, and Lloyd's iterations in NumPy and Dask.

    python3 kmeans.py make DIR --params JSON   writes X's .npy and NumPy's centres

The points are params["n"] rows of params["d"] float32 values: k blobs of
normal noise around centres drawn in [-10, 10]^d, every row's blob drawn
at random, from a fixed seed. The first k rows are the starting centres,
for every engine. make also runs NumPy's iterations once and writes the
centres they end at (kmeans-...-ref.json), which the harness compares
every engine's result with.

An iteration is the user's formula, one expression of C and X:

    d = (C*C).sum(axis=1) - 2*(X @ C.T)
    oh = (d.argmin(axis=1)[:, None] == arange(k)).astype(float32)
    C = (oh.T @ X) / oh.sum(axis=0)[:, None]
"""

import json
import os
import sys

import numpy as np


def names(p):
    """The file names of p's data, as bench/workloads_kmeans.go names them."""
    base = "kmeans-%dx%d-k%d" % (p["n"], p["d"], p["k"])
    return base + ".npy", base + "-ref.json"


def step_numpy(X, C, k):
    d = (C * C).sum(axis=1) - 2 * (X @ C.T)
    oh = (d.argmin(axis=1)[:, None] == np.arange(k)).astype(np.float32)
    return (oh.T @ X) / oh.sum(axis=0)[:, None]


def step_dask(X, C, k):
    import dask.array as da
    d = (C * C).sum(axis=1) - 2 * (X @ C.T)
    oh = (d.argmin(axis=1)[:, None] == da.arange(k)).astype(np.float32)
    return (oh.T @ X) / oh.sum(axis=0)[:, None]


def make(out, p):
    n, dim, k = p["n"], p["d"], p["k"]
    rng = np.random.default_rng(35)
    centres = rng.uniform(-10, 10, size=(k, dim)).astype(np.float32)
    X = np.empty((n, dim), dtype=np.float32)
    step = 1 << 20
    for s in range(0, n, step):
        e = min(n, s + step)
        lab = rng.integers(0, k, size=e - s)
        X[s:e] = centres[lab] + rng.standard_normal((e - s, dim), dtype=np.float32) * 2
    npy, ref = names(p)
    np.save(os.path.join(out, npy + ".tmp.npy"), X)
    C = X[:k].copy()
    for _ in range(p["iters"]):
        C = step_numpy(X, C, k)
    with open(os.path.join(out, ref + ".tmp"), "w") as f:
        json.dump([float(v) for v in C.ravel()], f)
    os.rename(os.path.join(out, ref + ".tmp"), os.path.join(out, ref))
    # The .npy last: the harness takes both as made when it is there.
    os.rename(os.path.join(out, npy + ".tmp.npy"), os.path.join(out, npy))


def iterations(config, p, opts):
    """A function making the runs of config: it loads X (untimed), then
    yields (seconds, centres) for each iteration."""
    import time
    npy, _ = names(p)
    path = os.path.join(os.environ["MARSFS_BENCH_DATA"], npy)
    k = p["k"]

    def run():
        if config == "numpy":
            X = np.load(path)
            step = step_numpy
        else:
            import dask
            import dask.array as da
            X = da.from_array(np.load(path, mmap_mode="r"), chunks=(p["chunk"], p["d"]))
            X = X.persist(**opts)
            if config == "distributed":
                from distributed import wait
                wait(X)

            def step(X, C, k):
                return dask.compute(step_dask(X, C, k), **opts)[0]
        C = np.asarray(X[:k]) if config == "numpy" else X[:k].compute(**opts)
        for _ in range(p["iters"]):
            t0 = time.perf_counter()
            C = step(X, C, k)
            yield time.perf_counter() - t0, [float(v) for v in np.asarray(C).ravel()]
    return run


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "make" or sys.argv[3] != "--params":
        raise SystemExit("usage: kmeans.py make DIR --params JSON")
    make(sys.argv[2], json.loads(sys.argv[4]))
