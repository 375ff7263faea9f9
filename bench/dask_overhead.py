#!/usr/bin/python3
"""Per-operand overhead of Dask on the marsfs overhead benchmark.

Computes (ones(1e6, chunks=10) + 1).sum() -- 100,000 chunks -- with Dask's
synchronous and threaded schedulers and with a distributed LocalCluster of
two single-threaded worker processes, and prints the time per task of the
optimized graph for each. Compare with BenchmarkOperandOverhead in exec/.
"""
import sys
import time

import dask
import dask.array as da


def graph_tasks(x):
    (opt,) = dask.optimize(x)
    return len(dict(opt.__dask_graph__()))


def run(label, compute, n, tasks):
    begin = time.perf_counter()
    v = compute()
    took = time.perf_counter() - begin
    if v != 2 * n:
        sys.exit(f"{label}: sum {v}, want {2 * n}")
    print(f"{label:<28} {took:8.3f} s {1e6 * took / tasks:8.1f} us/task {1e6 * took / (n // 10):8.1f} us/chunk")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    x = (da.ones(n, chunks=10) + 1).sum()
    unfused = len(dict(x.__dask_graph__()))
    tasks = graph_tasks(x)
    print(f"dask {dask.__version__}: {n // 10} chunks, {unfused} tasks before optimization, {tasks} after")
    run("sync", lambda: x.compute(scheduler="synchronous"), n, tasks)
    run("threads (2)", lambda: x.compute(scheduler="threads", num_workers=2), n, tasks)
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        client.compute(da.ones(100, chunks=10).sum()).result()  # warm up
        run("distributed 2x1 processes", lambda: client.compute(x).result(), n, tasks)


if __name__ == "__main__":
    main()
