#!/usr/bin/python3
"""Write the NumPy goldens of the marsfs catalogue.

Reads exprs.txt (next to this file; its header describes the format), runs
each case's input and NumPy code, and writes golden/<case>/in_<name>.npy for
each input and golden/<case>/out_<name>.npy for each output. Run it with a
Python whose NumPy is 1.24 (NumPy 2 changed the promotion of Python scalars):

    /usr/bin/python3 tensor/testdata/catalogue/gen.py
"""

import os
import shutil
import sys
import warnings
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"bool", "int32", "int64", "float32", "float64"}
MAX_INPUT = 200  # elements an input, so the committed goldens stay small


def parse(path):
    cases, cur = [], None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                cur = None
                continue
            if line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            if word == "case":
                cur = {"name": rest.strip(), "in": [], "spec": [], "np": [],
                       "out": ["y"], "check": "values", "line": lineno}
                cases.append(cur)
                continue
            if cur is None:
                sys.exit("%s:%d: %r outside a case" % (path, lineno, word))
            if word == "in":
                name, eq, code = rest.partition("=")
                if not eq:
                    sys.exit("%s:%d: in needs NAME = CODE" % (path, lineno))
                cur["in"].append((name.strip(), code.strip()))
            elif word in ("spec", "np"):
                cur[word].append(rest)
            elif word == "out":
                cur["out"] = rest.split()
            elif word == "check":
                cur["check"] = rest.strip()
            else:
                sys.exit("%s:%d: unknown word %r" % (path, lineno, word))
    return cases


def helpers(rng):
    def f64(*shape):
        return rng.standard_normal(shape).round(3)

    def f32(*shape):
        return (rng.integers(-12, 13, shape) / 4).astype(np.float32)

    def i32(*shape, lo=-9, hi=10):
        return rng.integers(lo, hi, shape, dtype=np.int32)

    def i64(*shape, lo=-9, hi=10):
        return rng.integers(lo, hi, shape, dtype=np.int64)

    def bools(*shape):
        return rng.random(shape) < 0.5

    def pos(*shape):
        return rng.uniform(0.1, 3.0, shape).round(3)

    def nanify(x):
        x = x.copy()
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, max(1, flat.size // 4), replace=False)] = np.nan
        # Keep at least one number in each row and column, so that no
        # nan-reduction sees an all-NaN slice (NumPy warns and gives NaN).
        if x.ndim == 2:
            for i in range(min(x.shape)):
                x[i, i] = i + 0.5
        return x

    return dict(np=np, f64=f64, f32=f32, i32=i32, i64=i64, bools=bools, pos=pos, nanify=nanify)


def main():
    cases = parse(os.path.join(HERE, "exprs.txt"))
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit("duplicate cases: %s" % ", ".join(sorted(dup)))
    out_dir = os.path.join(HERE, "golden")
    shutil.rmtree(out_dir, ignore_errors=True)
    for c in cases:
        rng = np.random.default_rng(zlib.crc32(c["name"].encode()))
        ns = helpers(rng)
        d = os.path.join(out_dir, c["name"])
        os.makedirs(d)
        # Division by zero, empty slices and the like are cases on purpose.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, code in c["in"]:
                x = np.asarray(eval(code, ns))
                if x.size > MAX_INPUT:
                    sys.exit("%s: input %s has %d elements" % (c["name"], name, x.size))
                ns[name] = x
                write(c, d, "in_" + name, x)
            exec("\n".join(c["np"]), ns)
        for name in c["out"]:
            write(c, d, "out_" + name, np.asarray(ns[name]))
    print("%d cases" % len(cases))


def write(case, d, name, x):
    if str(x.dtype) not in DTYPES:
        sys.exit("%s: %s has dtype %s" % (case["name"], name, x.dtype))
    np.save(os.path.join(d, name + ".npy"), x.copy(order="C"))


if __name__ == "__main__":
    main()
