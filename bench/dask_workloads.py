#!/usr/bin/python3
"""Runs one marsfs benchmark workload with Dask or NumPy.

bench/main.go starts this script once per workload and configuration, so that
the memory it samples (this process and its children) belongs to one
workload. The protocol on stdin/stdout, one line each:

    -> {"ready": true}                       setup done (imports, cluster)
    <- go                                    the harness has measured idle
    -> {"run": 0, "seconds": 1.2, "value": [...]}   one line a run
    -> {"done": true}

Sizes come from the harness (--params, JSON), so the Go and Python sides
always run the same problem. Each run builds the expression and computes it:
marsfs' time likewise covers parsing, tiling and running.

Configurations: threads (Dask's threaded scheduler, 2 threads), sync (Dask's
synchronous scheduler), distributed (LocalCluster, 2 worker processes of one
thread), numpy (NumPy in this process), dgemm (NumPy's BLAS on an n x n
matrix product, for the machine's DGEMM rate).
"""

import argparse
import json
import logging
import sys
import time

import numpy as np


def summary(x):
    """A result as a list of floats: a scalar itself, a vector its mean;
    nothing for a store's None (or Nones, from Dask's to_zarr)."""
    if x is None or isinstance(x, list) and all(v is None for v in x):
        return []
    x = np.asarray(x, dtype=np.float64)
    return [float(x)] if x.ndim == 0 else [float(x.mean())]


def dask_workload(w, p):
    """A function building workload w with dask.array; returns the lazy
    outputs."""
    import dask.array as da

    if w.startswith(("CLIM-", "VAR2-")):
        import climate_workloads
        return climate_workloads.dask_workload(w, p)

    def rand(*shape, chunks):
        return da.random.random(shape, chunks=chunks)

    if w == "RECHUNK":
        # Debian's Dask (2022.12) has no P2P rechunk: its rechunk is the
        # task graph of intermediate chunks.
        def f():
            x = rand(p["rows"], p["cols"], chunks=(p["rows"], p["cstrip"]))
            return [x.rechunk((p["rstrip"], p["cols"])).sum(axis=1)]
        return f

    if w in ("MASK", "MASKMAX"):
        def f():
            x = rand(p["n"], chunks=p["chunk"])
            m = x[x > 0.5]
            return [m.sum() if w == "MASK" else m.max()]
        return f

    if w == "W1":
        def f():
            a = rand(p["n"], chunks=p["chunk"])
            b = rand(p["n"], chunks=p["chunk"])
            return [((a + b) * 2 - a / 3).sum()]
    elif w == "W2":
        def f():
            return [da.ones(p["n"], chunks=p["chunk"]).sum()]
    elif w == "W3":
        def f():
            m, c = p["m"], p["chunk"]
            return [(rand(m, m, chunks=c) @ rand(m, m, chunks=c)).sum()]
    elif w == "GRAM":
        def f():
            x = rand(p["rows"], p["cols"], chunks=(p["rchunk"], p["cchunk"]))
            return [(x.T @ x).sum()]
    elif w == "W4":
        def f():
            return [(da.ones(p["n"], chunks=p["chunk"]) + 1).sum()]
    elif w == "W5":
        def f():
            x = rand(p["n"], chunks=p["chunk"])
            y = rand(p["n"], chunks=p["chunk"])
            return [4 * ((x * x + y * y) < 1).mean()]
    elif w == "W6":
        def f():
            x = rand(p["rows"], p["cols"], chunks=(p["rchunk"], p["cchunk"]))
            return [x.sum(axis=0), x.mean(axis=1)]
    elif w in ("W7", "W8"):
        import os
        path = os.path.join(os.environ["MARSFS_BENCH_DATA"],
                            "bench-%s-%dx%d-c%d.zarr" % ("q" if p.get("q") else "n", p["rows"], p["cols"], p["rchunk"]))

        def f():
            x = da.from_zarr(path)
            return [x.mean(axis=0), x.var(axis=0)]
    else:
        raise SystemExit(f"unknown workload {w}")
    return f


def numpy_workload(w, p):
    """Workload w in NumPy, in this process; returns the results."""
    rng = np.random.default_rng()
    if w.startswith(("CLIM-", "VAR2-")):
        import climate_workloads
        return climate_workloads.numpy_workload(w, p)
    if w == "SORT":
        def f():
            return [np.sort(rng.random(p["n"]))[::p["step"]]]
        return f
    if w == "RECHUNK":
        # A rechunk is nothing to NumPy: the sum of the array, for the
        # time of making it.
        def f():
            return [rng.random((p["rows"], p["cols"])).sum(axis=1)]
        return f
    if w in ("MASK", "MASKMAX"):
        def f():
            x = rng.random(p["n"])
            m = x[x > 0.5]
            return [m.sum() if w == "MASK" else m.max()]
        return f
    if w == "W1":
        def f():
            a, b = rng.random(p["n"]), rng.random(p["n"])
            return [((a + b) * 2 - a / 3).sum()]
    elif w == "W2":
        def f():
            return [np.ones(p["n"]).sum()]
    elif w == "W3":
        def f():
            m = p["m"]
            return [(rng.random((m, m)) @ rng.random((m, m))).sum()]
    elif w == "GRAM":
        def f():
            x = rng.random((p["rows"], p["cols"]))
            return [(x.T @ x).sum()]
    elif w == "W4":
        def f():
            return [(np.ones(p["n"]) + 1).sum()]
    elif w == "W5":
        def f():
            x, y = rng.random(p["n"]), rng.random(p["n"])
            return [4 * ((x * x + y * y) < 1).mean()]
    elif w == "W6":
        def f():
            x = rng.random((p["rows"], p["cols"]))
            return [x.sum(axis=0), x.mean(axis=1)]
    else:
        raise SystemExit(f"unknown workload {w}")
    return f


def dgemm(p):
    """An n x n matrix product on operands made beforehand: BLAS alone."""
    rng = np.random.default_rng(1)
    a, b = rng.random((p["m"], p["m"])), rng.random((p["m"], p["m"]))

    def f():
        return [(a @ b)[0, 0]]
    return f


def emit(obj):
    print(json.dumps(obj), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("--config", required=True,
                    choices=["threads", "sync", "distributed", "numpy", "dgemm"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--params", required=True, help="sizes, JSON")
    ap.add_argument("--budget", type=float, default=float("inf"),
                    help="start no run after this many seconds of runs")
    args = ap.parse_args()
    p = json.loads(args.params)

    cluster = client = None
    if args.config == "numpy":
        run = numpy_workload(args.workload, p)
    elif args.config == "dgemm":
        run = dgemm(p)
    else:
        import dask
        build = dask_workload(args.workload, p)
        if args.config == "distributed":
            from distributed import Client, LocalCluster
            cluster = LocalCluster(n_workers=2, threads_per_worker=1,
                                   processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
            client = Client(cluster)
            opts = {}
        elif args.config == "threads":
            opts = {"scheduler": "threads", "num_workers": 2}
        else:
            opts = {"scheduler": "sync"}

        def run():
            return dask.compute(*build(), **opts)

    emit({"ready": True})
    if sys.stdin.readline().strip() != "go":
        return
    start = time.perf_counter()
    for i in range(args.runs):
        if i > 0 and time.perf_counter() - start > args.budget:
            break
        t0 = time.perf_counter()
        out = run()
        dt = time.perf_counter() - t0
        emit({"run": i, "seconds": dt,
              "value": [v for o in out for v in summary(o)]})
    emit({"done": True})
    if client is not None:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
