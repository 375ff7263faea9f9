"""Codec micro-benchmarks: marsfs against numcodecs on the same chunks.

    /usr/bin/python3 bench/codecs.py gen DIR      # write the chunks (once)
    /usr/bin/python3 bench/codecs.py time DIR     # numcodecs' MB/s, one JSON line a case
    /usr/bin/python3 bench/codecs.py table [--rounds N] [--only SUBSTR] [DIR]

`gen` writes the chunks the issue's user has, made here (nothing is
committed): a climate-like float32 chunk of (24, 181, 360), 6 MB, smooth
fields around 280 K plus noise, and a float64 chunk of (2500, 5000),
100 MB, 5 + a normal quantized to 1/1024 (bench's W7 values). Each is
encoded by numcodecs with the compressors zarr-python users write:
blosc's default (lz4, clevel 5, byte shuffle), blosc with blosclz and with
bit shuffle, zstd, zlib and lz4. DIR/manifest.json lists the cases; a case
is its raw chunk (NAME.raw), numcodecs' encoding of it (NAME.enc) and the
compressor's configuration.

`time` times numcodecs on one core (blosc with one thread, no threads of
its own): decode into a buffer reused from chunk to chunk ("reused"),
decode into a new array ("fresh", what da.from_zarr does: glibc hands
back the pages of the array freed before, so they are seldom new) and
encode, in MB/s of decoded bytes, by the fastest call of several (on a
loaded machine a mean measures the load); marsfs' benchmark reports its
fastest call too (best-MB/s). Its "fresh" decodes into pages just mapped,
as a chunk in new shared memory is; its "encode" into a buffer reused,
"encodenew" into a new one.

`table` runs, in turn for each round, `time` and marsfs' Go benchmark
(go test -bench Codecs ./tensor/codec/zarr, which reads the same DIR),
and prints Markdown tables of medians with the CPU and the load average:
one by the thread's CPU time of the median call (what a shared, loaded
machine disturbs least), one by the wall clock of the fastest call.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import numcodecs
from numcodecs import blosc, Blosc, Zstd, Zlib, LZ4

DEFAULT_DIR = os.path.join(tempfile.gettempdir(), "marsfs-codec-bench")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def climate():
    """(24, 181, 360) float32: 6-hourly temperatures on a 1-degree grid."""
    rng = np.random.default_rng(35)
    t = np.arange(24)[:, None, None]
    lat = np.deg2rad(np.linspace(-90, 90, 181))[None, :, None]
    lon = np.deg2rad(np.arange(360))[None, None, :]
    field = (250 + 45 * np.cos(lat) + 6 * np.sin(2 * lon + 0.3) * np.cos(lat)
             + 3 * np.cos(2 * np.pi * t / 4 + lon) * np.cos(lat)
             + 0.5 * np.sin(3 * lat + 5 * lon))
    return (field + rng.normal(0, 0.8, (24, 181, 360))).astype("<f4")


def quantized():
    """(2500, 5000) float64: 5 + a normal, quantized to 1/1024."""
    rng = np.random.default_rng(7)
    return np.round((5 + rng.standard_normal((2500, 5000))) * 1024) / 1024


def cases():
    b = blosc.SHUFFLE
    return [
        ("f4_blosc_lz4", climate, Blosc(cname="lz4", clevel=5, shuffle=b)),
        ("f4_blosc_blosclz", climate, Blosc(cname="blosclz", clevel=5, shuffle=b)),
        ("f4_blosc_lz4_bit", climate, Blosc(cname="lz4", clevel=5, shuffle=blosc.BITSHUFFLE)),
        ("f4_blosc_zstd", climate, Blosc(cname="zstd", clevel=5, shuffle=b)),
        ("f4_zstd", climate, Zstd(level=1)),
        ("f4_zlib", climate, Zlib(level=1)),
        ("f4_lz4", climate, LZ4()),
        ("f8_blosc_lz4", quantized, Blosc(cname="lz4", clevel=5, shuffle=b)),
        ("f8_blosc_lz4_bit", quantized, Blosc(cname="lz4", clevel=5, shuffle=blosc.BITSHUFFLE)),
        ("f8_zstd", quantized, Zstd(level=1)),
        ("f8_lz4", quantized, LZ4()),
    ]


def gen(d):
    os.makedirs(d, exist_ok=True)
    manifest, data = [], {}
    for name, make, codec in cases():
        if make not in data:
            data[make] = make()
        x = data[make]
        enc = codec.encode(x)
        open(os.path.join(d, name + ".raw"), "wb").write(x.tobytes())
        open(os.path.join(d, name + ".enc"), "wb").write(enc)
        manifest.append({"name": name, "dtype": x.dtype.str, "shape": list(x.shape),
                         "itemsize": x.dtype.itemsize, "compressor": codec.get_config(),
                         "ratio": x.nbytes / len(enc)})
    with open(os.path.join(d, "manifest.json.tmp"), "w") as f:
        json.dump(manifest, f, indent=1)
    os.rename(os.path.join(d, "manifest.json.tmp"), os.path.join(d, "manifest.json"))


def ensure(d):
    if not os.path.exists(os.path.join(d, "manifest.json")):
        gen(d)
    return json.load(open(os.path.join(d, "manifest.json")))


def best_rate(f, nbytes, budget=0.6, passes=5):
    """MB/s of nbytes by f's fastest call, and by its median call's CPU
    time (the thread's own, as marsfs' cpu-MB/s), calling it for about
    budget seconds."""
    f()  # warm
    best, spent, n, cpu = float("inf"), 0.0, 0, []
    while n < passes or spent < budget:
        t, c = time.perf_counter(), time.thread_time()
        f()
        cpu.append(time.thread_time() - c)
        dt = time.perf_counter() - t
        best, spent, n = min(best, dt), spent + dt, n + 1
        if n >= 50:
            break
    return nbytes / best / 1e6, nbytes / statistics.median(cpu) / 1e6


def time_cases(d, only=""):
    blosc.set_nthreads(1)
    blosc.use_threads = False
    out = []
    for c in ensure(d):
        if only not in c["name"]:
            continue
        raw = open(os.path.join(d, c["name"] + ".raw"), "rb").read()
        enc = open(os.path.join(d, c["name"] + ".enc"), "rb").read()
        x = np.frombuffer(raw, dtype=c["dtype"]).reshape(c["shape"])
        codec = numcodecs.get_codec(c["compressor"])
        buf = np.empty(len(raw), dtype=np.uint8)
        assert bytes(codec.decode(enc, out=buf)) == raw
        r = {"name": c["name"], "ratio": c["ratio"]}
        for k, f in (("reused", lambda: codec.decode(enc, out=buf)), ("fresh", lambda: codec.decode(enc)),
                     ("encode", lambda: codec.encode(x))):
            r[k], r[k + "-cpu"] = best_rate(f, len(raw))
        out.append(r)
        print(json.dumps(r), flush=True)
    return out


def go_bench(d, only=""):
    """marsfs' rates from its Go benchmark: {case: {direction: MB/s}}."""
    env = dict(os.environ, MARSFS_CODEC_BENCH=d)
    pat = "Codecs/" + (only or "")
    p = subprocess.run(["go", "test", "-run", "^$", "-bench", pat, "-benchtime", "0.6s",
                        "./tensor/codec/zarr"], cwd=REPO, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(p.stdout + p.stderr)
    rates = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if not f or not f[0].startswith("BenchmarkCodecs/") or "best-MB/s" not in f:
            continue
        _, name, how = f[0].rsplit("-", 1)[0].split("/")
        rates.setdefault(name, {})[how] = float(f[f.index("best-MB/s") - 1])
        rates[name][how + "-cpu"] = float(f[f.index("cpu-MB/s") - 1])
        if "ratio" in f:
            rates[name]["ratio"] = float(f[f.index("ratio") - 1])
    return rates


def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "?"


def table(d, rounds, only):
    ensure(d)
    nc, mf, loads = {}, {}, []
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        for r in time_cases(d, only):
            for k in ("reused", "fresh", "encode", "reused-cpu", "fresh-cpu", "encode-cpu"):
                nc.setdefault((r["name"], k), []).append(r[k])
            nc[(r["name"], "ratio")] = [r["ratio"]]
        loads.append(os.getloadavg()[0])
        for name, rs in go_bench(d, only).items():
            for k, v in rs.items():
                mf.setdefault((name, k), []).append(v)
        loads.append(os.getloadavg()[0])
    med = lambda m, k: statistics.median(m[k]) if k in m else float("nan")
    print("\n%s, numcodecs %s (c-blosc %s), %d rounds, medians, MB/s of decoded bytes, one core; "
          "load average %.1f-%.1f" % (cpu(), numcodecs.__version__, blosc.VERSION_STRING,
                                      rounds, min(loads), max(loads)))
    for clock, what in (("-cpu", "by the thread's CPU time (median call)"), ("", "by the wall clock (fastest call)")):
        print("\nMB/s %s:\n" % what)
        print("| chunk, codec | ratio marsfs / numcodecs | decode reused marsfs / numcodecs | "
              "decode fresh marsfs / numcodecs | encode reused marsfs / numcodecs | "
              "encode new marsfs / numcodecs |")
        print("| --- | --- | --- | --- | --- | --- |")
        for c in ensure(d):
            n = c["name"]
            if only not in n:
                continue
            cells = ["%.2f / %.2f" % (med(mf, (n, "ratio")), c["ratio"])]
            for k, kn in (("reused", "reused"), ("fresh", "fresh"), ("encode", "encode"), ("encodenew", "encode")):
                a, b = med(mf, (n, k + clock)), med(nc, (n, kn + clock))
                cells.append("%.0f / %.0f (%.2fx)" % (a, b, a / b))
            print("| %s | %s |" % (n, " | ".join(cells)))


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    cmd, rest = args[0], args[1:]
    rounds, only = 3, ""
    pos = []
    i = 0
    while i < len(rest):
        if rest[i] == "--rounds":
            rounds, i = int(rest[i + 1]), i + 2
        elif rest[i] == "--only":
            only, i = rest[i + 1], i + 2
        else:
            pos.append(rest[i])
            i += 1
    d = pos[0] if pos else DEFAULT_DIR
    if cmd == "gen":
        gen(d)
    elif cmd == "time":
        time_cases(d, only)
    elif cmd == "table":
        table(d, rounds, only)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
