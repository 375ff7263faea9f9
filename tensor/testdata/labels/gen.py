#!/usr/bin/python3
"""Writes the NumPy goldens of tensortest's TestLabelSums (labels_test.go):
for each case its inputs X and C and NumPy's result out, as .npy files
in a directory of the case's name. Run it from this directory after
changing a case; the Go test reads the same X and C and compares its
result with out.

The values are small integers (or halves), so that every product and sum
is exact in float32: ties in argmin are then ties in every engine, and
NumPy's first-minimum rule is what is tested."""

import numpy as np

KMEANS = """d = (C*C).sum(axis=1) - 2*(X @ C.T)
oh = (d.argmin(axis=1)[:, None] == arange({k})).astype({dt})
out = (oh.T @ X) / oh.sum(axis=0)[:, None]"""

FULL = """d = (X*X).sum(axis=1)[:, None] - 2*(X @ C.T) + (C*C).sum(axis=1)
oh = (d.argmin(axis=1, keepdims=True) == arange({k})).astype({dt})
out = (oh.T @ X) / oh.sum(axis=0)[:, None]"""

ARGMAX = """oh = ((X @ C.T).argmax(axis=1)[:, None] == arange({k})).astype({dt})
out = (oh.T @ X) / oh.sum(axis=0)[:, None]"""

# Outputs that read only one of the reductions. The counts alone are
# not fused by fuse.Labels: the expression fuser folds a one-hot that
# only a sum reads into the sum's pass.
SUMS = """d = (C*C).sum(axis=1) - 2*(X @ C.T)
oh = (d.argmin(axis=1)[:, None] == arange({k})).astype({dt})
out = oh.T @ X"""

COUNTS = """d = (C*C).sum(axis=1) - 2*(X @ C.T)
oh = (d.argmin(axis=1)[:, None] == arange({k})).astype({dt})
out = oh.sum(axis=0)"""


def run(spec, X, C, k):
    env = {"X": X, "C": C, "arange": np.arange, "float32": np.float32, "float64": np.float64}
    exec(spec, env)
    return env["out"]


def case(name, spec, X, C, k, dt="float32"):
    import os
    os.makedirs(name, exist_ok=True)
    text = spec.format(k=k, dt=dt)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = run(text, X, C, k)
    np.save(os.path.join(name, "X.npy"), X)
    np.save(os.path.join(name, "C.npy"), C)
    np.save(os.path.join(name, "out.npy"), out)
    with open(os.path.join(name, "spec.txt"), "w") as f:
        f.write(text + "\n")


rng = np.random.default_rng(35)


def ints(shape, lo=-4, hi=5, dt=np.float32):
    return rng.integers(lo, hi, size=shape).astype(dt)


# Five centres, two of them equal: every point nearest to them is a tie,
# which the first takes, and the second is left empty (0/0: NaN).
X = ints((200, 8))
C = ints((5, 8))
C[3] = C[1]
case("k5", KMEANS, X, C, 5)
case("k1", KMEANS, ints((50, 3)), ints((1, 3)), 1)
# 64 centres for 300 points: many clusters receive nothing.
case("k64", KMEANS, ints((300, 4)), ints((64, 4), -8, 9), 64)
# Points halfway between two centres: ties the first wins.
X = np.array([[0, 0], [1, 0], [2, 0], [3, 0], [4, 0], [1, 1], [3, 3]], dtype=np.float32)
C = np.array([[0, 0], [2, 0], [4, 0]], dtype=np.float32)
case("ties", KMEANS, X, C, 3)
# NaN: a point with a NaN has NaN distances and goes to the first
# centre, whose mean is then NaN; a centre with a NaN draws every point.
X = ints((40, 4))
X[7, 2] = np.nan
case("nanx", KMEANS, X, ints((3, 4)), 3)
C = ints((4, 4))
C[2, 1] = np.nan
case("nanc", KMEANS, ints((40, 4)), C, 4)
case("full", FULL, ints((120, 6)), ints((7, 6)), 7)
case("argmax64", ARGMAX, ints((90, 5), dt=np.float64), ints((6, 5), dt=np.float64), 6, "float64")
case("counts", COUNTS, ints((60, 4)), ints((5, 4)), 5)
case("sums", SUMS, ints((60, 4)), ints((5, 4)), 5)
# A one-hot shorter than the centres: labels past it count nowhere.
case("short", KMEANS.replace("arange({k})", "arange(3)"), ints((80, 4)), ints((5, 4)), 5)
